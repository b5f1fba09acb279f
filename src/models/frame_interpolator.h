#pragma once
// The interface of frame interpolation networks (RIFE through its ncnn graph or natively, IFRNet):
// the picture at time t between two frames.
//
// Tensor contract: a and b are [N, 3, H, W] RGB in [0, 1] on the model's device; any H and W (the
// model pads to its multiple and crops back). t in (0, 1): 0 is a, 1 is b. Not thread-safe.
#include <memory>
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

namespace framelift::models {

struct InterpolatorInfo {
  std::string arch;       // "rife-ncnn", "rife", "ifrnet"
  std::string version;    // "4.6"; IFRNet's variant: "S", "base", "L"
  int size_multiple = 32; // input sides are padded to this (at flow scale 1)
};

class FrameInterpolator {
 public:
  virtual ~FrameInterpolator() = default;
  virtual const InterpolatorInfo& info() const = 0;
  // scale: RIFE's flow scale (1 for up to 1080p, 0.5 for 4K), IFRNet's scale_factor (the frames
  // shrunk before the network; 16 / scale must be whole); implementations that cannot change it
  // throw Error(Usage) for anything but 1.
  virtual at::Tensor interpolate(const at::Tensor& a, const at::Tensor& b, double t, double scale = 1.0) = 0;
  virtual void to(c10::Device device, c10::ScalarType dtype) = 0;
};

// A name ("rife-v4.6", "rife"), an ncnn flownet.param (with flownet.bin next to it), a folder
// holding them, a Practical-RIFE flownet.pkl / .pth state dict, or an IFRNet (S, base, L) .pth,
// told apart by its keys (models/ifrnet.h). Throws Error(Model).
std::unique_ptr<FrameInterpolator> open_interpolator(const std::string& name_or_path);

}  // namespace framelift::models
