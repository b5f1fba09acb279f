#include "framelift/profile.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>

extern "C" {
#include <libavutil/avutil.h>
}

#include <nlohmann/json.hpp>

#include "api/plan_pipeline.h"
#include "api/request.h"
#include "framelift/version.h"
#include "infer/device.h"
#include "media/demuxer.h"
#include "media/probe.h"
#include "run/profile.h"
#include "plan/gpu_catalog.h"
#include "plan/pipeline_spec.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/json_text.h"
#include "util/log.h"
#include "util/str.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace framelift {
namespace {

// What was measured and how: the engine's options plus the tile and batch the stages ran with.
struct Measured {
  pipeline::ProfileOptions profile;
  int tile = 0, batch = 1;
};

int stage_default_int(const RunRequest& r, const char* key, int fallback) {
  auto it = r.stage_defaults.find(key);
  return it == r.stage_defaults.end() ? fallback : std::atoi(it->second.c_str());
}

std::string stage_default(const RunRequest& r, const char* key, const char* fallback) {
  auto it = r.stage_defaults.find(key);
  return it == r.stage_defaults.end() ? fallback : it->second;
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string mib(double bytes) { return fixed(bytes / (1 << 20), 0) + " MiB"; }

// The planner's view of the pipeline's model stages (architecture and parameters), in order;
// empty entries where it has none (a model file the catalog does not describe).
std::vector<std::optional<plan::StageSpec>> planner_stages(const pipeline::ProfileResult& r, const std::string& text,
                                                           double fps, std::vector<std::string>& notes) {
  std::vector<std::optional<plan::StageSpec>> out(r.stages.size());
  std::vector<plan::StageSpec> specs;
  try {
    specs = api::plan_stages_for(text, {0, 0, fps});
  } catch (const Error& e) {
    notes.push_back(str("no calibration runs: ", e.what()));
    return out;
  }
  size_t next = 0;
  for (size_t i = 0; i < r.stages.size() && next < specs.size(); ++i) {
    while (next < specs.size() && specs[next].kind == "resize" && r.stages[i].name != "resize") ++next;
    if (next < specs.size() && specs[next].kind == r.stages[i].name && specs[next].priced) out[i] = specs[next];
    ++next;
  }
  return out;
}

// The device's dense peak for the precision in use, in GFLOP/s (0 when the catalog lacks it):
// what achieved rates are measured against.
double peak_gflops(const plan::PlanCatalog& catalog, const std::string& device_id, const std::string& precision) {
  const plan::Device cpu = plan::local_cpu();
  const plan::Device* d = device_id == "cpu" ? &cpu : catalog.device(device_id);
  if (!d) return 0;
  const double tflops = precision == "fp32"             ? d->fp32_tflops
                        : precision == "bf16"         ? d->bf16_tensor_tflops
                                                      : d->fp16_tensor_tflops;
  return tflops * 1e3;
}

// The encoded sample's video packets, keyframes apart from the others: what the planner's disk
// estimate scales to the job (a job's segments each start with a keyframe; the sample's
// stretches, joined, have one each too).
struct EncodedSize {
  int64_t key_frames = 0, key_bytes = 0, other_frames = 0, other_bytes = 0;
};

EncodedSize encoded_size(const fs::path& file) {
  media::Demuxer demux(file.string());
  media::PacketPtr pkt = media::make_packet();
  EncodedSize e;
  while (demux.read(pkt.get())) {
    if (pkt->stream_index != demux.video_index()) continue;
    const bool key = pkt->flags & AV_PKT_FLAG_KEY;
    (key ? e.key_frames : e.other_frames) += 1;
    (key ? e.key_bytes : e.other_bytes) += pkt->size;
  }
  return e;
}

// `target` and `device_id`: where the stages ran, and its catalog id ("cpu" for the CPU).
json make_manifest(const Measured& a, const pipeline::ProfileResult& r, const json& input, const json& output,
                   const EncodedSize& encoded, const infer::ExecutionTarget& target, const std::string& device_id,
                   const plan::PlanCatalog& catalog) {
  const auto& o = a.profile.run;
  const int v = input.value("video_stream", 0);
  const json& in = input["streams"][v];
  const double fps = in.contains("frame_rate") && in["frame_rate"].is_number() ? in["frame_rate"].get<double>() : 0;
  const json& out_stream = output["streams"][output.value("video_stream", 0)];
  const int out_w = out_stream.value("width", 0), out_h = out_stream.value("height", 0);

  std::vector<std::string> notes;
  const auto specs = planner_stages(r, o.pipeline, fps, notes);
  const double peak = peak_gflops(catalog, device_id, infer::precision_name(target.dtype));
  const double end_to_end_s = r.seconds("encode") + r.seconds("encode.idle");
  double inference_s = 0;
  json stages = json::array(), runs = json::array();
  for (size_t i = 0; i < r.stages.size(); ++i) {
    const auto& s = r.stages[i];
    inference_s += s.inference_s;
    json st = {{"index", s.index}, {"name", s.name}, {"own_s", s.own_s}, {"upload_s", s.upload_s},
               {"inference_s", s.inference_s}, {"download_s", s.download_s}, {"inference_calls", s.inference_calls},
               {"inference_pixels", s.inference_pixels}, {"peak_activation_bytes", s.peak_activation_bytes},
               {"call_s", s.call_s},
               {"share", end_to_end_s > 0 ? s.total_s() / end_to_end_s : 0.0},
               {"frames_per_s", s.total_s() > 0 ? double(r.frames_in) / s.total_s() : 0.0}};
    if (specs[i] && s.inference_calls > 0) {
      const plan::StageSpec& p = *specs[i];
      const double flops = p.cost.flops_per_px() * s.inference_pixels;
      st["arch"] = p.cost.arch;
      st["gflops"] = flops / 1e9;
      st["achieved_gflops_per_s"] = s.inference_s > 0 ? flops / s.inference_s / 1e9 : 0.0;
      if (peak > 0) st["fraction_of_peak"] = st["achieved_gflops_per_s"].get<double>() / peak;
      runs.push_back({{"stage", s.index}, {"arch", p.cost.arch}, {"scale", p.cost.scale}, {"params", p.params},
                      {"calls", s.inference_calls}, {"input_pixels", s.inference_pixels / s.inference_calls},
                      {"peak_input_pixels", s.largest_call_pixels},
                      {"input_width", in.value("width", 0)}, {"input_height", in.value("height", 0)},
                      {"batch", std::max(1, a.batch)},
                      {"seconds", s.call_s > 0 ? s.call_s : s.inference_s / s.inference_calls},
                      {"peak_activation_bytes", s.peak_activation_bytes}});
    }
    stages.push_back(st);
  }
  json sections = json::object();
  for (const auto& [key, st] : r.sections) {
    if (st.calls == 0) continue;  // counters only
    sections[key] = {{"seconds", st.seconds}, {"calls", st.calls},
                     {"share", end_to_end_s > 0 ? st.seconds / end_to_end_s : 0.0}};
  }
  const infer::RuntimeVersions versions = infer::runtime_versions();
  const auto& enc = o.encoder;
  const int encoder_threads = enc.options.count("threads") ? std::atoi(enc.options.at("threads").c_str())
                                                           : enc.threads > 0 ? enc.threads : int(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  const double encode_s = r.seconds("encode");
  json encoders = json::array();
  if (encode_s > 0 && out_w > 0)
    encoders.push_back({{"codec", enc.codec.empty() ? "libx264" : enc.codec}, {"preset", enc.preset}, {"width", out_w},
                        {"height", out_h}, {"threads", std::max(1, encoder_threads)}, {"fps", r.frames_out / encode_s},
                        {"key_frames", encoded.key_frames}, {"key_bytes", encoded.key_bytes},
                        {"other_frames", encoded.other_frames}, {"other_bytes", encoded.other_bytes}});
  json sample = json::array();
  for (const auto& st : r.sample) sample.push_back({{"seek", st.seek}, {"from", st.from}, {"to", st.to}});
  return {
      {"schema", 1},
      {"kind", "framelift-profile"},
      {"created", now_utc()},
      {"versions",
       {{"framelift", version()}, {"libtorch", versions.libtorch}, {"ffmpeg", av_version_info()},
        {"cuda_runtime", versions.cuda_runtime}, {"cudnn", versions.cudnn}, {"driver", versions.driver}}},
      {"device",
       {{"id", device_id}, {"name", r.device}, {"threads", r.threads}, {"peak_gflops_per_s", peak},
        {"memory_bytes", target.is_cuda() ? infer::total_device_memory(target.device) : int64_t(0)}}},
      {"precision", infer::precision_name(target.dtype)},
      {"pipeline", o.pipeline},
      {"tile", a.tile},
      {"batch", a.batch},
      {"seed", a.profile.seed},
      {"input",
       {{"file", o.input}, {"width", in.value("width", 0)}, {"height", in.value("height", 0)}, {"fps", fps},
        {"frames", in.value("frame_count", int64_t{0})}}},
      {"sample",
       {{"frames_in", r.frames_in}, {"frames_out", r.frames_out}, {"frames_decoded", r.frames_decoded},
        {"stretches", sample}, {"warmup_frames", a.profile.warmup_frames}, {"output_width", out_w},
        {"output_height", out_h}}},
      {"encoder",
       {{"codec", enc.codec.empty() ? "libx264" : enc.codec}, {"preset", enc.preset},
        {"crf", enc.crf ? json(*enc.crf) : json(nullptr)}, {"options", enc.options}, {"threads", encoder_threads}}},
      {"wall_s", r.wall_s},
      {"warmup_s", r.warmup_s},
      {"end_to_end_s", end_to_end_s},
      {"fps",
       {{"end_to_end", end_to_end_s > 0 ? r.frames_out / end_to_end_s : 0.0},
        {"inference_only", inference_s > 0 ? r.frames_out / inference_s : 0.0},
        {"end_to_end_vs_inference", inference_s > 0 && end_to_end_s > 0 ? inference_s / end_to_end_s : 0.0}}},
      {"memory", {{"peak_device_bytes", r.peak_device_bytes}, {"peak_host_bytes", r.peak_host_bytes}}},
      {"stages", stages},
      {"sections", sections},
      {"runs", runs},
      {"encoders", encoders},
      {"notes", notes},
  };
}

std::string manifest_text(const json& m) {
  std::string t = str("profile: ", m["input"]["file"].get<std::string>(), " ", m["input"]["width"].get<int>(), "x",
                      m["input"]["height"].get<int>(), ", ", m["sample"]["frames_in"].get<int64_t>(), " frames in ",
                      m["sample"]["stretches"].size(), " stretch(es) -> ", m["sample"]["frames_out"].get<int64_t>(),
                      " frames ", m["sample"]["output_width"].get<int>(), "x", m["sample"]["output_height"].get<int>(),
                      "; ", m["device"]["name"].get<std::string>(), ", ", m["device"]["threads"].get<int>(), " threads\n");
  const json& fps = m["fps"];
  t += str("end to end ", fixed(fps["end_to_end"].get<double>(), 3), " frames/s, inference only ",
           fixed(fps["inference_only"].get<double>(), 3), " frames/s (end to end / inference: ",
           fixed(fps["end_to_end_vs_inference"].get<double>(), 2), ")\n");
  t += "section                 seconds   share   calls\n";
  for (const auto& [key, s] : m["sections"].items()) {
    char line[160];
    std::snprintf(line, sizeof line, "%-22s %8.3f %6.1f%% %7lld\n", key.c_str(), s["seconds"].get<double>(),
                  100 * s["share"].get<double>(), static_cast<long long>(s["calls"].get<int64_t>()));
    t += line;
  }
  for (const auto& s : m["stages"]) {
    t += str("stage ", s["index"].get<int>(), " ", s["name"].get<std::string>(), ": ",
             fixed(s["frames_per_s"].get<double>(), 3), " input frames/s, inference ", fixed(s["inference_s"].get<double>(), 3),
             " s in ", s["inference_calls"].get<int64_t>(), " calls");
    if (s.contains("achieved_gflops_per_s"))
      t += str(" (", fixed(s["achieved_gflops_per_s"].get<double>(), 1), " GFLOP/s",
               s.contains("fraction_of_peak") ? str(", ", fixed(100 * s["fraction_of_peak"].get<double>(), 0), "% of peak") : "",
               ", ", s["arch"].get<std::string>(), ")");
    if (s["peak_activation_bytes"].get<int64_t>() > 0) t += str(", activations ", mib(s["peak_activation_bytes"].get<double>()));
    t += "\n";
  }
  t += str("memory: device peak ", mib(m["memory"]["peak_device_bytes"].get<double>()), ", host peak (whole process) ",
           mib(m["memory"]["peak_host_bytes"].get<double>()), "\n");
  for (const auto& n : m["notes"]) t += "note: " + n.get<std::string>() + "\n";
  return t;
}

}  // namespace

ProfileResult profile(const ProfileRequest& q) {
  if (q.frames < 1) throw Error(ErrorKind::Usage, "--frames must be at least 1");
  if (q.stretches < 1) throw Error(ErrorKind::Usage, "--stretches must be at least 1");
  Measured a;
  a.tile = stage_default_int(q.run, "tile", 0);
  a.batch = stage_default_int(q.run, "batch", 1);
  a.profile.frames = q.frames;
  a.profile.stretches = q.stretches;
  a.profile.warmup_frames = q.warmup_frames;
  a.profile.seed = q.seed;
  RunRequest run = q.run;
  run.display = ProgressDisplay::None;
  run.output.clear();
  a.profile.run = api::run_options_of(run);
  auto& o = a.profile.run;
  const json input = media::probe(o.input, {.count_frames = true});
  if (input.value("video_stream", -1) < 0) throw Error(ErrorKind::Input, str(o.input, ": no video stream"));
  if (!q.manifest_file.empty()) {
    o.output = q.manifest_file;  // only for its checks: the manifest is written like an output
    o.overwrite = q.overwrite;
    pipeline::check_output_path(o);
  }
  std::string pattern = (fs::temp_directory_path() / "framelift-profile-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw Error(ErrorKind::Output, str(pattern, ": cannot create a temporary folder"));
  const fs::path work = pattern;
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{work};
  o.output = work / "sample.mkv";
  o.overwrite = true;
  const pipeline::ProfileResult r = pipeline::profile_pipeline(a.profile);
  const json output = media::probe(o.output.string(), {.count_frames = false});

  const auto target = infer::resolve_target(stage_default(q.run, "device", "auto"), stage_default(q.run, "precision", ""));
  const plan::PlanCatalog catalog = plan::PlanCatalog::load_default();
  std::string device_id = "cpu";
  if (target.is_cuda()) {
    device_id = plan::catalog_id_for(r.device, infer::total_device_memory(target.device) / 1e9, catalog);
    if (device_id.empty()) log::warn("profile: ", r.device, " is not in the planner's catalog; add it with --catalog");
  }
  const json manifest = make_manifest(a, r, input, output, encoded_size(o.output), target, device_id, catalog);
  if (!q.keep_output.empty()) {
    std::error_code ec;
    const fs::path partial = partial_path_for(q.keep_output);
    fs::copy_file(o.output, partial, fs::copy_options::overwrite_existing, ec);
    if (ec) throw Error(ErrorKind::Output, str(q.keep_output, ": cannot write the sample output (", ec.message(), ")"));
    commit_file(partial, q.keep_output);
  }
  ProfileResult result;
  result.manifest_json = json_text(manifest, 2) + "\n";
  result.text = manifest_text(manifest);
  result.end_to_end_fps = manifest["fps"]["end_to_end"].get<double>();
  result.inference_fps = manifest["fps"]["inference_only"].get<double>();
  if (!q.manifest_file.empty()) write_file_atomic(q.manifest_file, result.manifest_json);
  return result;
}

}  // namespace framelift
