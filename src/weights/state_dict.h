#pragma once
// A model's weights as named tensors, whatever file format they came from (.pth, .safetensors,
// ncnn .bin). Names follow PyTorch's state-dict convention ("body.0.weight"). Tensors live on the
// CPU, contiguous, in the dtype stored in the file (callers convert).
#include <map>
#include <string>

#include <ATen/core/Tensor.h>

namespace framelift::weights {

using StateDict = std::map<std::string, at::Tensor>;

}  // namespace framelift::weights
