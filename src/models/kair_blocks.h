#pragma once
// The residual blocks of Kai Zhang's KAIR U-Nets (DRUNet, FBCNN): x + conv(relu(conv(x))), 3x3
// convolutions at one width, stacked in nn.Sequential runs whose indices the state dict keeps
// ("m_down1.0.res.0.weight" ... "m_down1.3.res.2.weight", then the stride-2 convolution at 4).
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "models/native_model.h"

namespace framelift::models {

struct ResBlock {
  Conv2d first, second;
  at::Tensor operator()(const at::Tensor& x) const;
};

// Blocks "<prefix>.<first_index + i>.res.{0,2}" for i < count, `channels` wide.
std::vector<ResBlock> read_res_blocks(WeightReader& r, const std::string& prefix, int first_index, int count,
                                      int64_t channels, bool bias);

at::Tensor run_blocks(const std::vector<ResBlock>& blocks, at::Tensor x);
void visit(std::vector<ResBlock>& blocks, const TensorVisitor& f);

}  // namespace framelift::models
