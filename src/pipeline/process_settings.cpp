#include "pipeline/process_settings.h"

#include <algorithm>

#include "infer/device.h"
#include "infer/memory_budget.h"
#include "infer/threads.h"
#include "pipeline/stage_registry.h"
#include "pipeline/stage_spec.h"

namespace framelift::pipeline {
namespace {

// Where a stage with these options computes; the device alone decides (precision does not move it).
std::string device_of(const OptionValues& v) {
  if (!v.has("device")) return "cpu";
  const infer::ExecutionTarget t = infer::resolve_target(v.text("device"), "fp32");
  return t.is_cuda() ? t.device.str() : "cpu";
}

void tighten(int64_t& budget, int64_t bytes) { budget = budget == 0 ? bytes : std::min(budget, bytes); }

}  // namespace

ProcessSettings process_settings(const std::string& pipeline_text, const std::map<std::string, std::string>& defaults) {
  std::vector<StageSpec> specs = parse_pipeline(pipeline_text);
  for (StageSpec& spec : specs) spec.options.set_defaults(defaults);
  return process_settings(specs);
}

ProcessSettings process_settings(const std::vector<StageSpec>& specs) {
  ProcessSettings s;
  for (const StageSpec& spec : specs) {
    const StageInfo* info = find_stage(spec.name);
    if (!info) continue;  // make_stages names it
    const OptionValues v = validate_options(info->name, info->options, spec.options);
    if (!v.all().count("device")) continue;  // a stage that computes nothing of its own
    const std::string device = device_of(v);
    const bool has_threads = v.all().count("threads") && v.has("threads");
    if (device == "cpu" && has_threads) s.cpu_threads = std::max(s.cpu_threads, int(v.integer("threads")));
    if (v.all().count("max_memory") && v.has("max_memory")) {
      if (device == "cpu") tighten(s.cpu_memory_budget, v.integer("max_memory"));
      else tighten(s.device_memory_limits[device], v.integer("max_memory"));
    }
  }
  return s;
}

void apply(const ProcessSettings& s) {
  infer::configure_cpu_threads(s.cpu_threads);
  if (s.cpu_memory_budget > 0) infer::set_cpu_memory_budget(s.cpu_memory_budget);
  for (const auto& [device, bytes] : s.device_memory_limits)
    infer::limit_device_memory(infer::resolve_target(device, "fp32"), bytes);
}

}  // namespace framelift::pipeline
