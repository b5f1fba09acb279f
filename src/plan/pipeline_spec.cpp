#include "plan/pipeline_spec.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

#include "util/error.h"
#include "util/str.h"

namespace framelift::plan {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep))
    if (!part.empty()) out.push_back(part);
  return out;
}

double number(const std::string& stage, const std::string& key, const std::string& value) {
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end || !(v > 0))
    throw Error(ErrorKind::Usage, str("stage ", stage, ": ", key, "=", value, " is not a positive number"));
  return v;
}

}  // namespace

StageSpec stage_for_model(const library::CatalogModel& m) {
  StageSpec s;
  s.model = m.name;
  s.kind = m.task == "interpolate" ? "interpolate" : m.task == "denoise" ? "denoise" : "upscale";
  ArchParams params;
  int net_scale = m.scale > 0 ? m.scale : 1;
  // What the catalog's descriptions say and its data does not carry (data/models.json).
  if (m.name == "realesrgan-x4plus-anime") params["nb"] = 6;
  if (m.name == "4x-NMKD-YandereNeo-Superlite") params["nb"] = 2;
  if (m.name == "realesr-general-x4v3") params["num_conv"] = 32;
  // The ncnn x2/x3 exports of animevideov3 run the x4 network, then resize down.
  if (m.name.rfind("realesr-animevideov3-x", 0) == 0 && m.format == "ncnn") net_scale = 4;
  s.cost = arch_cost(m.architecture, m.task == "interpolate" ? 1 : net_scale, params);
  s.params = params;
  s.scale = m.task == "interpolate" ? 1 : std::max(1, m.scale);
  return s;
}

std::vector<StageSpec> parse_pipeline(const std::string& pipeline, const library::Catalog& models, double fps) {
  std::vector<StageSpec> stages;
  for (const std::string& text : split(pipeline, ',')) {
    std::vector<std::string> parts = split(text, ':');
    const std::string name = parts.at(0);
    std::map<std::string, std::string> kv;
    for (size_t i = 1; i < parts.size(); ++i) {
      const auto eq = parts[i].find('=');
      if (eq == std::string::npos) throw Error(ErrorKind::Usage, str("stage ", name, ": '", parts[i], "' is not KEY=VALUE"));
      kv[parts[i].substr(0, eq)] = parts[i].substr(eq + 1);
    }
    StageSpec s;
    if (name == "resize") {
      s.kind = "resize";
      s.model = "resize";
      s.scale = kv.count("scale") ? number(name, "scale", kv["scale"]) : 1;
    } else if (name == "upscale" || name == "denoise" || name == "interpolate") {
      if (kv.count("model")) {
        const library::CatalogModel* m = models.find(kv["model"]);
        if (!m) {
          std::string hint;
          for (const auto& c : models.closest(kv["model"])) hint += (hint.empty() ? " (did you mean " : ", ") + c;
          throw Error(ErrorKind::Usage, str("stage ", name, ": model '", kv["model"], "' is not in the catalog",
                                            hint.empty() ? "" : hint + "?)", "; describe it with arch=NAME:scale=N"));
        }
        s = stage_for_model(*m);
      } else if (kv.count("arch")) {
        ArchParams params;
        for (const auto& [k, v] : kv)
          if (k != "arch" && k != "scale" && k != "factor" && k != "fps") params[k] = number(name, k, v);
        const int scale = kv.count("scale") ? static_cast<int>(number(name, "scale", kv["scale"])) : 1;
        s.kind = name;
        s.model = str("arch=", kv["arch"]);
        s.cost = arch_cost(kv["arch"], scale, params);
        s.params = params;
        s.scale = name == "interpolate" ? 1 : scale;
      } else if (name == "interpolate") {
        const library::CatalogModel* m = models.find("rife-v4.6");
        s = m ? stage_for_model(*m) : StageSpec{"interpolate", "rife-v4.6", arch_cost("rife", 1), 1, 1};
      } else {
        throw Error(ErrorKind::Usage, str("stage ", name, ": give model=NAME (framelift models list) or arch=NAME:scale=N"));
      }
      if (name == "upscale" && kv.count("scale")) s.scale = number(name, "scale", kv["scale"]);
      if (s.kind == "interpolate") {
        if (kv.count("factor")) {
          s.frame_factor = static_cast<int>(number(name, "factor", kv["factor"]));
        } else if (kv.count("fps")) {
          if (!(fps > 0)) throw Error(ErrorKind::Usage, "stage interpolate: the input has no known frame rate; give factor=N");
          s.frame_factor = std::max(1, static_cast<int>(std::ceil(number(name, "fps", kv["fps"]) / fps - 1e-6)));
        } else {
          s.frame_factor = 2;
        }
      }
    } else {
      throw Error(ErrorKind::Usage, str("stage ", name, ": the planner has no cost model for it (upscale, denoise, interpolate, resize)"));
    }
    stages.push_back(std::move(s));
  }
  if (stages.empty()) throw Error(ErrorKind::Usage, "--pipeline: no stages");
  return stages;
}

}  // namespace framelift::plan
