// `upscale`: AI super-resolution with any model framelift can open (models/model_files.h); the
// running (device, precision, batches, tiles, final resize) is ImageModelStage's.
#include "models/model_files.h"
#include "pipeline/image_model_stage.h"
#include "pipeline/stage_registry.h"

namespace framelift::pipeline {
namespace {

constexpr const char* kDefaultModel = "realesr-animevideov3-x2";

std::unique_ptr<Stage> make_upscale_stage(const StageOptions& o) {
  std::vector<std::string> known = {"model", "scale"};
  known.insert(known.end(), kModelRunOptions.begin(), kModelRunOptions.end());
  o.expect_only(known);
  const std::string model = o.get("model", kDefaultModel);
  return std::make_unique<ImageModelStage>("upscale", model, models::open_model(model), o, o.get_double("scale", 0));
}

}  // namespace

FRAMELIFT_REGISTER_STAGE(upscale, "AI super-resolution (Real-ESRGAN, Real-CUGAN, Compact, ESRGAN, OmniSR, ...)",
                         "model=NAME|FILE (default realesr-animevideov3-x2), scale=F, device=auto|cpu|cuda[:N], "
                         "precision=fp32|fp16|bf16 (default fp16 on CUDA, fp32 on CPU), tile=N (0: from memory), "
                         "tile_overlap=N, batch=N (frames per pass), threads=N, max_memory=SIZE (e.g. 4G)",
                         make_upscale_stage);

}  // namespace framelift::pipeline
