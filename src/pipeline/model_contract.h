#pragma once
// What a user's TorchScript module in the `model` stage gets and must return (the contract that
// docs/custom-models.md documents for users):
//
//   input   window frames, oldest first, in the declared value range and colour order:
//             layout=channels (default): [1, 3*window, H, W], frame k in channels 3k..3k+2;
//             layout=frames:             [1, window, 3, H, W].
//           H and W padded (reflect) up to a multiple of `multiple` when it is set.
//   mask    (only with mask= or box=) a second argument [1, 1, H, W]: 1 = fill, 0 = keep,
//           whatever the value range; padded like the frames.
//   output  [1, 3, H*scale, W*scale] in the same value range and colour order; the padding's
//           part is cropped off, values outside the range are clamped.
// Tensors are on the stage's device in its precision (float32 on the CPU).
#include <cstdint>
#include <string>

#include <ATen/core/Tensor.h>

#include "pipeline/option_values.h"

namespace framelift::pipeline {

enum class ValueRange { ZeroOne, ZeroTo255, MinusOneOne };  // range=0-1 | 0-255 | -1-1
enum class ColorOrder { Rgb, Bgr };                           // order=rgb | bgr
enum class WindowLayout { Channels, Frames };                 // layout=channels | frames

struct ModelContract {
  int window = 1;
  int scale = 1;
  int multiple = 1;
  ValueRange range = ValueRange::ZeroOne;
  ColorOrder order = ColorOrder::Rgb;
  WindowLayout layout = WindowLayout::Channels;

  // From the stage's options; throws Error(Usage) naming a bad value.
  static ModelContract from_options(const OptionValues& options);

  // frames: [window, 3, H, W], RGB in [0, 1], on the target -> the module's first argument.
  at::Tensor frames_to_module(const at::Tensor& frames) const;
  // mask: [1, 1, H, W] of 0/1 on the target -> the module's second argument.
  at::Tensor mask_to_module(const at::Tensor& mask) const;
  // The module's output for frames of height x width -> a pipeline image [3, H*scale, W*scale],
  // float RGB in [0, 1] on the CPU. Throws Error(Model, "<file>: ...") for another shape.
  at::Tensor image_from_module(const at::Tensor& output, int64_t height, int64_t width, const std::string& file) const;

  std::string describe() const;  // "window 3, scale 1, range 0-1, rgb, layout channels"
};

}  // namespace framelift::pipeline
