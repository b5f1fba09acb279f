#include "infer/tiler.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <string>

#include "infer/device.h"
#include "infer/memory_budget.h"
#include "util/error.h"
#include "util/log.h"
#include "util/profiler.h"
#include "util/stop.h"
#include "util/str.h"

namespace framelift::infer {
namespace {

// Pads one side pair of a 4-D tensor by (before, after) along dim 2 or 3.
at::Tensor pad_edges(const at::Tensor& x, int64_t left, int64_t right, int64_t top, int64_t bottom) {
  if (left == 0 && right == 0 && top == 0 && bottom == 0) return x;
  // Reflect needs the pad to be smaller than the side; tiny sides fall back to replicate.
  bool reflect = left < x.size(3) && right < x.size(3) && top < x.size(2) && bottom < x.size(2);
  return reflect ? at::reflection_pad2d(x, {left, right, top, bottom}) : at::replication_pad2d(x, {left, right, top, bottom});
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

at::Tensor run_tiles(models::ImageModel& model, const at::Tensor& x, int tile, int overlap) {
  const int64_t h = x.size(2), w = x.size(3);
  const int s = model.info().scale;
  at::Tensor out;
  for (int64_t y0 = 0; y0 < h; y0 += tile) {
    for (int64_t x0 = 0; x0 < w; x0 += tile) {
      // A 4K frame on a CPU takes minutes; a stop must not wait for all its tiles.
      throw_if_stop_requested();
      const int64_t y1 = std::min(h, y0 + tile), x1 = std::min(w, x0 + tile);
      // Real context from the frame where it exists...
      const int64_t cy0 = std::max<int64_t>(0, y0 - overlap), cy1 = std::min(h, y1 + overlap);
      const int64_t cx0 = std::max<int64_t>(0, x0 - overlap), cx1 = std::min(w, x1 + overlap);
      at::Tensor window = x.narrow(2, cy0, cy1 - cy0).narrow(3, cx0, cx1 - cx0);
      at::Tensor y = run_whole(model, window);
      if (!out.defined()) out = at::empty({x.size(0), y.size(1), h * s, w * s}, y.options());
      at::Tensor core = y.narrow(2, (y0 - cy0) * s, (y1 - y0) * s).narrow(3, (x0 - cx0) * s, (x1 - x0) * s);
      out.narrow(2, y0 * s, (y1 - y0) * s).narrow(3, x0 * s, (x1 - x0) * s).copy_(core);
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
  int tile = options.tile <= 0 || options.tile >= side ? 0 : options.tile;
  for (;;) {
    try {
      at::Tensor y = tile == 0 ? run_whole(model, x) : run_tiles(model, x, tile, overlap);
      if (used_tile) *used_tile = tile;
      return images.dim() == 3 ? y.squeeze(0) : y;
    } catch (const std::exception& e) {
      if (!is_out_of_memory(e)) throw;
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
