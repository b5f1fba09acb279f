#include "plan/pipeline_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include "library/denoise_models.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::plan {
namespace {

// A positive number, or with zero_ok one >= 0 (denoise levels start at 0).
double number(const std::string& stage, const std::string& key, const std::string& value, bool zero_ok = false) {
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end || !(zero_ok ? v >= 0 : v > 0))
    throw Error(ErrorKind::Usage, str("stage ", stage, ": ", key, "=", value, zero_ok ? " is not a number >= 0" : " is not a positive number"));
  return v;
}

}  // namespace

StageSpec stage_for_model(const library::CatalogModel& m) {
  StageSpec s;
  s.model = m.name;
  s.kind = m.task == "interpolate" ? "interpolate" : m.task == "denoise" ? "denoise" : "upscale";
  arch::ArchParams params;
  int net_scale = m.scale > 0 ? m.scale : 1;
  for (const auto& [key, value] : m.hyperparameters) params[key] = value;
  // The ncnn x2/x3 exports of animevideov3 run the x4 network, then resize down.
  if (m.name.rfind("realesr-animevideov3-x", 0) == 0 && m.format == "ncnn") net_scale = 4;
  s.cost = arch::cost(m.architecture, m.task == "interpolate" ? 1 : net_scale, params);
  s.params = params;
  s.scale = m.task == "interpolate" ? 1 : std::max(1, m.scale);
  return s;
}

namespace {

const library::CatalogModel& catalog_model(const std::string& stage, const std::string& name, const library::Catalog& models) {
  const library::CatalogModel* m = models.find(name);
  if (m) return *m;
  std::string hint;
  for (const auto& c : models.closest(name)) hint += (hint.empty() ? " (did you mean " : ", ") + c;
  throw Error(ErrorKind::Usage, str("stage ", stage, ": model '", name, "' is not in the catalog", hint.empty() ? "" : hint + "?)",
                                    "; give a catalog name or a model file"));
}

const std::string* option(const PipelineStage& st, const char* key) {
  auto it = st.options.find(key);
  return it == st.options.end() || it->second.empty() ? nullptr : &it->second;
}

// An option the stage's schema gives a default: PipelineStage::options holds it (the caller
// filled the defaults), so the planner never spells a default of its own.
const std::string& defaulted(const PipelineStage& st, const char* key) {
  if (const std::string* v = option(st, key)) return *v;
  throw std::logic_error(str("planner: stage ", st.name, " without its option ", key,
                             "; plan_stages takes the options with the schema's defaults filled in"));
}

// A stage whose time the planner cannot model: left out of the totals, marked unknown on every
// row (planner.h: DeviceEstimate::unknown_stages).
StageSpec unpriced(const std::string& kind, const std::string& label, double scale = 1, int frame_factor = 1) {
  StageSpec s;
  s.kind = kind;
  s.model = label;
  s.scale = scale;
  s.frame_factor = frame_factor;
  s.priced = false;
  return s;
}

// A model file's detected network: its architecture's cost model, or unpriced when the planner
// has none for it.
StageSpec stage_for_network(const std::string& kind, const DetectedNetwork& n) {
  const int net_scale = kind == "interpolate" ? 1 : n.scale;
  const int out_scale = kind == "interpolate" || n.output_scale <= 0 ? net_scale : n.output_scale;
  StageSpec s;
  s.kind = kind;
  s.model = n.label;
  if (n.cost) {
    s.cost = *n.cost;
    s.scale = out_scale;
    return s;
  }
  try {
    s.cost = arch::cost(n.arch, net_scale, n.params);
  } catch (const Error&) {
    return unpriced(kind, str(n.label, " (", n.arch, ")"), out_scale);
  }
  s.params = n.params;
  s.scale = out_scale;
  return s;
}

// A network that runs on `pixels` pixels a frame whatever the frame's size: the cost model counts
// per frame pixel, so its per-pixel figures scale by the ratio.
void price_at_working_pixels(StageSpec& s, double pixels, double w, double h) {
  if (!(w > 0 && h > 0)) return;
  const double share = pixels / (w * h);
  s.cost.macs_per_px *= share;
  s.cost.peak_elems_per_px *= share;
  s.cost.traffic_elems_per_px *= share;
}

// faces restores face_size-square crops, as many a frame as there are faces: unknown before the
// run, so priced as one a frame (the `faces` row's label says so); with aligned=true the frame is
// the crop. The detector runs on every frame at detect_size= (its shorter side), added to the
// restorer's cost; a detector the planner cannot price leaves the stage unpriced, never free.
void price_faces(StageSpec& s, const PipelineStage& st, double w, double h) {
  if (defaulted(st, "aligned") == "true" || !s.priced) return;
  const double face = s.params.get("face_size", 512);
  price_at_working_pixels(s, face * face, w, h);
  s.model += " (one face a frame)";
  if (!st.detector || st.detector->arch != "retinaface") {
    s.priced = false;
    return;
  }
  arch::ArchCost detector = arch::cost("retinaface", 1, st.detector->params);
  const double detect = number(st.name, "detect_size", defaulted(st, "detect_size")), shorter = std::min(w, h);
  const double share = detect > 0 && shorter > detect ? (detect / shorter) * (detect / shorter) : 1.0;
  s.cost.macs_per_px += detector.macs_per_px * share;
  s.cost.traffic_elems_per_px += detector.traffic_elems_per_px * share;
  s.cost.peak_elems_per_px = std::max(s.cost.peak_elems_per_px, detector.peak_elems_per_px * share);
  s.cost.params += detector.params;
}

// inpaint fills the region around its mask, scaled so its longer side is at most resolution=; the
// mask is not known before the run, so the price is the most it can be: the whole frame, scaled
// down to that size; MAT always fills its resolution squared. colorize runs its network at size=
// squared.
void price_working_size(StageSpec& s, const PipelineStage& st, double w, double h) {
  if (st.name == "inpaint" && st.network && st.network->arch == "mat") {
    const double side = s.params.get("resolution", 512);  // MAT fills exactly its resolution
    price_at_working_pixels(s, side * side, w, h);
  } else if (st.name == "inpaint") {
    const double longest = std::max(w, h), limit = number(st.name, "resolution", defaulted(st, "resolution"));
    if (longest > limit) price_at_working_pixels(s, w * h * (limit / longest) * (limit / longest), w, h);
  } else if (st.name == "colorize") {
    const double size = number(st.name, "size", defaulted(st, "size"));
    price_at_working_pixels(s, size * size, w, h);
  } else if (st.name == "faces") {
    price_faces(s, st, w, h);
  }
}

int frame_factor(const PipelineStage& st, double fps) {
  if (const std::string* rate = option(st, "fps")) {
    if (!(fps > 0)) throw Error(ErrorKind::Usage, "stage interpolate: the input has no known frame rate; give factor=N");
    const size_t slash = rate->find('/');
    const double r = slash == std::string::npos ? number(st.name, "fps", *rate)
                                                : number(st.name, "fps", rate->substr(0, slash)) /
                                                      number(st.name, "fps", rate->substr(slash + 1));
    return std::max(1, static_cast<int>(std::ceil(r / fps - 1e-6)));
  }
  return static_cast<int>(number(st.name, "factor", defaulted(st, "factor")));
}

StageSpec denoise_stage(const PipelineStage& st, const library::Catalog& models) {
  const std::string& method = defaulted(st, "method");
  const double strength = option(st, "strength") ? number(st.name, "strength", *option(st, "strength"), true)
                                                 : number(st.name, "level", defaulted(st, "level"), true);
  const double scale = number(st.name, "scale", defaulted(st, "scale"));
  if (method == "hqdn3d" || method == "nlmeans") return unpriced("denoise", str("denoise (", method, ")"));
  const std::string& arch = defaulted(st, "arch");
  const int native = library::denoise_native_scale(method, arch, scale);
  // A blend of two levels runs both networks; the dearer (higher) one is what is priced twice.
  const int level = static_cast<int>(std::ceil(strength));
  StageSpec s = stage_for_model(catalog_model(st.name, library::denoise_model_name(method, arch, native, level), models));
  s.kind = "denoise";
  if (std::floor(strength) != std::ceil(strength)) s.cost.macs_per_px *= 2;
  s.scale = scale;
  return s;
}

}  // namespace

std::vector<StageSpec> plan_stages(const std::vector<PipelineStage>& stages, const library::Catalog& models,
                                   const InputShape& input) {
  std::vector<StageSpec> out;
  double w = input.width, h = input.height;
  for (const PipelineStage& st : stages) {
    StageSpec s;
    if (st.name == "resize") {
      s.kind = "resize";
      s.model = "resize";
      if (const std::string* f = option(st, "scale")) {
        s.scale = number(st.name, "scale", *f);
      } else if (option(st, "w") && w > 0) {
        s.scale = number(st.name, "w", *option(st, "w")) / w;
      } else if (option(st, "h") && h > 0) {
        s.scale = number(st.name, "h", *option(st, "h")) / h;
      }
    } else if (st.name == "denoise" && !option(st, "model") && !st.network) {
      s = denoise_stage(st, models);
    } else if (st.name == "upscale" || st.name == "denoise" || st.name == "interpolate" || st.name == "style" || st.name == "inpaint" ||
               st.name == "colorize" || st.name == "faces") {
      if (st.network) {
        s = stage_for_network(st.name, *st.network);
      } else {
        const std::string* name = option(st, "model");
        if (!name) throw Error(ErrorKind::Usage, str("stage ", st.name, ": give model=NAME or a model file"));
        s = stage_for_model(catalog_model(st.name, *name, models));
      }
      if (st.name == "upscale" && option(st, "scale")) s.scale = number(st.name, "scale", *option(st, "scale"));
      if (s.kind == "interpolate") s.frame_factor = frame_factor(st, input.fps);
      price_working_size(s, st, w, h);
    } else if (st.name == "deinterlace") {
      const bool fields = option(st, "mode") && *option(st, "mode") == "field";
      s = unpriced("deinterlace", "deinterlace", 1, fields ? 2 : 1);
    } else if (st.name == "filter") {
      s = unpriced("filter", str("filter (", option(st, "graph") ? *option(st, "graph") : "", ")"));
    } else if (st.name == "model") {
      const std::string* file = option(st, "file");
      s = unpriced("model", str("model (", file ? *file : "", ")"), number(st.name, "scale", defaulted(st, "scale")));
    } else {
      throw Error(ErrorKind::Usage, str("stage ", st.name, ": unknown to the planner"));
    }
    w *= s.scale;
    h *= s.scale;
    out.push_back(std::move(s));
  }
  if (out.empty()) throw Error(ErrorKind::Usage, "--pipeline: no stages");
  return out;
}

}  // namespace framelift::plan
