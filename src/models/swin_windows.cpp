#include "models/swin_windows.h"

#include <ATen/ATen.h>

namespace framelift::models {

at::Tensor window_partition(const at::Tensor& x, int64_t ws) { return window_partition(x, ws, ws); }

at::Tensor window_merge(const at::Tensor& windows, int64_t b, int64_t h, int64_t w, int64_t ws) {
  return window_merge(windows, b, h, w, ws, ws);
}

at::Tensor in_windows(const at::Tensor& x, int64_t ws, int64_t shift, const std::function<at::Tensor(const at::Tensor&)>& attend) {
  const at::Tensor rolled = shift ? at::roll(x, {-shift, -shift}, {1, 2}) : x;
  const at::Tensor y = window_merge(attend(window_partition(rolled, ws)), x.size(0), x.size(1), x.size(2), ws);
  return shift ? at::roll(y, {shift, shift}, {1, 2}) : y;
}

at::Tensor window_partition(const at::Tensor& x, int64_t wh, int64_t ww) {
  const int64_t b = x.size(0), h = x.size(1), w = x.size(2), c = x.size(3);
  return x.reshape({b, h / wh, wh, w / ww, ww, c}).permute({0, 1, 3, 2, 4, 5}).reshape({-1, wh * ww, c});
}

at::Tensor window_merge(const at::Tensor& windows, int64_t b, int64_t h, int64_t w, int64_t wh, int64_t ww) {
  const int64_t c = windows.size(-1);
  return windows.reshape({b, h / wh, w / ww, wh, ww, c}).permute({0, 1, 3, 2, 4, 5}).reshape({b, h, w, c});
}

at::Tensor relative_position_index(int64_t ws) { return relative_position_index(ws, ws); }

at::Tensor relative_position_index(int64_t wh, int64_t ww) {
  // token i's (row, column)
  const at::Tensor y = at::arange(wh, at::kLong).repeat_interleave(ww), x = at::arange(ww, at::kLong).repeat({wh});
  const at::Tensor dy = y.unsqueeze(1) - y.unsqueeze(0), dx = x.unsqueeze(1) - x.unsqueeze(0);
  return (dy + (wh - 1)) * (2 * ww - 1) + (dx + (ww - 1));
}

at::Tensor relative_offsets(int64_t wh, int64_t ww) {
  const at::Tensor dy = at::arange(1 - wh, wh, at::kFloat).repeat_interleave(2 * ww - 1);
  const at::Tensor dx = at::arange(1 - ww, ww, at::kFloat).repeat({2 * wh - 1});
  return at::stack({dy, dx}, 1);
}

at::Tensor overlapping_window_index(int64_t ws, int64_t ows) {
  auto rows = [](int64_t n) { return at::arange(n, at::kLong).repeat_interleave(n); };
  auto columns = [](int64_t n) { return at::arange(n, at::kLong).repeat({n}); };
  const int64_t shift = ws - ows + 1, span = ws + ows - 1;
  return (rows(ows).unsqueeze(0) - rows(ws).unsqueeze(1) + shift) * span + (columns(ows).unsqueeze(0) - columns(ws).unsqueeze(1) + shift);
}

at::Tensor shifted_window_mask(int64_t h, int64_t w, int64_t ws, int64_t shift) {
  return shifted_window_mask(h, w, ws, ws, shift, shift);
}

at::Tensor shifted_window_mask(int64_t h, int64_t w, int64_t wh, int64_t ww, int64_t sh, int64_t sw) {
  // Label each pixel of the rolled map by its 3 x 3 region: [0, n - window), [n - window, n - shift),
  // [n - shift, n) on each axis. Pixels of one window with different labels were not neighbours.
  auto bands = [&](int64_t n, int64_t window, int64_t shift) {
    at::Tensor band = at::zeros({n}, at::kFloat);
    band.narrow(0, n - window, window - shift).fill_(1);
    band.narrow(0, n - shift, shift).fill_(2);
    return band;
  };
  const at::Tensor regions = (bands(h, wh, sh).unsqueeze(1) * 3 + bands(w, ww, sw).unsqueeze(0)).view({1, h, w, 1});
  const at::Tensor labels = window_partition(regions, wh, ww).squeeze(-1);  // [nW, wh ww]
  const at::Tensor differ = labels.unsqueeze(1) != labels.unsqueeze(2);
  return at::zeros_like(differ, at::kFloat).masked_fill_(differ, -100.0);
}

ShiftMasks::ShiftMasks(int64_t wh, int64_t ww, int64_t sh, int64_t sw)
    : build_([=](int64_t h, int64_t w) { return shifted_window_mask(h, w, wh, ww, sh, sw); }) {}

const at::Tensor& ShiftMasks::for_map(const at::Tensor& tokens) {
  const std::pair<int64_t, int64_t> size{tokens.size(1), tokens.size(2)};
  auto it = masks_.find(size);
  if (it == masks_.end()) it = masks_.emplace(size, build_(size.first, size.second).to(tokens.options())).first;
  return it->second;
}

}  // namespace framelift::models
