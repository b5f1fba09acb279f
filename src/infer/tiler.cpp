#include "infer/tiler.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>
#include <string>
#include <vector>

#include "infer/device.h"
#include "infer/memory_budget.h"
#include "util/error.h"
#include "util/log.h"
#include "infer/fp32_islands.h"
#include "util/profiler.h"
#include "util/stop.h"
#include "util/str.h"
#include "util/tile_spans.h"

namespace framelift::infer {
namespace {

// Pads one side pair of a 4-D tensor by (before, after) along dim 2 or 3.
at::Tensor pad_edges(const at::Tensor& x, int64_t left, int64_t right, int64_t top, int64_t bottom) {
  if (left == 0 && right == 0 && top == 0 && bottom == 0) return x;
  // Reflect needs the pad to be smaller than the side; tiny sides fall back to replicate.
  bool reflect = left < x.size(3) && right < x.size(3) && top < x.size(2) && bottom < x.size(2);
  return reflect ? reflect_pad2d(x, {left, right, top, bottom}) : replicate_pad2d(x, {left, right, top, bottom});
}

at::Tensor run_whole(models::ImageModel& model, const at::Tensor& x) {
  const int m = std::max(1, model.info().size_multiple);
  const int s = model.info().scale;
  at::Tensor padded = pad_to_multiple(x, m);
  Section inference("inference", true);
  inference.add_work(double(padded.size(0)) * padded.size(2) * padded.size(3));
  at::Tensor y = model.forward(padded);
  if (profiling()) synchronize_device(y.device());
  return y.narrow(2, 0, x.size(2) * s).narrow(3, 0, x.size(3) * s);
}

// One tile: the rectangle whose output is kept, and its window (the rectangle plus real context).
struct Tile {
  int64_t y0, y1, x0, x1;      // kept
  int64_t cy0, cy1, cx0, cx1;  // fed to the model
  std::pair<int64_t, int64_t> window_size() const { return {cy1 - cy0, cx1 - cx0}; }
};

std::vector<Tile> tiles_of(int64_t h, int64_t w, int tile, int overlap, int align) {
  // Real context from the frame where it exists; run_whole pads only at the frame's edges.
  std::vector<Tile> tiles;
  const std::vector<TileSpan> columns = tile_spans(w, tile, overlap, align);
  for (const TileSpan& y : tile_spans(h, tile, overlap, align))
    for (const TileSpan& x : columns)
      tiles.push_back({y.begin, y.end, x.begin, x.end, y.window_begin, y.window_end, x.window_begin, x.window_end});
  return tiles;
}

at::Tensor run_tiles(models::ImageModel& model, const at::Tensor& x, int tile, int overlap, int batch) {
  const int64_t h = x.size(2), w = x.size(3), n = x.size(0);
  const int s = model.info().scale;
  // Only windows of one size stack into a batch: group them (all interior tiles, usually).
  std::map<std::pair<int64_t, int64_t>, std::vector<Tile>> by_size;
  const int align = std::lcm(std::max(1, model.info().size_multiple), std::max(1, model.info().tile_grid));
  for (const Tile& t : tiles_of(h, w, tile, overlap, align)) by_size[t.window_size()].push_back(t);
  at::Tensor out;
  for (const auto& [size, group] : by_size) {
    for (size_t first = 0; first < group.size(); first += size_t(batch)) {
      // A 4K frame on a CPU takes minutes; a stop must not wait for all its tiles.
      throw_if_stop_requested();
      const size_t end = std::min(group.size(), first + size_t(batch));
      std::vector<at::Tensor> windows;
      for (size_t i = first; i < end; ++i) {
        const Tile& t = group[i];
        windows.push_back(x.narrow(2, t.cy0, t.cy1 - t.cy0).narrow(3, t.cx0, t.cx1 - t.cx0));
      }
      at::Tensor y = run_whole(model, windows.size() == 1 ? windows[0] : at::cat(windows, 0));
      if (!out.defined()) out = at::empty({n, y.size(1), h * s, w * s}, y.options());
      for (size_t i = first; i < end; ++i) {
        const Tile& t = group[i];
        at::Tensor core = y.narrow(0, int64_t(i - first) * n, n)
                              .narrow(2, (t.y0 - t.cy0) * s, (t.y1 - t.y0) * s)
                              .narrow(3, (t.x0 - t.cx0) * s, (t.x1 - t.x0) * s);
        out.narrow(2, t.y0 * s, (t.y1 - t.y0) * s).narrow(3, t.x0 * s, (t.x1 - t.x0) * s).copy_(core);
      }
    }
  }
  return out;
}

}  // namespace

bool is_out_of_memory(const std::exception& e) {
  if (dynamic_cast<const OutOfMemory*>(&e)) return true;
  std::string what = e.what();
  return what.find("out of memory") != std::string::npos ||
         what.find("DefaultCPUAllocator: can't allocate memory") != std::string::npos ||
         what.find("DefaultCPUAllocator: not enough memory") != std::string::npos;
}

at::Tensor pad_to_multiple(const at::Tensor& x, int multiple) {
  if (multiple <= 1) return x;
  const int64_t ph = (multiple - x.size(2) % multiple) % multiple;
  const int64_t pw = (multiple - x.size(3) % multiple) % multiple;
  return pad_edges(x, 0, pw, 0, ph);
}

at::Tensor upscale_tiled(models::ImageModel& model, const at::Tensor& images, TileOptions options, int* used_tile) {
  if (images.dim() != 3 && images.dim() != 4)
    throw Error(ErrorKind::Internal, "upscale_tiled expects [3, H, W] or [N, 3, H, W] frames");
  const at::Tensor x = images.dim() == 3 ? images.unsqueeze(0) : images;
  const int overlap = options.overlap >= 0 ? options.overlap : model.info().tile_overlap;
  const int64_t side = std::max(x.size(2), x.size(3));
  // A tile at least as large as the frame is the whole frame, without the tiling's overlap cost.
  int tile = options.tile <= 0 || options.tile >= side || !model.info().tiled ? 0 : options.tile;
  int batch = std::max(1, options.batch);
  for (;;) {
    try {
      at::Tensor y = tile == 0 ? run_whole(model, x) : run_tiles(model, x, tile, overlap, batch);
      if (used_tile) *used_tile = tile;
      return images.dim() == 3 ? y.squeeze(0) : y;
    } catch (const std::exception& e) {
      if (!is_out_of_memory(e)) throw;
      if (tile != 0 && batch > 1) {
        release_cached_device_memory();
        batch /= 2;
        log::warn("out of memory; retrying the frame with ", batch, " tile(s) per call");
        continue;
      }
      if (!model.info().tiled) {
        std::string why = e.what();
        throw Error(ErrorKind::Resource, framelift::str("out of memory on a whole ", x.size(3), "x", x.size(2), " frame, and ",
                                                        model.info().arch, " runs whole frames only (",
                                                        why.substr(0, why.find('\n')), ")"));
      }
      const int current = tile == 0 ? static_cast<int>(side) : tile;
      if (current / 2 < kMinTile)
      {
        std::string why = e.what();
        throw Error(ErrorKind::Resource,
                    framelift::str("out of memory even with ", current, " px tiles (", why.substr(0, why.find('\n')), ")"));
      }
      release_cached_device_memory();
      tile = current / 2;
      log::warn("out of memory; retrying the frame with ", tile, " px tiles");
    }
  }
}

}  // namespace framelift::infer
