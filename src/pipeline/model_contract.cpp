#include "pipeline/model_contract.h"

#include <ATen/ATen.h>

#include <sstream>

#include "infer/tiler.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

template <class T>
T pick(const OptionValues& o, const std::string& key, const std::vector<std::pair<std::string, T>>& choices) {
  const std::string& text = o.text(key);
  std::string names;
  for (const auto& [name, value] : choices) {
    if (name == text) return value;
    names += (names.empty() ? "" : "|") + name;
  }
  throw Error(ErrorKind::Usage, str("stage model: ", key, "=", text, " is not one of ", names));
}

int64_t padded(int64_t size, int multiple) { return (size + multiple - 1) / multiple * multiple; }

}  // namespace

ModelContract ModelContract::from_options(const OptionValues& o) {
  ModelContract c;
  c.window = int(o.integer("window"));
  c.scale = int(o.integer("scale"));
  c.multiple = int(o.integer("multiple"));
  if (c.window < 1 || c.window % 2 == 0)
    throw Error(ErrorKind::Usage, str("stage model: window=", c.window, " must be odd (1, 3, 5, ...): it is centred on its frame"));
  if (c.scale < 1) throw Error(ErrorKind::Usage, "stage model: scale must be a whole number >= 1");
  if (c.multiple < 1) throw Error(ErrorKind::Usage, "stage model: multiple must be a whole number >= 1");
  c.range = pick<ValueRange>(o, "range", {{"0-1", ValueRange::ZeroOne}, {"0-255", ValueRange::ZeroTo255}, {"-1-1", ValueRange::MinusOneOne}});
  c.order = pick<ColorOrder>(o, "order", {{"rgb", ColorOrder::Rgb}, {"bgr", ColorOrder::Bgr}});
  c.layout = pick<WindowLayout>(o, "layout", {{"channels", WindowLayout::Channels}, {"frames", WindowLayout::Frames}});
  return c;
}

at::Tensor ModelContract::frames_to_module(const at::Tensor& frames) const {
  at::Tensor x = frames;  // [window, 3, H, W]
  if (order == ColorOrder::Bgr) x = x.flip({1});
  if (range == ValueRange::ZeroTo255) x = x * 255.0;
  else if (range == ValueRange::MinusOneOne) x = x * 2.0 - 1.0;
  const int64_t h = x.size(2), w = x.size(3);
  x = infer::pad_to_multiple(x.reshape({1, 3 * window, h, w}), multiple);
  if (layout == WindowLayout::Frames) x = x.view({1, window, 3, x.size(2), x.size(3)});
  return x.contiguous();
}

at::Tensor ModelContract::mask_to_module(const at::Tensor& mask) const {
  return infer::pad_to_multiple(mask, multiple).contiguous();
}

at::Tensor ModelContract::image_from_module(const at::Tensor& output, int64_t height, int64_t width,
                                            const std::string& file) const {
  const int64_t h = padded(height, multiple) * scale, w = padded(width, multiple) * scale;
  if (output.dim() != 4 || output.size(0) != 1 || output.size(1) != 3 || output.size(2) != h || output.size(3) != w) {
    std::ostringstream shape;
    shape << output.sizes();
    throw Error(ErrorKind::Model, str(file, ": the module returned a tensor of shape ", shape.str(), ", expected [1, 3, ", h,
                                      ", ", w, "] (", padded(width, multiple), "x", padded(height, multiple),
                                      " input, scale=", scale, ")"));
  }
  at::Tensor y = output[0].narrow(1, 0, height * scale).narrow(2, 0, width * scale).to(at::kFloat);
  if (range == ValueRange::ZeroTo255) y = y / 255.0;
  else if (range == ValueRange::MinusOneOne) y = (y + 1.0) * 0.5;
  if (order == ColorOrder::Bgr) y = y.flip({0});
  return y.clamp(0, 1).contiguous();
}

std::string ModelContract::describe() const {
  return str("window ", window, ", scale ", scale, ", range ",
             range == ValueRange::ZeroOne ? "0-1" : range == ValueRange::ZeroTo255 ? "0-255" : "-1-1", ", ",
             order == ColorOrder::Rgb ? "rgb" : "bgr", window > 1 ? (layout == WindowLayout::Channels ? ", layout channels" : ", layout frames") : "",
             multiple > 1 ? str(", multiple ", multiple) : "");
}

}  // namespace framelift::pipeline
