// `style`: style transfer with a fast neural style network (models/fast_neural_style.cpp: the
// TransformerNet .pth files of pytorch/examples), frame by frame, at the frame's size. The running
// (device, precision, batches) is ImageModelStage's; the network normalises over whole frames, so
// it is never tiled.
#include "pipeline/image_model_stage.h"
#include "pipeline/stage_registry.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

std::unique_ptr<Stage> make_style_stage(const OptionValues& o) {
  std::unique_ptr<models::ImageModel> model =
      open_stage_model("style", o, "fast_neural_style", "a fast neural style .pth", "a style transfer one (fast neural style)");
  return std::make_unique<ImageModelStage>("style", o.text("model"), std::move(model), o, 1);
}

OptionSchema style_options() {
  return combine({with_role(text_option("model", "", "a fast neural style .pth (candy, mosaic, udnie...): installed name or file; required"),
                            OptionRole::ModelRef)},
                 model_run_options());
}

}  // namespace

FRAMELIFT_REGISTER_STAGE(style, "Style transfer with a fast neural style network (pytorch/examples' TransformerNet .pth)",
                         style_options(), make_style_stage);

}  // namespace framelift::pipeline
