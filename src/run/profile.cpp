#include "run/profile.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

#include "infer/device.h"
#include "infer/memory_budget.h"
#include "pipeline/stage_spec.h"
#include "util/error.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::pipeline {
namespace {

int64_t resident_high_water_mark() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;  // kB
  return 0;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

double ProfileResult::seconds(const std::string& section) const {
  auto it = sections.find(section);
  return it == sections.end() ? 0 : it->second.seconds;
}

std::vector<SampleStretch> choose_sample(const jobs::SegmentPlan& plan, int64_t frames, int stretches, uint64_t seed) {
  const std::vector<int64_t>& frame_pts = plan.frame_pts;  // presentation order
  const int64_t n = int64_t(frame_pts.size());
  if (n == 0) return {};
  frames = std::clamp<int64_t>(frames, 1, n);
  stretches = int(std::clamp<int64_t>(stretches, 1, frames));
  const int64_t per = (frames + stretches - 1) / stretches;
  std::vector<int64_t> starts;
  std::mt19937_64 random(seed);
  for (int k = 0; k < stretches; ++k) {
    const int64_t room = n - per;
    int64_t start = stretches == 1 ? 0 : room * k / (stretches - 1);
    if (seed != 0) start = std::uniform_int_distribution<int64_t>(0, std::max<int64_t>(0, room))(random);
    starts.push_back(start);
  }
  std::sort(starts.begin(), starts.end());
  // Frame index ranges, merged where they touch (no seek between them).
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t s : starts) {
    const int64_t e = std::min(n, s + per);
    if (!ranges.empty() && s <= ranges.back().second) ranges.back().second = std::max(ranges.back().second, e);
    else ranges.push_back({s, e});
  }
  std::vector<SampleStretch> sample;
  for (auto [s, e] : ranges)
    sample.push_back({plan.keyframe_at_or_before(frame_pts[size_t(s)]), frame_pts[size_t(s)], frame_pts[size_t(e - 1)]});
  return sample;
}

namespace {

// The same pipeline on the first frames, so that one-time costs (oneDNN's primitive cache, the
// block cache, cuDNN autotuning) are not measured as frame time. Its seconds.
double warm_up(const ProfileOptions& o) {
  RunOptions warm = o.run;
  warm.output = o.run.output.parent_path() / ("warmup-" + o.run.output.filename().string());
  warm.overwrite = true;
  warm.max_frames = o.warmup_frames;
  warm.progress = ProgressMode::None;
  const auto t = std::chrono::steady_clock::now();
  run_pipeline(warm);
  std::error_code ec;
  fs::remove(warm.output, ec);
  return seconds_since(t);
}

// The device the stages run on, for the memory probe: the stage defaults' --device.
infer::ExecutionTarget profiled_target(const RunOptions& run) {
  const auto d = run.stage_defaults.find("device");
  const auto p = run.stage_defaults.find("precision");
  return infer::resolve_target(d == run.stage_defaults.end() ? "auto" : d->second,
                               p == run.stage_defaults.end() ? "" : p->second);
}

// Stage `index`'s share of the profile (its sections are keyed "INDEX:...").
StageProfile stage_profile(const ProfileResult& r, int index, const std::string& name) {
  StageProfile s;
  s.index = index;
  s.name = name;
  const std::string k = str(s.index, ":");
  s.own_s = r.seconds(k + "stage");
  s.upload_s = r.seconds(k + "upload");
  s.download_s = r.seconds(k + "download");
  const auto it = r.sections.find(k + "inference");
  if (it == r.sections.end()) return s;
  s.inference_s = it->second.seconds;
  s.inference_calls = it->second.calls;
  s.inference_pixels = it->second.work;
  s.largest_call_pixels = it->second.max_work;
  std::vector<double> rates;
  for (auto [seconds, pixels] : it->second.spans)
    if (pixels > 0) rates.push_back(seconds / pixels);
  if (!rates.empty() && s.inference_calls > 0) {
    std::nth_element(rates.begin(), rates.begin() + rates.size() / 2, rates.end());
    s.call_s = rates[rates.size() / 2] * s.inference_pixels / s.inference_calls;
  }
  s.peak_activation_bytes = it->second.peak_bytes;
  return s;
}

}  // namespace

ProfileResult profile_pipeline(const ProfileOptions& o) {
  ProfileResult r;
  const jobs::SegmentPlan plan = jobs::plan_segments(o.run.input, 0);
  r.sample = choose_sample(plan, o.frames, o.stretches, o.seed);
  if (r.sample.empty()) throw Error(ErrorKind::Input, str(o.run.input, ": the video stream has no frames"));
  if (o.warmup_frames > 0) r.warmup_s = warm_up(o);

  const infer::ExecutionTarget target = profiled_target(o.run);
  if (!target.is_cuda()) infer::install_cpu_memory_tracker();
  r.device = target.describe();
  int64_t base = infer::device_memory_in_use(target.device);
  infer::reset_device_memory_peak(target.device);
  // Rise above the level at the previous call, at the highest point since (profiler.h).
  Profiler profiler([&] {
    const int64_t rise = infer::device_memory_peak(target.device) - base;
    infer::reset_device_memory_peak(target.device);
    base = infer::device_memory_in_use(target.device);
    return std::max<int64_t>(0, rise);
  });
  RunOptions run = o.run;
  run.sample = r.sample;
  run.max_frames = 0;
  const auto start = std::chrono::steady_clock::now();
  const RunReport report = run_pipeline(run, {.profiler = &profiler});
  r.wall_s = seconds_since(start);
  r.frames_in = report.frames_in;
  r.frames_out = report.frames_out;
  r.sections = profiler.sections();
  r.frames_decoded = int64_t(r.sections["decode.frames"].work);
  r.peak_device_bytes = infer::device_memory_peak(target.device);
  r.peak_host_bytes = resident_high_water_mark();
  r.threads = at::get_num_threads();

  const std::vector<StageSpec> specs = parse_pipeline(o.run.pipeline);
  for (size_t i = 0; i < specs.size(); ++i) r.stages.push_back(stage_profile(r, int(i) + 1, specs[i].name));
  return r;
}

}  // namespace framelift::pipeline
