#include "jobs/job_spec.h"

#include "util/error.h"
#include "util/str.h"

namespace framelift::jobs {
namespace {

// Options that say where a stage runs, not what it computes.
bool placement_option(const std::string& key) { return key == "device" || key == "threads"; }

std::map<std::string, std::string> computing_options(std::map<std::string, std::string> options) {
  std::erase_if(options, [](const auto& kv) { return placement_option(kv.first); });
  return options;
}

}  // namespace

nlohmann::json to_json(const JobSpec& s) {
  nlohmann::json j{{"framelift_version", s.framelift_version},
                   {"input_fingerprint", s.input_fingerprint},
                   {"segment_frames", s.segment_frames}};
  add_to_json(s, j);
  return j;
}

JobSpec spec_from_json(const nlohmann::json& j, const std::string& file) {
  JobSpec s;
  static_cast<RunSpec&>(s) = run_spec_from_json(j, file);
  auto text = [&](const char* key) {
    if (!j.contains(key) || !j[key].is_string()) throw Error(ErrorKind::Input, str(file, ": damaged (no '", key, "')"));
    return j[key].get<std::string>();
  };
  s.framelift_version = text("framelift_version");
  s.input_fingerprint = text("input_fingerprint");
  if (j.contains("segment_frames") && !j["segment_frames"].is_number_integer())
    throw Error(ErrorKind::Input, str(file, ": damaged ('segment_frames' has the wrong type)"));
  s.segment_frames = j.value("segment_frames", int64_t(0));
  return s;
}

std::string spec_difference(const JobSpec& saved, const JobSpec& wanted) {
  if (saved.input_fingerprint != wanted.input_fingerprint) return "the input changed since the job started";
  if (saved.pipeline != wanted.pipeline) return "the pipeline changed";
  if (computing_options(saved.stage_defaults) != computing_options(wanted.stage_defaults)) return "the model options changed";
  if (saved.encoder != wanted.encoder) return "the encoder settings changed";
  if (saved.container != wanted.container) return "the container changed";
  if (saved.segment_frames != wanted.segment_frames) return "the segment length changed";
  if (saved.max_frames != wanted.max_frames) return "the frame limit changed";
  if (saved.framelift_version != wanted.framelift_version)
    return "the job was started by framelift " + saved.framelift_version;
  return "";
}

}  // namespace framelift::jobs
