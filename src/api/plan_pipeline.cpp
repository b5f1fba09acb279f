#include "api/plan_pipeline.h"

#include <cstdlib>
#include <filesystem>

#include "library/catalog.h"
#include "library/model_locator.h"
#include "models/face_detector.h"
#include "models/interpolator_networks.h"
#include "models/model_files.h"
#include "models/rife_native.h"
#include "pipeline/option_schema.h"
#include "pipeline/stage_registry.h"
#include "pipeline/stage_spec.h"
#include "util/error.h"
#include "util/str.h"
#include "weights/load_weights.h"

namespace fs = std::filesystem;

namespace framelift::api {
namespace {

const pipeline::StageInfo& stage_info(const std::string& name) {
  if (const pipeline::StageInfo* s = pipeline::find_stage(name)) return *s;
  std::string names;
  for (const pipeline::StageInfo& s : pipeline::registered_stages()) names += (names.empty() ? "" : ", ") + s.name;
  throw Error(ErrorKind::Usage, str("pipeline: unknown stage '", name, "' (stages: ", names, ")"));
}

// The network in a model file, as `run` would open it (models::detect_model_file: an ncnn
// export priced as its native network, an x2 export of an x4 net as the x4 it runs); one the
// registry does not know (a graph-only ncnn export, say) is kept by name, unpriced.
plan::DetectedNetwork detect_network(const std::string& stage, const fs::path& file) {
  plan::DetectedNetwork n;
  n.label = file.filename().string();
  if (stage == "interpolate") {
    n.arch = "rife";
    try {
      const weights::StateDict dict = weights::load_weights(file);
      if (const models::InterpolatorNetwork* network = models::find_interpolator_network(dict, file.string(), &n.params)) {
        n.arch = network->arch;
        return n;
      }
      n.params = models::rife_arch_params(dict, file.string());  // 4.6 or 4.22+
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Model && e.kind() != ErrorKind::Input) throw;  // an ncnn graph: 4.6's walk
    }
    return n;
  }
  n.arch = "unknown";
  try {
    const models::ModelFileNetwork m = models::detect_model_file(file);
    n.output_scale = m.output_scale;
    if (m.graph_cost) {
      n.arch = m.graph_cost->arch;
      n.scale = m.graph_cost->scale;
      n.cost = m.graph_cost;
      return n;
    }
    if (!m.native) return n;
    n.arch = m.native->arch;
    n.scale = m.native->scale;
    n.params = m.native->params;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Model && e.kind() != ErrorKind::Input) throw;
  }
  return n;
}

// faces' detector= file, priced by its own declaration; nullopt when it is not one (the stage
// is then unpriced) or cannot be read (run refuses it by name).
std::optional<plan::DetectedNetwork> detect_face_detector(const std::string& name) {
  try {
    const fs::path file = library::resolve_model_file(name);
    const weights::StateDict dict = weights::load_weights(file);
    const std::optional<models::FaceDetectorShape> shape = models::detect_retinaface(dict, file.string());
    if (!shape) return std::nullopt;
    plan::DetectedNetwork n;
    n.arch = "retinaface";
    n.label = file.filename().string();
    n.params = shape->params;
    return n;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Model && e.kind() != ErrorKind::Input) throw;
    return std::nullopt;
  }
}

}  // namespace

std::vector<plan::StageSpec> plan_stages_for(const std::string& text, const plan::InputShape& input) {
  return plan_stages_for(pipeline::parse_pipeline(text), input);
}

std::vector<plan::StageSpec> plan_stages_for(const std::vector<pipeline::StageSpec>& specs, const plan::InputShape& input) {
  const library::Catalog catalog = library::Catalog::load_default();
  std::vector<plan::PipelineStage> stages;
  for (const pipeline::StageSpec& spec : specs) {
    const pipeline::StageInfo& info = stage_info(spec.name);
    pipeline::validate_options(spec.name, info.options, spec.options);
    plan::PipelineStage st{spec.name, spec.options.values(), {}};
    for (const pipeline::OptionSpec& o : info.options)
      if (!o.default_value.empty() && !st.options.count(o.name)) st.options[o.name] = o.default_value;
    if (auto it = st.options.find("model"); it != st.options.end() && !catalog.find(it->second)) {
      std::error_code ec;
      if (fs::is_regular_file(it->second, ec)) st.network = detect_network(spec.name, it->second);
    }
    if (auto it = st.options.find("detector"); it != st.options.end()) st.detector = detect_face_detector(it->second);
    stages.push_back(std::move(st));
  }
  return plan::plan_stages(stages, catalog, input);
}

}  // namespace framelift::api
