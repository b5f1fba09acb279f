#include "infer/model_runner.h"

#include <ATen/ATen.h>

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
  if (!profiled_) {
    profile_ = probe_memory(*model_, options_.target);
    profiled_ = true;
  }
  const int64_t available = memory_for_inference(options_.target);
  // Memory for tile_batch tiles per call (whole frames are then planned as conservatively).
  int tile = plan_tile(profile_, available, height, width, options_.tiles.overlap, model_->info().size_multiple,
                       options_.batch * options_.tiles.batch);
  log::info("memory: ", model_->info().arch, " needs ~", profile_.bytes(height * width, options_.batch) >> 20,
            " MiB for whole ", width, "x", height, " frames (batch ", options_.batch, "), ", available >> 20,
            " MiB available -> ", tile == 0 ? std::string("whole frames") : framelift::str(tile, " px tiles"));
  planned_[key] = tile;
  return tile;
}

at::Tensor ModelRunner::run(const at::Tensor& frames) {
  at::InferenceMode guard;
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
