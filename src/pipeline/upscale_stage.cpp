// `upscale`: AI super-resolution with any model framelift can open (models/model_files.h), run on
// the chosen device and precision, batched and tiled to fit memory (infer/model_runner.h). When
// the requested scale differs from the model's own, a final lanczos resize reaches it (an x4 model
// with scale=2 gives a sharper x2 than an x2 model would).
#include <ATen/ATen.h>

#include <cmath>
#include <vector>

#include "infer/memory_budget.h"
#include "infer/model_runner.h"
#include "infer/threads.h"
#include "models/model_files.h"
#include "pipeline/stage_registry.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

constexpr const char* kDefaultModel = "realesr-animevideov3-x2";

infer::RunnerOptions runner_options(const StageOptions& o) {
  infer::RunnerOptions r;
  r.target = infer::resolve_target(o.get("device", "auto"), o.get("precision", ""));
  r.tiles.tile = o.get_int("tile", 0);
  r.tiles.overlap = o.get_int("tile_overlap", -1);
  r.batch = o.get_int("batch", 1);
  if (r.tiles.tile < 0) throw Error(ErrorKind::Usage, "stage upscale: tile must be 0 (automatic) or a size in pixels");
  if (r.batch < 1) throw Error(ErrorKind::Usage, "stage upscale: batch must be at least 1");
  return r;
}

class UpscaleStage : public Stage {
 public:
  explicit UpscaleStage(const StageOptions& o) : model_name_(o.get("model", kDefaultModel)), scale_(o.get_double("scale", 0)) {
    o.expect_only({"model", "scale", "tile", "tile_overlap", "threads", "device", "precision", "batch", "max_memory"});
    if (scale_ < 0) throw Error(ErrorKind::Usage, "stage upscale: scale must be positive");
    infer::RunnerOptions options = runner_options(o);
    if (!options.target.is_cuda()) infer::configure_cpu_threads(o.get_int("threads", 0));
    if (o.has("max_memory")) {
      const int64_t bytes = infer::parse_byte_size(o.get("max_memory", ""));
      if (options.target.is_cuda()) infer::limit_device_memory(options.target, bytes);
      else infer::set_cpu_memory_budget(bytes);
    }
    runner_ = std::make_unique<infer::ModelRunner>(models::open_model(model_name_), options);
  }

  std::string name() const override { return "upscale"; }

  media::VideoFormat configure(const media::VideoFormat& in) override {
    const int s = runner_->info().scale;
    media::VideoFormat out = in;
    out.width = in.width * s;
    out.height = in.height * s;
    if (scale_ > 0 && std::abs(scale_ - s) > 1e-6) {
      // Reach the requested scale with a classical resize of the model's output.
      StageOptions resize_options("upscale", {{"w", str(2 * std::lround(in.width * scale_ / 2))},
                                              {"h", str(2 * std::lround(in.height * scale_ / 2))}});
      final_resize_ = make_stage({"resize", resize_options});
      out = final_resize_->configure(out);
    }
    log::info("upscale: ", model_name_, " (", runner_->info().arch, ", x", s, ") ", in.width, "x", in.height, " -> ",
              out.width, "x", out.height, " on ", runner_->options().target.describe(),
              runner_->options().batch > 1 ? str(", batch ", runner_->options().batch) : "");
    return out;
  }

  void push(Frame frame, const Emit& emit) override {
    pending_.push_back(std::move(frame));
    if (static_cast<int>(pending_.size()) >= runner_->options().batch) run_pending(emit);
  }

  void flush(const Emit& emit) override {
    run_pending(emit);
    if (final_resize_) final_resize_->flush(emit);
  }

 private:
  void run_pending(const Emit& emit) {
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

  std::string model_name_;
  double scale_;
  std::unique_ptr<infer::ModelRunner> runner_;
  std::unique_ptr<Stage> final_resize_;
  std::vector<Frame> pending_;
};

}  // namespace

FRAMELIFT_REGISTER_STAGE(upscale, "AI super-resolution (Real-ESRGAN, Real-CUGAN, Compact, ESRGAN, OmniSR, ...)",
                         "model=NAME|FILE (default realesr-animevideov3-x2), scale=F, device=auto|cpu|cuda[:N], "
                         "precision=fp32|fp16|bf16 (default fp16 on CUDA, fp32 on CPU), tile=N (0: from memory), "
                         "tile_overlap=N, batch=N (frames per pass), threads=N, max_memory=SIZE (e.g. 4G)",
                         [](const StageOptions& o) { return std::make_unique<UpscaleStage>(o); });

}  // namespace framelift::pipeline
