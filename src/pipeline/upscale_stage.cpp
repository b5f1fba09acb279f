// `upscale`: AI super-resolution with any model framelift can open (models/model_files.h), tiled
// to fit memory (infer/tiler.h). When the requested scale differs from the model's own, a final
// lanczos resize reaches it (an x4 model with scale=2 gives a sharper x2 than an x2 model would).
#include <ATen/ATen.h>

#include <cmath>

#include "infer/threads.h"
#include "infer/tiler.h"
#include "models/model_files.h"
#include "pipeline/stage_registry.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

constexpr const char* kDefaultModel = "realesr-animevideov3-x2";

class UpscaleStage : public Stage {
 public:
  explicit UpscaleStage(const StageOptions& o)
      : model_name_(o.get("model", kDefaultModel)), scale_(o.get_double("scale", 0)) {
    o.expect_only({"model", "scale", "tile", "tile_overlap", "threads"});
    tiles_.tile = o.get_int("tile", 0);
    tiles_.overlap = o.get_int("tile_overlap", -1);
    infer::configure_cpu_threads(o.get_int("threads", 0));
    model_ = models::open_model(model_name_);
    if (scale_ < 0) throw Error(ErrorKind::Usage, "stage upscale: scale must be positive");
  }

  std::string name() const override { return "upscale"; }

  media::VideoFormat configure(const media::VideoFormat& in) override {
    const int s = model_->info().scale;
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
    log::info("upscale: ", model_name_, " (", model_->info().arch, ", x", s, ") ", in.width, "x", in.height, " -> ",
              out.width, "x", out.height);
    return out;
  }

  void push(Frame frame, const Emit& emit) override {
    at::InferenceMode guard;
    frame.image = infer::upscale_tiled(*model_, frame.image, tiles_);
    if (final_resize_) {
      final_resize_->push(std::move(frame), emit);
    } else {
      emit(std::move(frame));
    }
  }

 private:
  std::string model_name_;
  double scale_;
  infer::TileOptions tiles_;
  std::unique_ptr<models::ImageModel> model_;
  std::unique_ptr<Stage> final_resize_;
};

}  // namespace

FRAMELIFT_REGISTER_STAGE(upscale, "AI super-resolution (Real-ESRGAN, Real-CUGAN, Compact, ESRGAN, ...)",
                         "model=NAME|FILE (default realesr-animevideov3-x2), scale=F, tile=N (0 auto), tile_overlap=N, threads=N",
                         [](const StageOptions& o) { return std::make_unique<UpscaleStage>(o); });

}  // namespace framelift::pipeline
