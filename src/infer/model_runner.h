#pragma once
// Runs an ImageModel on pipeline frames on a device: the one place that knows about devices,
// precision, batching, tile planning and the copies between host and device, so that every
// model-backed stage (upscale, denoise, user models) gets them the same way.
//
// Not thread-safe: one runner per stage.
#include <map>
#include <memory>
#include <utility>

#include <ATen/core/Tensor.h>

#include "infer/device.h"
#include "infer/tile_planner.h"
#include "infer/tiler.h"
#include "infer/image_model.h"

namespace framelift::infer {

struct RunnerOptions {
  ExecutionTarget target;
  TileOptions tiles;      // tile 0: planned from the memory available (tile_planner.h)
  int batch = 1;          // frames per forward pass
};

class ModelRunner {
 public:
  // Moves the model to the target's device and precision.
  ModelRunner(std::unique_ptr<models::ImageModel> model, RunnerOptions options);

  // frames: CPU float [N, C, H, W] in [0, 1] (N <= batch). Returns CPU float [N, C, H*s, W*s].
  at::Tensor run(const at::Tensor& frames);

  const models::ModelInfo& info() const { return model_->info(); }
  const RunnerOptions& options() const { return options_; }
  models::ImageModel& model() { return *model_; }
  // The tile that the last run used (0: whole frames).
  int tile_in_use() const { return last_tile_; }

 private:
  int tile_for(int64_t height, int64_t width);

  std::unique_ptr<models::ImageModel> model_;
  RunnerOptions options_;
  std::map<std::pair<int64_t, int64_t>, int> planned_;  // frame size -> tile (after any OOM halving)
  bool profiled_ = false;
  MemoryProfile profile_;
  int last_tile_ = 0;
};

}  // namespace framelift::infer
