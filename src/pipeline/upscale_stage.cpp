// `upscale`: AI super-resolution with any model framelift can open (models/model_files.h); the
// running (device, precision, batches, tiles, final resize) is ImageModelStage's.
#include "models/model_files.h"
#include "pipeline/image_model_stage.h"
#include "pipeline/stage_registry.h"

namespace framelift::pipeline {
namespace {

std::unique_ptr<Stage> make_upscale_stage(const OptionValues& o) {
  const std::string& model = o.text("model");
  // scale 0: the model's own (ImageModelStage)
  return std::make_unique<ImageModelStage>("upscale", model, models::open_model(model), o, o.has("scale") ? o.number("scale") : 0);
}

OptionSchema upscale_options() {
  return combine({with_role(text_option("model", "realesr-animevideov3-x2", "a catalog name, an installed model or a file"), OptionRole::ModelRef),
                  number_option("scale", "", 0, 16, "output scale; default the model's", /*min_exclusive=*/true)},
                 model_run_options());
}

}  // namespace

FRAMELIFT_REGISTER_STAGE(upscale, "AI super-resolution (Real-ESRGAN, Real-CUGAN, Compact, ESRGAN, OmniSR, ...)",
                         upscale_options(), make_upscale_stage);

}  // namespace framelift::pipeline
