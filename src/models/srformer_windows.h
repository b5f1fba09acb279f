#pragma once
// SRFormer's permuted windows (permuted self-attention, Zhou et al. 2023): the queries of a ws x ws
// window attend to ws/2 x ws/2 keys, each key the channels of a 2 x 2 pixel block of that window
// (channel-compressed first), so a window's bias and shift mask pair ws^2 query tokens with
// (ws/2)^2 key tokens. Pure functions of sizes, like swin_windows.h; srformer.cpp uses them.
#include <cstdint>

#include <ATen/core/Tensor.h>

namespace framelift::models {

// [ws^2, (ws/2)^2] int64: the row of the (ws - 1)^2-row bias table for query token q of the
// window and key token k of its permuted grid: the offset between q's 2 x 2 block and k,
// (qy/2 - ky + p - 1) * (2p - 1) + (qx/2 - kx + p - 1), p = ws/2. Upstream's
// aligned_relative_position_index.
at::Tensor permuted_window_index(int64_t ws);

// [nW, ws^2, (ws/2)^2] float32 of 0 and -100 for an h x w map rolled by -shift: a query and a
// key get -100 when the query's region of the unrolled map differs from the key's. Keys are
// banded on the half-size map at p = ws/2 and ceil(shift / 2) from its end (upstream slices at
// -shift // 2, Python's floor of the negative), which for an odd shift (window 22's 11) is not
// where the full map's bands put their 2 x 2 blocks: upstream's calculate_mask exactly.
at::Tensor permuted_shift_mask(int64_t h, int64_t w, int64_t ws, int64_t shift);

}  // namespace framelift::models
