// `style`: style transfer with a fast neural style network (models/fast_neural_style.cpp: the
// TransformerNet .pth files of pytorch/examples), frame by frame, at the frame's size. The running
// (device, precision, batches) is ImageModelStage's; the network normalises over whole frames, so
// it is never tiled.
#include "models/model_files.h"
#include "pipeline/image_model_stage.h"
#include "pipeline/stage_registry.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

std::unique_ptr<Stage> make_style_stage(const OptionValues& o) {
  const std::string file = o.has("model") ? o.text("model") : "";
  if (file.empty()) throw Error(ErrorKind::Usage, "stage style: model=FILE (a fast neural style .pth) is required");
  std::unique_ptr<models::ImageModel> model = models::open_model(file);
  if (model->info().arch != "fast_neural_style")
    throw Error(ErrorKind::Usage, str("stage style: ", file, " is a ", model->info().arch,
                                      " network, not a style transfer one (fast neural style); use upscale or denoise for it"));
  return std::make_unique<ImageModelStage>("style", file, std::move(model), o, 1);
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
