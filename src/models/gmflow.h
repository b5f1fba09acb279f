#pragma once
// GMFlow (Xu et al., CVPR 2022) as GMFSS runs it: the two-scale refinement model (a CNN backbone
// whose trident convolution gives 1/8 and 1/4 scale features, a transformer of self and cross
// attention in shifted windows, global then local correlation softmax, flow propagation by
// self-attention, convex upsampling by 4), with GMFSS's fixed arguments: attention splits 2 and 8,
// correlation radii global and 4, propagation radii global and 1.
//
// Frames must be multiples of 32 (the 1/8 scale split in 2 windows, the 1/4 one in 8).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "weights/state_dict.h"

namespace framelift::models {

class WeightReader;

// The widths a GMFlow state dict holds (upstream: 64, 96, 128, features 128, 6 layers, FFN x4 of
// twice the width, upsampler 256, factor 4).
struct GmflowShape {
  int64_t dims[3] = {64, 96, 128};
  int64_t features = 128;
  int layers = 6;
  int64_t ffn = 1024;  // the FFN's hidden width: ffn_dim_expansion * 2 * features
  int64_t upsampler = 256;
  int64_t upsample_factor = 4;
};

// nullopt when "<prefix>backbone.conv1.weight" is absent; Error(Model) "<source>: GMFlow layout:
// ..." when the widths do not fit together.
std::optional<GmflowShape> detect_gmflow(const weights::StateDict& dict, const std::string& prefix, const std::string& source);

// Bilinear sampling of x [N, C, H, W] at each pixel plus flow [N, 2, H, W] (align_corners, zeros
// outside): GMFlow's geometry.flow_warp, which GMFSS's occlusion check uses too. fp32.
at::Tensor flow_warp(const at::Tensor& x, const at::Tensor& flow);

class Gmflow {
 public:
  Gmflow(WeightReader& r, const std::string& prefix, const GmflowShape& shape);
  ~Gmflow();
  Gmflow(Gmflow&&) noexcept;
  // The flow from a to b at a's size [N, 2, H, W], fp32, for a and b [N, 3, H, W] RGB in [0, 1].
  at::Tensor operator()(const at::Tensor& a, const at::Tensor& b) const;
  void to(c10::Device device, c10::ScalarType dtype);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace framelift::models
