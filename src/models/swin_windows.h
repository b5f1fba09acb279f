#pragma once
// The window machinery of Swin-style transformers (SwinIR, HAT, DAT; SRFormer, DRCT later):
// partitions of a channels-last feature map into square (or rectangular) windows of tokens, the relative offset
// of every token pair inside a window, and the mask that keeps a shifted window's tokens from
// attending across the image's wrapped edges. Pure functions of sizes; callers cache the mask
// per input size, since every shifted block of a network shares it.
#include <cstdint>
#include <functional>
#include <map>
#include <utility>

#include <ATen/core/Tensor.h>

namespace framelift::models {

// [B, H, W, C] -> [B * (H/ws) * (W/ws), ws * ws, C], windows in row-major order. H and W must be
// multiples of ws.
at::Tensor window_partition(const at::Tensor& x, int64_t ws);
// The inverse: [B * nW, ws * ws, C] -> [b, h, w, C].
at::Tensor window_merge(const at::Tensor& windows, int64_t b, int64_t h, int64_t w, int64_t ws);
// The same for wh x ww rectangles (DAT's split windows): [B * nW, wh * ww, C].
at::Tensor window_partition(const at::Tensor& x, int64_t wh, int64_t ww);
at::Tensor window_merge(const at::Tensor& windows, int64_t b, int64_t h, int64_t w, int64_t wh, int64_t ww);

// A (shifted) window attention's frame around `attend` ([B * nW, ws * ws, C] -> the same): x
// [B, H, W, C] rolled by -shift on both axes (0: none), partitioned, attended, merged, rolled back.
at::Tensor in_windows(const at::Tensor& x, int64_t ws, int64_t shift, const std::function<at::Tensor(const at::Tensor&)>& attend);

// [ws^2, ws^2] int64: for tokens i and j of a window, the row of the (2 ws - 1)^2-row bias table
// that holds their offset (dy + ws - 1) * (2 ws - 1) + (dx + ws - 1).
at::Tensor relative_position_index(int64_t ws);
// For a wh x ww rectangle: (dy + wh - 1) * (2 ww - 1) + (dx + ww - 1), [wh ww, wh ww].
at::Tensor relative_position_index(int64_t wh, int64_t ww);
// [(2 wh - 1) (2 ww - 1), 2] float32: the offset (dy, dx) of each row of that table, the input of
// a dynamic position bias (DAT's rpe_biases, after CrossFormer).
at::Tensor relative_offsets(int64_t wh, int64_t ww);

// [ws^2, ows^2] int64, HAT's overlapping cross-attention: for query token i of a ws x ws window
// and key token j of the ows x ows window around it, (ky - qy + s) * (ws + ows - 1) + (kx - qx + s)
// with s = ws - ows + 1, exactly as upstream's calculate_rpi_oca, negative values included.
at::Tensor overlapping_window_index(int64_t ws, int64_t ows);

// [nW, ws^2, ws^2] float32 of 0 and -100, for an h x w map rolled by -shift on both axes: tokens
// that came from different regions of the unrolled map (across its right or bottom edge) get
// -100, so that softmax leaves them out. What Swin calls calculate_mask.
at::Tensor shifted_window_mask(int64_t h, int64_t w, int64_t ws, int64_t shift);
// For wh x ww windows of a map rolled by -sh rows and -sw columns.
at::Tensor shifted_window_mask(int64_t h, int64_t w, int64_t wh, int64_t ww, int64_t sh, int64_t sw);

// shifted_window_mask (or another mask of the map's size, as SRFormer's permuted one) per token
// map size, in the map's dtype and device: built at the first map of a size, shared by every
// shifted layer. Not thread-safe, as the models that hold it.
class ShiftMasks {
 public:
  using Builder = std::function<at::Tensor(int64_t h, int64_t w)>;
  ShiftMasks(int64_t ws, int64_t shift) : ShiftMasks(ws, ws, shift, shift) {}
  ShiftMasks(int64_t wh, int64_t ww, int64_t sh, int64_t sw);
  explicit ShiftMasks(Builder build) : build_(std::move(build)) {}
  const at::Tensor& for_map(const at::Tensor& tokens);  // tokens [B, H, W, C]
  void clear() { masks_.clear(); }                      // after a change of device or precision

 private:
  Builder build_;
  std::map<std::pair<int64_t, int64_t>, at::Tensor> masks_;
};

}  // namespace framelift::models
