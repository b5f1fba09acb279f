#include "pipeline/stage_registry.h"

#include <optional>

#include "pipeline/stage_order.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {
std::vector<StageInfo>& table() {
  static std::vector<StageInfo> stages;
  return stages;
}
}  // namespace

bool register_stage(StageInfo info) {
  table().push_back(std::move(info));
  return true;
}

const std::vector<StageInfo>& registered_stages() { return table(); }

const StageInfo* find_stage(const std::string& name) {
  for (const StageInfo& info : table())
    if (info.name == name) return &info;
  return nullptr;
}

std::unique_ptr<Stage> make_stage(const StageSpec& spec) {
  if (const StageInfo* info = find_stage(spec.name)) {
    return info->factory(validate_options(info->name, info->options, spec.options));
  }
  std::string names;
  for (const StageInfo& info : table()) names += (names.empty() ? "" : ", ") + info.name;
  throw Error(ErrorKind::Usage, str("pipeline: unknown stage '", spec.name, "' (stages: ", names, ")"));
}

std::string whole_video_reason(const std::string& pipeline_text) {
  for (const StageSpec& spec : parse_pipeline(pipeline_text)) {
    const StageInfo* info = find_stage(spec.name);
    if (!info || !info->whole_video) continue;
    std::optional<OptionValues> values;
    try {
      values = validate_options(info->name, info->options, spec.options);
    } catch (const Error&) {
      continue;  // make_stages reports it
    }
    if (std::string why = info->whole_video(*values); !why.empty()) return str("stage ", spec.name, ": ", why);
  }
  return "";
}

std::vector<std::unique_ptr<Stage>> make_stages(const std::string& pipeline_text,
                                                const std::map<std::string, std::string>& defaults) {
  std::vector<std::unique_ptr<Stage>> stages;
  std::vector<StageSpec> specs = parse_pipeline(pipeline_text);
  for (const std::string& warning : stage_order_warnings(specs)) log::warn("pipeline: ", warning);
  for (StageSpec& spec : specs) {
    spec.options.set_defaults(defaults);
    stages.push_back(make_stage(spec));
  }
  return stages;
}

}  // namespace framelift::pipeline
