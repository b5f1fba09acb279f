#include "pipeline/image_model_stage.h"

#include <ATen/ATen.h>

#include <cmath>

#include "pipeline/model_run_options.h"
#include "pipeline/stage_registry.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

infer::RunnerOptions runner_options(const std::string& stage, const OptionValues& o, const std::string& arch) {
  infer::RunnerOptions r;
  r.target = resolve_stage_target(stage, o, arch);
  r.tiles.tile = int(o.integer("tile"));
  if (o.has("tile_overlap")) r.tiles.overlap = int(o.integer("tile_overlap"));  // else the model's
  r.batch = int(o.integer("batch"));
  r.tiles.batch = int(o.integer("tile_batch"));
  // Ranges were checked against the stage's schema (model_run_options) before it was built.
  return r;
}

}  // namespace

ImageModelStage::ImageModelStage(std::string stage, std::string label, std::unique_ptr<models::ImageModel> model,
                                 const OptionValues& o, double scale)
    : stage_(std::move(stage)), label_(std::move(label)), scale_(scale) {
  if (scale_ < 0) throw Error(ErrorKind::Usage, str("stage ", stage_, ": scale must be positive"));
  infer::RunnerOptions options = runner_options(stage_, o, model->info().arch);
  // threads= and max_memory= are process-wide: made once by whoever runs the pipeline
  // (process_settings.h), not here.
  runner_ = std::make_unique<infer::ModelRunner>(std::move(model), options);
}

media::VideoFormat ImageModelStage::configure(const media::VideoFormat& in) {
  const int s = runner_->info().scale;
  media::VideoFormat out = in;
  out.width = in.width * s;
  out.height = in.height * s;
  if (scale_ > 0 && std::abs(scale_ - s) > 1e-6) {
    // Reach the requested scale with a classical resize of the model's output: lanczos up,
    // area down (it averages what the model made instead of dropping it).
    StageOptions resize_options(stage_, {{"w", str(2 * std::lround(in.width * scale_ / 2))},
                                         {"h", str(2 * std::lround(in.height * scale_ / 2))},
                                         {"algo", scale_ < s ? "area" : "lanczos"}});
    final_resize_ = make_stage({"resize", resize_options});
    out = final_resize_->configure(out);
  }
  log::info(stage_, ": ", label_, " (", runner_->info().arch, ", x", s, ") ", in.width, "x", in.height, " -> ", out.width,
            "x", out.height, " on ", runner_->options().target.describe_with_reason(),
            runner_->options().batch > 1 ? str(", batch ", runner_->options().batch) : "");
  return out;
}

void ImageModelStage::push(Frame frame, const Emit& emit) {
  pending_.push_back(std::move(frame));
  if (static_cast<int>(pending_.size()) >= runner_->options().batch) run_pending(emit);
}

void ImageModelStage::flush(const Emit& emit) {
  run_pending(emit);
  if (final_resize_) final_resize_->flush(emit);
}

void ImageModelStage::reset() {
  pending_.clear();
  final_resize_.reset();  // configure() makes it for the next stretch's size
}

c10::Device ImageModelStage::device() const { return runner_ ? runner_->options().target.device : c10::kCPU; }

void ImageModelStage::run_pending(const Emit& emit) {
  if (pending_.empty()) return;
  std::vector<at::Tensor> images;
  for (const Frame& f : pending_) images.push_back(f.image);
  at::Tensor out = runner_->run(at::stack(images));
  for (size_t i = 0; i < pending_.size(); ++i) {
    Frame f{out[static_cast<int64_t>(i)], pending_[i].pts};
    if (final_resize_) final_resize_->push(std::move(f), emit);
    else emit(std::move(f));
  }
  pending_.clear();
}

}  // namespace framelift::pipeline
