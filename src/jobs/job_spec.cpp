#include "jobs/job_spec.h"

#include "util/error.h"

namespace framelift::jobs {
namespace {

nlohmann::json encoder_json(const media::EncoderSettings& e) {
  nlohmann::json j{{"codec", e.codec}, {"preset", e.preset}, {"pix_fmt", e.pix_fmt}, {"options", e.options},
                   {"threads", e.threads}};
  j["crf"] = e.crf ? nlohmann::json(*e.crf) : nlohmann::json();
  return j;
}

media::EncoderSettings encoder_from(const nlohmann::json& j) {
  media::EncoderSettings e;
  e.codec = j.value("codec", "");
  e.preset = j.value("preset", "");
  e.pix_fmt = j.value("pix_fmt", "");
  e.options = j.value("options", std::map<std::string, std::string>{});
  e.threads = j.value("threads", 0);
  if (j.contains("crf") && !j["crf"].is_null()) e.crf = j["crf"].get<double>();
  return e;
}

// Options that say where a stage runs, not what it computes.
bool placement_option(const std::string& key) { return key == "device" || key == "threads"; }

std::map<std::string, std::string> computing_options(std::map<std::string, std::string> options) {
  std::erase_if(options, [](const auto& kv) { return placement_option(kv.first); });
  return options;
}

}  // namespace

nlohmann::json to_json(const JobSpec& s) {
  return {{"framelift_version", s.framelift_version},
          {"input", s.input},
          {"input_fingerprint", s.input_fingerprint},
          {"output", s.output},
          {"container", s.container},
          {"pipeline", s.pipeline},
          {"stage_defaults", s.stage_defaults},
          {"encoder", encoder_json(s.encoder)},
          {"decoder",
           {{"hwaccel", s.decoder.hwaccel},
            {"on_error", s.decoder.on_error == media::DecodeErrorPolicy::Fail ? "fail" : "skip"},
            {"threads", s.decoder.threads}}},
          {"segment_frames", s.segment_frames},
          {"max_frames", s.max_frames}};
}

JobSpec spec_from_json(const nlohmann::json& j) {
  JobSpec s;
  s.framelift_version = j.at("framelift_version").get<std::string>();
  s.input = j.at("input").get<std::string>();
  s.input_fingerprint = j.at("input_fingerprint").get<std::string>();
  s.output = j.at("output").get<std::string>();
  s.container = j.value("container", "");
  s.pipeline = j.value("pipeline", "");
  s.stage_defaults = j.value("stage_defaults", std::map<std::string, std::string>{});
  s.encoder = encoder_from(j.at("encoder"));
  const auto& d = j.at("decoder");
  s.decoder.hwaccel = d.value("hwaccel", "");
  s.decoder.on_error = d.value("on_error", "skip") == "fail" ? media::DecodeErrorPolicy::Fail : media::DecodeErrorPolicy::Skip;
  s.decoder.threads = d.value("threads", 0);
  s.segment_frames = j.value("segment_frames", int64_t(0));
  s.max_frames = j.value("max_frames", int64_t(0));
  return s;
}

std::string spec_difference(const JobSpec& saved, const JobSpec& wanted) {
  if (saved.input_fingerprint != wanted.input_fingerprint) return "the input changed since the job started";
  if (saved.pipeline != wanted.pipeline) return "the pipeline changed";
  if (computing_options(saved.stage_defaults) != computing_options(wanted.stage_defaults)) return "the model options changed";
  if (encoder_json(saved.encoder) != encoder_json(wanted.encoder)) return "the encoder settings changed";
  if (saved.container != wanted.container) return "the container changed";
  if (saved.segment_frames != wanted.segment_frames) return "the segment length changed";
  if (saved.max_frames != wanted.max_frames) return "the frame limit changed";
  if (saved.framelift_version != wanted.framelift_version)
    return "the job was started by framelift " + saved.framelift_version;
  return "";
}

}  // namespace framelift::jobs
