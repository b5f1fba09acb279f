#include "infer/model_runner.h"

#include <ATen/ATen.h>

#include "infer/winograd_conv.h"
#include "util/log.h"
#include "util/profiler.h"

namespace framelift::infer {

ModelRunner::ModelRunner(std::unique_ptr<models::ImageModel> model, RunnerOptions options)
    : model_(std::move(model)), options_(options) {
  options_.batch = std::max(1, options_.batch);
  if (options_.tiles.overlap < 0) options_.tiles.overlap = model_->info().tile_overlap;
  // A default tile is the planner's to drop quietly; one the user asked for deserves a word.
  if (!model_->info().tiled && options_.tiles.tile > 0)
    log::warn(model_->info().arch, ": runs whole frames only (its normalisation takes statistics of the whole frame); ",
              "ignoring the ", options_.tiles.tile, " px tile");
  prepare_device(options_.target);
  model_->to(options_.target.device, options_.target.dtype);
}

int ModelRunner::tile_for(int64_t height, int64_t width) {
  if (!model_->info().tiled) return 0;
  if (options_.tiles.tile > 0) return options_.tiles.tile;
  auto key = std::make_pair(height, width);
  if (auto it = planned_.find(key); it != planned_.end()) return it->second;
  // No tile is smaller than kMinTile, so a frame that small runs whole whatever the memory says.
  if (std::max(height, width) <= kMinTile) {
    log::info("memory: ", model_->info().arch, ": ", width, "x", height, " frames run whole (no tile is smaller than ", kMinTile, " px)");
    return planned_[key] = 0;
  }
  const int64_t available = memory_for_inference(options_.target);
  // Memory for tile_batch tiles per call (whole frames are then planned as conservatively).
  const int batch = options_.batch * options_.tiles.batch, m = std::max(1, model_->info().size_multiple);
  auto plan = [&] { return plan_tile(profile_, available, height, width, options_.tiles.overlap, m, batch); };
  if (!profiled_) {
    const int64_t pixels = (height + m - 1) / m * m * ((width + m - 1) / m * m);
    profile_ = probe_memory(*model_, options_.target, {pixels, available, batch});
    profiled_ = true;
  }
  int tile = plan();
  // The bound from the small probe says only that a frame fits; one that does not is planned on
  // the full measurement.
  if (tile != 0 && profile_.pessimistic) {
    profile_ = probe_memory(*model_, options_.target);
    tile = plan();
  }
  log::info("memory: ", model_->info().arch, " needs ~", profile_.bytes(height * width, options_.batch) >> 20,
            " MiB for whole ", width, "x", height, " frames (batch ", options_.batch, "), ", available >> 20,
            " MiB available -> ", tile == 0 ? std::string("whole frames") : framelift::str(tile, " px tiles"));
  planned_[key] = tile;
  return tile;
}

at::Tensor ModelRunner::run(const at::Tensor& frames) {
  at::InferenceMode guard;
  const WinogradScope winograd(options_.target.winograd);
  const int64_t h = frames.size(2), w = frames.size(3);
  at::Tensor x;
  {
    Section upload("upload");
    x = to_target(frames, options_.target);
    if (profiling()) synchronize_device(x.device());
  }
  TileOptions tiles = options_.tiles;
  tiles.tile = tile_for(h, w);
  at::Tensor y = upscale_tiled(*model_, x, tiles, &last_tile_);
  // An OOM halving is remembered, so the next frame does not fail the same way first.
  if (options_.tiles.tile <= 0) planned_[{h, w}] = last_tile_;
  else options_.tiles.tile = last_tile_ == 0 ? options_.tiles.tile : last_tile_;
  // The result stays on the device (pipeline::Stage::device): the next GPU stage or the GPU colour
  // conversion takes it from there.
  Section download("download");
  return y.to(at::kFloat);
}

}  // namespace framelift::infer
