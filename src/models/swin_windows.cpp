#include "models/swin_windows.h"

#include <ATen/ATen.h>

namespace framelift::models {

at::Tensor window_partition(const at::Tensor& x, int64_t ws) {
  const int64_t b = x.size(0), h = x.size(1), w = x.size(2), c = x.size(3);
  return x.reshape({b, h / ws, ws, w / ws, ws, c}).permute({0, 1, 3, 2, 4, 5}).reshape({-1, ws * ws, c});
}

at::Tensor window_merge(const at::Tensor& windows, int64_t b, int64_t h, int64_t w, int64_t ws) {
  const int64_t c = windows.size(-1);
  return windows.reshape({b, h / ws, w / ws, ws, ws, c}).permute({0, 1, 3, 2, 4, 5}).reshape({b, h, w, c});
}

at::Tensor in_windows(const at::Tensor& x, int64_t ws, int64_t shift, const std::function<at::Tensor(const at::Tensor&)>& attend) {
  const at::Tensor rolled = shift ? at::roll(x, {-shift, -shift}, {1, 2}) : x;
  const at::Tensor y = window_merge(attend(window_partition(rolled, ws)), x.size(0), x.size(1), x.size(2), ws);
  return shift ? at::roll(y, {shift, shift}, {1, 2}) : y;
}

at::Tensor relative_position_index(int64_t ws) {
  const at::Tensor coords = at::arange(ws, at::kLong);
  const at::Tensor y = coords.repeat_interleave(ws), x = coords.repeat({ws});  // token i's (row, column)
  const at::Tensor dy = y.unsqueeze(1) - y.unsqueeze(0), dx = x.unsqueeze(1) - x.unsqueeze(0);
  return (dy + (ws - 1)) * (2 * ws - 1) + (dx + (ws - 1));
}

at::Tensor overlapping_window_index(int64_t ws, int64_t ows) {
  auto rows = [](int64_t n) { return at::arange(n, at::kLong).repeat_interleave(n); };
  auto columns = [](int64_t n) { return at::arange(n, at::kLong).repeat({n}); };
  const int64_t shift = ws - ows + 1, span = ws + ows - 1;
  return (rows(ows).unsqueeze(0) - rows(ws).unsqueeze(1) + shift) * span + (columns(ows).unsqueeze(0) - columns(ws).unsqueeze(1) + shift);
}

at::Tensor shifted_window_mask(int64_t h, int64_t w, int64_t ws, int64_t shift) {
  // Label each pixel of the rolled map by its 3 x 3 region: [0, h - ws), [h - ws, h - shift),
  // [h - shift, h) on each axis. Pixels of one window with different labels were not neighbours.
  auto bands = [&](int64_t n) {
    at::Tensor band = at::zeros({n}, at::kFloat);
    band.narrow(0, n - ws, ws - shift).fill_(1);
    band.narrow(0, n - shift, shift).fill_(2);
    return band;
  };
  const at::Tensor regions = (bands(h).unsqueeze(1) * 3 + bands(w).unsqueeze(0)).view({1, h, w, 1});
  const at::Tensor labels = window_partition(regions, ws).squeeze(-1);  // [nW, ws^2]
  const at::Tensor differ = labels.unsqueeze(1) != labels.unsqueeze(2);
  return at::zeros_like(differ, at::kFloat).masked_fill_(differ, -100.0);
}

const at::Tensor& ShiftMasks::for_map(const at::Tensor& tokens) {
  const std::pair<int64_t, int64_t> size{tokens.size(1), tokens.size(2)};
  auto it = masks_.find(size);
  if (it == masks_.end()) it = masks_.emplace(size, shifted_window_mask(size.first, size.second, ws_, shift_).to(tokens.options())).first;
  return it->second;
}

}  // namespace framelift::models
