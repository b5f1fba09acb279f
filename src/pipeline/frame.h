#pragma once
// A frame between stages: the image in framelift's frame layout (see infer/frame_tensor.h:
// float32 [3, H, W], RGB, [0, 1]) and its presentation time in the pipeline's time base.
#include <cstdint>

#include <ATen/core/Tensor.h>

namespace framelift::pipeline {

struct Frame {
  at::Tensor image;
  int64_t pts = 0;
};

}  // namespace framelift::pipeline
