// `model`: a user's own TorchScript module (colorization, style transfer, inpainting, temporal
// denoising, ...) run on every frame: docs/custom-models.md is the user's side of the contract,
// pipeline/model_contract.h the tensors, pipeline/temporal_window.h the window of neighbouring
// frames, pipeline/frame_mask.h the mask.
//
// One window per forward pass, whole frames: tiling a temporal, masked module would need the
// module's receptive field, which a user's module does not declare.
#include <ATen/ATen.h>

#include <optional>

#include "infer/device.h"
#include "models/torchscript_module.h"
#include "pipeline/frame_mask.h"
#include "pipeline/model_contract.h"
#include "pipeline/model_run_options.h"
#include "pipeline/stage_registry.h"
#include "pipeline/temporal_window.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

class ModelStage : public Stage {
 public:
  explicit ModelStage(const OptionValues& o)
      : file_(o.has("file") ? o.text("file") : ""), contract_(ModelContract::from_options(o)), window_(contract_.window) {
    if (file_.empty()) throw Error(ErrorKind::Usage, "stage model: file=PATH.pt (a TorchScript module) is required");
    if (o.integer("tile") != 0)
      throw Error(ErrorKind::Usage, "stage model: tile is not supported (user modules run on whole frames); use tile=0");
    if (o.has("mask") || o.has("box")) {
      std::optional<MaskBox> box;
      if (o.has("box")) box = parse_mask_box(o.text("box"));
      mask_.emplace(o.has("mask") ? o.text("mask") : "", box);  // no mask file: the box alone
    }
    target_ = resolve_stage_target("model", o, "");
    infer::prepare_device(target_);
    module_ = std::make_unique<models::TorchScriptModule>(file_, target_);
    // A module that cannot take what the stage passes fails here, not on the first frame.
    const int given = mask_ ? 2 : 1;
    if (given < module_->min_inputs() || (module_->max_inputs() >= 0 && given > module_->max_inputs()))
      throw Error(ErrorKind::Model, str(file_, ": forward takes ", module_->min_inputs(),
                                        module_->max_inputs() != module_->min_inputs() ? str("-", module_->max_inputs()) : "",
                                        " input(s), the stage gives ", given, mask_ ? " (frames, mask)" : " (frames)",
                                        mask_ ? "" : "; an inpainting module needs mask= or box="));
  }

  std::string name() const override { return "model"; }
  // The neighbours of a window: a job's segment gets them, so its first and last frames see the
  // same window as in one pass.
  int context_frames() const override { return contract_.window / 2; }
  c10::Device device() const override { return target_.device; }

  media::VideoFormat configure(const media::VideoFormat& in) override {
    time_base_ = in.time_base;
    start_pts_ = in.start_pts;
    media::VideoFormat out = in;
    out.width = in.width * contract_.scale;
    out.height = in.height * contract_.scale;
    log::info("model: ", file_, " (", contract_.describe(), mask_ ? ", with mask" : "", ") ", in.width, "x", in.height,
              " -> ", out.width, "x", out.height, " on ", target_.describe_with_reason());
    return out;
  }

  void push(Frame frame, const Emit& emit) override {
    if (start_pts_ == AV_NOPTS_VALUE) start_pts_ = frame.pts;
    for (TemporalWindow::Window& w : window_.push(std::move(frame))) run(w, emit);
  }

  void flush(const Emit& emit) override {
    for (TemporalWindow::Window& w : window_.flush()) run(w, emit);
  }

  void reset() override {
    window_.reset();
    start_pts_ = AV_NOPTS_VALUE;
  }

 private:
  void run(const TemporalWindow::Window& w, const Emit& emit) {
    const int64_t h = w.frames.front().size(1), width = w.frames.front().size(2);
    std::vector<at::Tensor> inputs;
    {
      at::InferenceMode guard;
      inputs.push_back(contract_.frames_to_module(infer::to_target(at::stack(w.frames), target_)));
      if (mask_) {
        const double seconds = double(w.pts - start_pts_) * time_base_.num / time_base_.den;
        inputs.push_back(contract_.mask_to_module(infer::to_target(mask_->mask_for(seconds, h, width), target_)));
      }
    }
    at::Tensor out = module_->forward(inputs);
    emit(Frame{contract_.image_from_module(out, h, width, file_), w.pts});
  }

  std::string file_;
  ModelContract contract_;
  TemporalWindow window_;
  std::optional<FrameMask> mask_;
  infer::ExecutionTarget target_;
  std::unique_ptr<models::TorchScriptModule> module_;
  AVRational time_base_{1, 25};
  int64_t start_pts_ = AV_NOPTS_VALUE;
};

OptionSchema model_stage_options() {
  OptionSchema run = model_run_options();
  std::erase_if(run, [](const OptionSpec& s) {
    return s.name != "device" && s.name != "precision" && s.name != "threads" && s.name != "tile";
  });
  return combine({with_role(text_option("file", "", "PATH.pt, required; see docs/custom-models.md"), OptionRole::File),
                  integer_option("window", "1", 1, 31, "odd; frames centred on the output"),
                  integer_option("scale", "1", 1, 16, ""),
                  choice_option("range", "0-1", {"0-1", "0-255", "-1-1"}, ""),
                  choice_option("order", "rgb", {"rgb", "bgr"}, ""),
                  choice_option("layout", "channels", {"channels", "frames"}, "[1,3N,H,W] or [1,N,3,H,W]"),
                  integer_option("multiple", "1", 1, 1024, "pad H and W to a multiple"),
                  with_role(text_option("mask", "", "IMAGE|VIDEO; second input [1,1,H,W], 1 = fill"), OptionRole::File),
                  text_option("box", "", "x,y,w,h")},
                 run);
}

}  // namespace

FRAMELIFT_REGISTER_STAGE(model, "A user's TorchScript module (.pt): colorization, style transfer, inpainting, temporal models",
                         model_stage_options(),
                         [](const OptionValues& o) { return std::make_unique<ModelStage>(o); });

}  // namespace framelift::pipeline
