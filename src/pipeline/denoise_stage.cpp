// `denoise`: AI noise and compression-artifact removal with real trained weights: waifu2x (CUNet,
// or UpConv7 at 2x) and Real-CUGAN's denoise variants, at scale 1 or combined with their upscale.
// `strength` between two trained levels blends the two weight sets (see open_blended_model).
//
// Measured on real footage (tests/cli/denoise_test.cpp; PSNR against the clean frames): Gaussian
// noise sigma 15, 25.9 dB -> waifu2x CUNet level 3 31.5 dB, Real-CUGAN x2 denoise3x scaled back
// 32.1 dB, hqdn3d 26.3 dB (27.4 strong); JPEG q20, 30.8 -> 33.8 dB (level 2), hqdn3d 31.9 dB.
#include <cmath>

#include "library/denoise_models.h"
#include "models/jpeg_quality.h"
#include "models/model_files.h"
#include "models/noise_level.h"
#include "pipeline/graph_stage.h"
#include "pipeline/image_model_stage.h"
#include "pipeline/stage_registry.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

// The cheap classical denoisers, through libavfilter: hqdn3d (spatial + recursive temporal) and
// nlmeans (non-local means, spatial). `strength` maps onto each filter's own strength.
class ClassicalDenoise : public GraphStage {
 public:
  ClassicalDenoise(std::string method, double strength) : method_(std::move(method)), strength_(strength) {}
  std::string name() const override { return "denoise"; }
  // hqdn3d's temporal part is recursive: each frame carries all the earlier ones, fading. A few
  // frames of context make segment boundaries close to invisible, not exact (docs/restoration.md).
  int context_frames() const override { return method_ == "hqdn3d" ? 4 : 0; }

 protected:
  std::string graph_description(const media::VideoFormat&) override {
    // Level 0..3 -> luma spatial strength 2..12 (hqdn3d's default is 4); nlmeans s 1..7.
    if (method_ == "hqdn3d") return str("hqdn3d=", 2 + strength_ * 10.0 / 3.0);
    return str("nlmeans=s=", 1 + strength_ * 2.0);
  }

 private:
  std::string method_;
  double strength_;
};

// sigma= tells a noise-conditioned network (DRUNet) the level to remove; other networks have a
// strength trained in, and would silently ignore it.
void apply_noise_level(models::ImageModel& model, const std::string& name, const OptionValues& o) {
  if (!o.has("sigma")) return;
  auto* conditioned = dynamic_cast<models::NoiseLevelInput*>(&model);
  if (!conditioned)
    throw Error(ErrorKind::Usage, str("stage denoise: sigma= is for networks told the noise level (DRUNet); ", name, " is a ",
                                      model.info().arch, " network"));
  conditioned->set_noise_level(o.number("sigma"));
}

// quality= conditions a JPEG-quality-aware network (FBCNN) on a given quality factor instead of
// the one it predicts.
void apply_jpeg_quality(models::ImageModel& model, const std::string& name, const OptionValues& o) {
  if (!o.has("quality")) return;
  auto* aware = dynamic_cast<models::JpegQualityEstimator*>(&model);
  if (!aware)
    throw Error(ErrorKind::Usage, str("stage denoise: quality= is for networks conditioned on the JPEG quality (FBCNN); ", name,
                                      " is a ", model.info().arch, " network"));
  aware->set_quality(o.number("quality"));
}

// denoise:model=NAME: a restoration network of its own (SwinIR denoising or JPEG, DRUNet, NAFNet,
// FBCNN, SCUNet, ...), in place of the method's trained levels; it must keep the size, or it is an
// upscale.
std::unique_ptr<Stage> make_model_denoise_stage(const OptionValues& o) {
  for (const char* other : {"method", "level", "strength", "arch"})
    if (o.given(other)) throw Error(ErrorKind::Usage, str("stage denoise: model= and ", other, "= are alternatives; give one"));
  const std::string name = o.text("model");
  std::unique_ptr<models::ImageModel> model = models::open_model(name);
  if (model->info().scale != 1)
    throw Error(ErrorKind::Usage, str("stage denoise: ", name, " is a x", model->info().scale,
                                      " model; denoise takes scale-1 models (use upscale:model=...)"));
  apply_noise_level(*model, name, o);
  apply_jpeg_quality(*model, name, o);
  return std::make_unique<ImageModelStage>("denoise", name, std::move(model), o, o.number("scale"));
}

std::unique_ptr<Stage> make_denoise_stage(const OptionValues& o) {
  if (o.has("model")) return make_model_denoise_stage(o);
  if (o.has("sigma")) throw Error(ErrorKind::Usage, "stage denoise: sigma= is for model= networks told the noise level (DRUNet)");
  if (o.has("quality"))
    throw Error(ErrorKind::Usage, "stage denoise: quality= is for model= networks conditioned on the JPEG quality (FBCNN)");
  const std::string& method = o.text("method");
  if (method == "hqdn3d" || method == "nlmeans") {
    const double strength = o.has("strength") ? o.number("strength") : o.number("level");
    if (o.number("scale") != 1) throw Error(ErrorKind::Usage, str("stage denoise: ", method, " works at scale 1 only"));
    return std::make_unique<ClassicalDenoise>(method, strength);
  }
  // method and arch are among their schema's choices (denoise_options); arch is waifu2x's only.
  const std::string& arch = o.text("arch");
  const double strength = o.has("strength") ? o.number("strength") : o.number("level");
  const double scale = o.number("scale");
  const int native = library::denoise_native_scale(method, arch, scale);
  const int lo = int(std::floor(strength)), hi = int(std::ceil(strength));
  const std::string a = library::denoise_model_name(method, arch, native, lo), b = library::denoise_model_name(method, arch, native, hi);
  if (lo == hi) return std::make_unique<ImageModelStage>("denoise", a, models::open_model(a), o, scale);
  return std::make_unique<ImageModelStage>("denoise", str(a, " + ", b, " blended at ", strength - lo),
                                           models::open_blended_model(a, b, strength - lo), o, scale);
}

OptionSchema denoise_options() {
  return combine({choice_option("method", "waifu2x", {"waifu2x", "realcugan", "hqdn3d", "nlmeans"}, ""),
                  integer_option("level", "2", 0, 3, ""),
                  number_option("strength", "", 0, 3, "between levels: blended weights"),
                  choice_option("arch", "cunet", {"cunet", "upconv7"}, "waifu2x's network"),
                  number_option("scale", "1", 1, 4, ""),
                  with_role(text_option("model", "", "a scale-1 model instead of method and level: catalog name, installed model or file"),
                            OptionRole::ModelRef),
                  number_option("sigma", "", 0, 255, "model= DRUNet: the noise level to remove, 0-255; default 15"),
                  number_option("quality", "", 1, 100, "model= FBCNN: the JPEG quality to restore from; default the predicted one")},
                 model_run_options());
}

}  // namespace

FRAMELIFT_REGISTER_STAGE(denoise, "AI denoising and artifact removal (waifu2x, Real-CUGAN), optionally with upscaling",
                         denoise_options(), make_denoise_stage);

}  // namespace framelift::pipeline
