#pragma once
// IFRNet (Kong et al., CVPR 2022; ltkong218/IFRNet) as a native interpolator: IFRNet_S, IFRNet
// and IFRNet_L from their state dicts (upstream's Model, keys with or without "module.").
//
// One encoder makes a four-level feature pyramid (1/2 .. 1/16) of each frame; four decoders go
// coarse to fine, each from the frames' features warped by the flow so far, refining both flows
// (to frame 0 and to frame 1) and the intermediate frame's own features; the last gives a
// blending mask and a residual. The timestep is one input plane of the coarsest decoder, so any
// t in (0, 1) runs the same network. The variants differ only in widths (S: 24/36/54/72, base:
// 32/48/72/96, L: 64/96/144/192 with a 7x7 first convolution), all read off the shapes.
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "arch/params.h"
#include "models/frame_interpolator.h"
#include "weights/state_dict.h"

namespace framelift::models {

// What the shapes say about a checkpoint.
struct IfrnetShape {
  std::array<int64_t, 4> encoder{};  // pyramid level 1..4 channels
  int64_t first_kernel = 3;          // the stride-2 convolution of level 1 (7 in L)
  std::array<int64_t, 4> decoder{};  // decoder 1..4 widths
  std::array<int64_t, 4> side{};     // decoder 1..4 ResBlock side channels
  std::string variant;               // "S", "base", "L", or "custom widths"
};

// nullopt when the keys are not IFRNet's; Error(Model) "<source>: IFRNet layout: ..." when they
// are and the shapes do not fit together.
std::optional<IfrnetShape> detect_ifrnet(const weights::StateDict& dict, const std::string& source);

// The planner's and `models info`'s view: c1..c4, k1, d1..d4, s1..s4.
arch::ArchParams ifrnet_arch_params(const IfrnetShape& shape);

// Throws Error(Model) when dict is not an IFRNet.
std::unique_ptr<FrameInterpolator> build_ifrnet(const weights::StateDict& dict, const std::string& source);

// One line of JSON for `framelift models info`: arch, variant, params, hyperparameters.
std::string describe_ifrnet(const IfrnetShape& shape, const weights::StateDict& dict);

}  // namespace framelift::models
