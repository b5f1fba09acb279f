#pragma once
// CUDA graphs for frame interpolation (`interpolate:cuda_graphs=1`).
//
// RIFE is hundreds of small kernels per frame pair; on a fast GPU the host's time to launch them
// rivals their run time. A CUDA graph records one call's launches and replays them with a single
// launch. The wrapper records one graph per (input shape, dtype, t, flow scale) on first use (after
// an eager warm-up, so cuDNN's autotuning is not captured), copies each new pair into the graph's
// fixed input tensors and replays. Anything that cannot be captured (a host sync inside the model,
// a libtorch without CUDA graphs) makes it fall back to eager calls for good, with one warning.
//
// Opt-in and unmeasured: written and compile-checked without a GPU (docs/gpu.md). On a CPU target,
// or in a build without CUDA, wrap_in_cuda_graphs returns the model unchanged.
#include <memory>

#include "models/frame_interpolator.h"

namespace framelift::models {

std::unique_ptr<FrameInterpolator> wrap_in_cuda_graphs(std::unique_ptr<FrameInterpolator> model, c10::Device device);

}  // namespace framelift::models
