#include "models/srformer_windows.h"

#include <ATen/ATen.h>

#include "models/swin_windows.h"

namespace framelift::models {

at::Tensor permuted_window_index(int64_t ws) {
  const int64_t p = ws / 2;
  // Query token r * ws + c sits in block (r/2, c/2) of the permuted grid: its bias rows are that
  // block's rows of the plain p x p relative index.
  const at::Tensor half = at::arange(ws, at::kLong).div(2, "floor");
  const at::Tensor block = (half.unsqueeze(1) * p + half.unsqueeze(0)).reshape({-1});
  return relative_position_index(p).index_select(0, block);
}

at::Tensor permuted_shift_mask(int64_t h, int64_t w, int64_t ws, int64_t shift) {
  // Region labels 0, 1, 2 per axis: [0, n - window), [n - window, n - tail), [n - tail, n).
  auto bands = [](int64_t n, int64_t window, int64_t tail) {
    at::Tensor band = at::zeros({n}, at::kFloat);
    band.narrow(0, n - window, window - tail).fill_(1);
    band.narrow(0, n - tail, tail).fill_(2);
    return band;
  };
  auto labels = [&](int64_t mh, int64_t mw, int64_t window, int64_t tail) {
    const at::Tensor regions = (bands(mh, window, tail).unsqueeze(1) * 3 + bands(mw, window, tail).unsqueeze(0)).view({1, mh, mw, 1});
    return window_partition(regions, window).squeeze(-1);  // [nW, window^2]
  };
  const int64_t p = ws / 2, tail = (shift + 1) / 2;
  const at::Tensor queries = labels(h, w, ws, shift), keys = labels(h / 2, w / 2, p, tail);
  const at::Tensor differ = queries.unsqueeze(2) != keys.unsqueeze(1);
  return at::zeros_like(differ, at::kFloat).masked_fill_(differ, -100.0);
}

}  // namespace framelift::models
