#include "jobs/run_spec.h"

#include "util/error.h"
#include "util/json_path.h"
#include "util/str.h"

namespace framelift::jobs {
namespace {

using nlohmann::json;

nlohmann::json encoder_json(const media::EncoderSettings& e) {
  json j{{"codec", e.codec}, {"preset", e.preset}, {"pix_fmt", e.pix_fmt}, {"options", e.options}, {"threads", e.threads}};
  j["crf"] = e.crf ? json(*e.crf) : json();
  return j;
}

// Reads j[key] as T, or `fallback` when the key is absent (a job.json of an older version);
// a key of the wrong type is damage, named.
template <class T>
T read(const json& j, const char* key, const T& fallback, const std::string& file) {
  if (!j.is_object()) throw Error(ErrorKind::Input, str(file, ": damaged (expected an object around '", key, "')"));
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw Error(ErrorKind::Input, str(file, ": damaged ('", key, "' has the wrong type)"));
  }
}

template <class T>
T require(const json& j, const char* key, const std::string& file) {
  if (!j.is_object() || !j.contains(key)) throw Error(ErrorKind::Input, str(file, ": damaged (no '", key, "')"));
  return read<T>(j, key, T{}, file);
}

// A file name, in either form path_json() writes.
std::string require_path(const json& j, const char* key, const std::string& file) {
  const std::optional<std::string> path = path_from_json(require<json>(j, key, file));
  if (!path) throw Error(ErrorKind::Input, str(file, ": damaged ('", key, "' is not a file name)"));
  return *path;
}

media::EncoderSettings encoder_from(const json& j, const std::string& file) {
  media::EncoderSettings e;
  e.codec = read<std::string>(j, "codec", "", file);
  e.preset = read<std::string>(j, "preset", "", file);
  e.pix_fmt = read<std::string>(j, "pix_fmt", "", file);
  e.options = read<std::map<std::string, std::string>>(j, "options", {}, file);
  e.threads = read<int>(j, "threads", 0, file);
  if (j.contains("crf") && !j["crf"].is_null()) e.crf = read<double>(j, "crf", 0, file);
  return e;
}

}  // namespace

void add_to_json(const RunSpec& s, json& j) {
  j["input"] = path_json(s.input);
  j["output"] = path_json(s.output.string());
  j["container"] = s.container;
  j["pipeline"] = s.pipeline;
  j["stage_defaults"] = s.stage_defaults;
  j["encoder"] = encoder_json(s.encoder);
  j["decoder"] = {{"hwaccel", s.decoder.hwaccel},
                  {"on_error", s.decoder.on_error == media::DecodeErrorPolicy::Fail ? "fail" : "skip"},
                  {"threads", s.decoder.threads}};
  j["max_frames"] = s.max_frames;
  j["color_conversion"] = media::color_conversion_name(s.color_conversion);
  j["queue_depth"] = s.queue_depth;
}

RunSpec run_spec_from_json(const json& j, const std::string& file) {
  RunSpec s;
  s.input = require_path(j, "input", file);
  s.output = require_path(j, "output", file);
  s.container = read<std::string>(j, "container", "", file);
  s.pipeline = read<std::string>(j, "pipeline", "", file);
  s.stage_defaults = read<std::map<std::string, std::string>>(j, "stage_defaults", {}, file);
  s.encoder = encoder_from(require<json>(j, "encoder", file), file);
  const json decoder = read<json>(j, "decoder", json::object(), file);
  s.decoder.hwaccel = read<std::string>(decoder, "hwaccel", "", file);
  const std::string on_error = read<std::string>(decoder, "on_error", "skip", file);
  if (on_error != "skip" && on_error != "fail") throw Error(ErrorKind::Input, str(file, ": damaged (decoder on_error '", on_error, "')"));
  s.decoder.on_error = on_error == "fail" ? media::DecodeErrorPolicy::Fail : media::DecodeErrorPolicy::Skip;
  s.decoder.threads = read<int>(decoder, "threads", 0, file);
  s.max_frames = read<int64_t>(j, "max_frames", 0, file);
  try {
    s.color_conversion = media::parse_color_conversion(read<std::string>(j, "color_conversion", "auto", file));
  } catch (const Error&) {
    throw Error(ErrorKind::Input, str(file, ": damaged (color_conversion '", j.value("color_conversion", ""), "')"));
  }
  s.queue_depth = read<int64_t>(j, "queue_depth", 8, file);
  if (s.queue_depth < 1) throw Error(ErrorKind::Input, str(file, ": damaged (queue_depth ", s.queue_depth, ")"));
  return s;
}

}  // namespace framelift::jobs
