#pragma once
// The interface every frame-to-frame network implements (native architectures in src/models/,
// the ncnn graph interpreter, user TorchScript modules). It lives in infer/, below models/: the
// runner and the tiler (here) run networks that models/ implements, and neither folder includes
// the other's files for it. The namespace stays models:: (what the type is, not where it sits).
//
// Tensor contract: input and output are float tensors [N, C, H, W], RGB channel order, values in
// [0, 1] (the layout frames have in the pipeline, see docs/frame-layout.md). H and W of the input
// are multiples of info().size_multiple; callers pad (reflect) and crop. The output is
// [N, C, H*scale, W*scale]. forward() is not thread-safe; use one instance per thread.
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

namespace framelift::models {

struct ModelInfo {
  std::string arch;        // "srvgg_compact", "rrdbnet", "realcugan", "ncnn_graph", ...
  int scale = 1;           // output size / input size
  int in_channels = 3;
  int out_channels = 3;
  int size_multiple = 1;   // input H and W must be multiples of this
  int tile_overlap = 16;   // context (input pixels) a tile needs on each side for seamless blending
  // false: the network takes statistics over the whole frame (RealPLKSR's GroupNorm), so a tile
  // would be normalised by its own; the tiler then runs whole frames whatever tile is asked for.
  bool tiled = true;
  // Tile windows start on multiples of this and of size_multiple (arch::ArchCost::tile_grid): a
  // U-Net that pads itself still needs its tiles on the whole frame's downsampling grid.
  int tile_grid = 1;
};

class ImageModel {
 public:
  virtual ~ImageModel() = default;
  virtual const ModelInfo& info() const = 0;
  virtual at::Tensor forward(const at::Tensor& input) = 0;
  // Moves weights to a device and precision; default is CPU fp32.
  virtual void to(c10::Device device, c10::ScalarType dtype) = 0;
};

}  // namespace framelift::models
