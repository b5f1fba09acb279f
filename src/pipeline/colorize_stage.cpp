// `colorize`: colour for black-and-white footage from a colorization network (DDColor,
// models/ddcolor.cpp), as DDColor's own pipeline runs it, per frame:
//   1. the frame scaled to size x size (bilinear), reduced to its Lab lightness and back to a grey
//      RGB picture: what the network was trained on;
//   2. the network's chroma (Lab a and b) at that size, scaled back to the frame's size; Lab (the
//      frame's own lightness, that chroma) to RGB, kept as each pixel's colour offsets from its
//      luma (the video's chroma);
//   3. with smooth=N, those offsets averaged over N frames centred on each (the edges repeat),
//      so that colours do not flicker where the picture does not move;
//   4. the frame's own luma plus the offsets (lab_color.h, with_luma_of: the video's Y' is the
//      input's, to rounding), so that the brightness of every pixel is the input's and only
//      colour is added.
// Jobs stay exact: the stage asks for smooth/2 frames of context on each side of a segment.
#include <ATen/ATen.h>

#include <optional>

#include "infer/device.h"
#include "media/video_format.h"
#include "pipeline/lab_color.h"
#include "pipeline/model_run_options.h"
#include "pipeline/stage_registry.h"
#include "pipeline/temporal_window.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

// The matrix's red and blue luma weights (media::effective_matrix decides which matrix).
std::pair<double, double> luma_weights(AVColorSpace matrix) {
  switch (matrix) {
    case AVCOL_SPC_BT709: return {0.2126, 0.0722};
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL: return {0.2627, 0.0593};
    case AVCOL_SPC_SMPTE240M: return {0.212, 0.087};
    default: return {0.299, 0.114};  // BT.601 (470BG, SMPTE 170M) and what swscale takes for the rest
  }
}

class ColorizeStage : public Stage {
 public:
  explicit ColorizeStage(const OptionValues& o)
      : file_(o.has("model") ? o.text("model") : ""), size_(o.integer("size")), window_(int(o.integer("smooth"))) {
    model_ = open_stage_model("colorize", o, "ddcolor", "a DDColor .pth", "a colorization one (DDColor)");
    const int64_t m = model_->info().size_multiple;
    if (size_ % m) throw Error(ErrorKind::Usage, str("stage colorize: size=", size_, " must be a multiple of ", m, " (the network's)"));
    target_ = resolve_stage_target("colorize", o, model_->info().arch);
    infer::prepare_device(target_);
    model_->to(target_.device, target_.dtype);
  }

  std::string name() const override { return "colorize"; }
  int context_frames() const override { return window_.size() / 2; }
  c10::Device device() const override { return target_.device; }

  media::VideoFormat configure(const media::VideoFormat& in) override {
    std::tie(kr_, kb_) = luma_weights(media::effective_matrix(in));
    log::info("colorize: ", file_, " (", model_->info().arch, ") ", in.width, "x", in.height, " at ", size_, "x", size_,
              window_.size() > 1 ? str(", chroma smoothed over ", window_.size(), " frames") : "", ", on ", target_.describe_with_reason());
    return in;
  }

  void push(Frame frame, const Emit& emit) override {
    const at::Tensor chroma = colour_offsets(frame.image);
    for (TemporalWindow::Window& w : window_.push({at::cat({frame.image, chroma}), frame.pts})) emit(compose(w));
  }

  void flush(const Emit& emit) override {
    for (TemporalWindow::Window& w : window_.flush()) emit(compose(w));
  }

  void reset() override { window_.reset(); }

 private:
  // Y' of [3, H, W] RGB in the video's matrix.
  at::Tensor luma(const at::Tensor& rgb) const { return rgb[0] * kr_ + rgb[1] * (1 - kr_ - kb_) + rgb[2] * kb_; }

  // The colour the network gives `rgb` [3, H, W], as offsets of each channel from its luma
  // [3, H, W]: Lab with the frame's own lightness and the network's a and b (scaled back to the
  // frame's size), to RGB. Offsets are what a viewer sees as colour (the video's chroma), so
  // smoothing them smooths what flickers, whatever made it (the network, or grain in L).
  at::Tensor colour_offsets(const at::Tensor& rgb) {
    at::InferenceMode guard;
    const int64_t h = rgb.size(1), w = rgb.size(2);
    const at::Tensor frame = rgb.to(at::kFloat);
    const at::Tensor small = at::upsample_bilinear2d(frame.unsqueeze(0), {size_, size_}, false);
    const at::Tensor lightness = srgb_to_lab(small).narrow(1, 0, 1);
    const at::Tensor grey = lab_to_srgb(at::cat({lightness, at::zeros_like(lightness), at::zeros_like(lightness)}, 1));
    const at::Tensor ab = model_->forward(grey.to(target_.dtype)).to(at::kFloat);
    const at::Tensor colour = lab_to_srgb(at::cat({srgb_to_lab(frame).narrow(0, 0, 1), at::upsample_bilinear2d(ab, {h, w}, false)[0]}));
    return colour - luma(colour).unsqueeze(0);
  }

  // The centre frame's luma with the window's mean colour offsets, fitted into [0, 1].
  Frame compose(const TemporalWindow::Window& w) const {
    at::InferenceMode guard;
    const at::Tensor& centre = w.frames[w.frames.size() / 2];
    const at::Tensor rgb = centre.narrow(0, 0, 3);
    at::Tensor offsets = at::zeros_like(rgb);
    for (const at::Tensor& f : w.frames) offsets += f.narrow(0, 3, 3);
    offsets /= double(w.frames.size());
    return {with_luma_of(luma(rgb).unsqueeze(0) + offsets, rgb, kr_, kb_).to(centre.scalar_type()).contiguous(), w.pts};
  }

  std::string file_;
  int64_t size_;
  TemporalWindow window_;
  std::unique_ptr<models::ImageModel> model_;
  infer::ExecutionTarget target_;
  double kr_ = 0.299, kb_ = 0.114;
};

OptionSchema colorize_options() {
  return combine({with_role(text_option("model", "", "a DDColor .pth (ddcolor_modelscope, _paper, _artistic, _paper_tiny): installed name or file; required"),
                            OptionRole::ModelRef),
                  integer_option("size", "512", 64, 2048, "the square size the network colours at (a multiple of 32)"),
                  integer_option("smooth", "1", 1, 31, "odd: chroma averaged over N frames centred on each (1: none)")},
                 model_device_options());
}

}  // namespace

FRAMELIFT_REGISTER_STAGE(colorize, "Colour for black-and-white video with a colorization network (DDColor); luma kept",
                         colorize_options(), [](const OptionValues& o) { return std::make_unique<ColorizeStage>(o); });

}  // namespace framelift::pipeline
