#pragma once
// The planner's stages from a pipeline as `run` takes it. The text is parsed by the one parser
// (pipeline::parse_pipeline, with each stage's schema defaults filled in and a model file's
// architecture detected by the same registry `run` uses: src/cli/plan_pipeline.h); here each
// stage becomes the network it runs: catalog models resolve to their architecture and
// parameters (data/models.json), denoise levels to the family's model for that level, a
// detected model file to its architecture's cost model. Stages
// without one (filter graphs, deinterlacing, TorchScript modules, an architecture the planner
// cannot count) are kept as unpriced: cost unknown, marked on every row ("needs a profile"),
// never refused.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "library/catalog.h"
#include "plan/job.h"

namespace framelift::plan {

// A model file's network, detected by the architecture registry from its keys and shapes.
struct DetectedNetwork {
  std::string arch;   // "srvgg_compact", "rrdbnet", ...
  int scale = 1;      // the network's own scale
  arch::ArchParams params;  // its hyperparameters ("num_feat", "nb", ...)
  std::string label;  // for display: the file's name
  int output_scale = 0;  // the stage's output / input when it resizes the network's output; 0: scale
  // A graph's cost counted from its operators (an ONNX file: models::OnnxModel::cost_model), used
  // as it is in place of an architecture's walk.
  std::optional<arch::ArchCost> cost{};
};

// One stage as the pipeline parser gives it, with every option its schema has a default for
// filled in (api::plan_stages_for does; the planner spells no defaults of its own and throws
// std::logic_error for one missing), plus the detected network when model= is a file.
struct PipelineStage {
  std::string name;
  std::map<std::string, std::string> options;
  std::optional<DetectedNetwork> network;
  // faces: the detector= file's network (RetinaFace), priced beside the restorer.
  std::optional<DetectedNetwork> detector;
};

struct InputShape {
  int width = 0, height = 0;
  double fps = 0;  // for interpolate:fps=F
};

// Throws Error(Usage, "stage NAME: ...") for a catalog name that does not exist or a value the
// planner cannot read.
std::vector<StageSpec> plan_stages(const std::vector<PipelineStage>& stages, const library::Catalog& models,
                                   const InputShape& input);

// The planner's stage for one catalog model (architecture parameters the catalog does not list
// are filled in per model: docs/planner.md).
StageSpec stage_for_model(const library::CatalogModel& model);

}  // namespace framelift::plan
