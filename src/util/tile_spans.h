#pragma once
// How the tiler cuts one axis of a frame, shared by the tiler (infer/tiler.cpp) and the planner
// that counts its pixels without running it (plan/planner.cpp), so the two cannot drift apart.
//
// The axis is cut into n = ceil(side / tile) spans whose lengths differ by at most one pixel (so at
// least half a tile each), not into tile-long spans and a remainder: a 140 px side in 64 px tiles
// is 47 + 47 + 46, not 64 + 64 + 12. A remainder span of a few pixels made a window of a few pixels
// plus its context, too small for networks that reflect-pad their input (waifu2x CUNet pads 28 px
// and refused a 28x24 window of a 140x72 frame). Each span's window adds up to `overlap` pixels of
// real context on each side, clipped at the frame's edges.
#include <cstdint>
#include <vector>

namespace framelift {

struct TileSpan {
  int64_t begin, end;                // the pixels whose output is kept
  int64_t window_begin, window_end;  // the pixels fed to the network
};

// With align > 1 (a network's size multiple: its windows, or its downsampling steps) every
// boundary between spans falls on a multiple of align, the nearest one, and the context is
// rounded up to a multiple of it, so every window starts on the frame's grid: a window-attention
// network then partitions a tile's window exactly as it partitions the whole frame, and only the
// missing far context differs. Spans then differ in length by up to align pixels.
//
// One span covering the axis when tile <= 0 or tile >= side. Pure; thread-safe.
std::vector<TileSpan> tile_spans(int64_t side, int64_t tile, int64_t overlap, int64_t align = 1);

}  // namespace framelift
