#include "api/plan_job.h"

#include <filesystem>
#include <set>

#include "api/plan_pipeline.h"
#include "library/catalog.h"
#include "library/model_locator.h"
#include "media/probe.h"
#include "plan/calibration.h"
#include "plan/format.h"
#include "plan/report.h"
#include "util/disk_space.h"
#include "util/error.h"
#include "util/json_text.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::api {
namespace {

plan::Job describe_input(const std::string& input) {
  nlohmann::json info = media::probe(input, {.count_frames = true});
  const int v = info.value("video_stream", -1);
  if (v < 0) throw Error(ErrorKind::Input, str(input, ": no video stream"));
  const auto& s = info["streams"][v];
  plan::Job j;
  j.width = s.value("width", 0);
  j.height = s.value("height", 0);
  j.fps = s.contains("frame_rate") && s["frame_rate"].is_number() ? s["frame_rate"].get<double>() : 0;
  j.duration_s = info["duration_s"].is_number() ? info["duration_s"].get<double>() : 0;
  j.frames = s.value("frame_count", int64_t{0});
  if (j.frames <= 0 && j.fps > 0) j.frames = static_cast<int64_t>(j.duration_s * j.fps);
  if (j.width <= 0 || j.height <= 0 || j.frames <= 0)
    throw Error(ErrorKind::Input, str(input, ": the probe gives no size or frame count to plan with"));
  std::error_code ec;
  const auto bytes = fs::file_size(input, ec);
  j.input_bytes = !ec ? double(bytes) : info["bit_rate"].is_number() ? info["bit_rate"].get<double>() / 8 * j.duration_s : 0;
  if (s.value("bits_per_pixel", 0) > 0) j.raw_bits_per_pixel = s["bits_per_pixel"].get<double>();
  // What a job copies of the other streams into its output (the probe read every packet).
  for (const auto& other : info["streams"])
    if (other.value("index", -1) != v) j.other_stream_bytes += other.value("packet_bytes", 0.0);
  return j;
}

// The catalog models of the stages that are nowhere on this machine: a run installs them first.
double model_bytes_to_install(const std::vector<plan::StageSpec>& stages) {
  const library::Catalog catalog = library::Catalog::load_default();
  std::set<std::string> counted;
  double bytes = 0;
  for (const plan::StageSpec& stage : stages) {
    const library::CatalogModel* model = catalog.find(stage.model);
    if (!model || !counted.insert(model->name).second) continue;
    try {
      library::resolve_model_file(model->name);
      continue;  // installed, on the model path or unpacked by setup.sh
    } catch (const Error&) {
      // Not here, or damaged where it is: the run installs it first either way.
    }
    for (const library::ModelFile& f : model->files) bytes += double(f.size);
  }
  return bytes;
}

// The folder the run will write in (the output's; the current one without -o), as given.
fs::path output_folder(const std::string& output) {
  if (output.empty()) return fs::current_path();
  const fs::path parent = fs::path(output).parent_path();
  return parent.empty() ? fs::current_path() : parent;
}

}  // namespace

plan::Plan make_job_plan(const PlanRequest& q) {
  if (q.input.empty()) throw Error(ErrorKind::Usage, "-i/--input is required for a video plan");
  plan::Job job = describe_input(q.input);
  job.codec = q.codec;
  job.preset = q.preset;
  job.crf = q.crf;
  job.precision = q.precision;
  job.tile = q.tile;
  job.batch = q.batch;
  job.segment_s = q.segment_seconds;
  job.stages = plan_stages_for(q.pipeline, {job.width, job.height, job.fps});
  job.pipeline = q.pipeline;
  job.model_bytes = model_bytes_to_install(job.stages);
  plan::PlanOptions options;
  options.output_folder = output_folder(q.output).string();
  options.output_folder_free_bytes = double(free_disk_bytes(options.output_folder));
  options.deadline_s = q.deadline_s;
  options.budget = q.budget;
  options.spot = q.spot;
  options.memory_margin = q.memory_margin;
  options.interruption_rate = q.interruption_rate;
  options.only_gpus = q.gpus;
  plan::PlanCatalog catalog = plan::PlanCatalog::load_default({q.catalogs.begin(), q.catalogs.end()});
  if (q.local) {
    plan::Device cpu = plan::local_cpu();
    catalog.add(cpu, plan::Provider{plan::kLocalProvider, "this machine", 0, 100, 0, 0},
                plan::Offer{plan::kLocalProvider, "cpu", "", q.local_price, {}, cpu.cores});
  }
  plan::Calibration calibration;
  for (const auto& f : q.calibrations) calibration.add_manifest_file(f, catalog);
  return plan::make_plan(job, catalog, options, calibration);
}

}  // namespace framelift::api

namespace framelift {

PlanResult plan_job(const PlanRequest& request) {
  const plan::Plan p = api::make_job_plan(request);
  PlanResult r;
  for (size_t i = 0; i < p.rows.size(); ++i) {
    const plan::OfferEstimate& o = p.rows[i];
    PlanRow row;
    row.gpu = o.offer.gpu;
    row.gpu_name = o.est.device.name;
    row.provider = o.provider.id;
    row.instance = o.offer.instance;
    row.fits = plan::fit_name(o.est.fit);
    row.recommended = p.recommended && *p.recommended == i;
    row.tile = o.est.tile;
    row.fps = o.est.fps;
    row.memory_gb = o.est.memory_gb;
    row.time_s = o.time_s;
    row.cost = o.cost;
    row.spot_time_s = o.spot_time_s;
    row.spot_cost = o.spot_cost;
    row.meets_deadline = o.meets_deadline;
    row.within_budget = o.within_budget;
    row.cost_known = o.est.cost_known();
    row.warnings = o.est.warnings;
    r.rows.push_back(std::move(row));
  }
  r.disk.peak_bytes = p.disk.peak_bytes();
  r.disk.segments_bytes = p.disk.segments_bytes;
  r.disk.output_bytes = p.disk.output_bytes;
  r.disk.model_bytes = p.disk.model_bytes;
  r.disk.input_bytes = p.disk.input_bytes;
  r.disk.bits_per_pixel = p.disk.bits_per_pixel;
  r.disk.bits_from = p.disk.bits_from;
  r.disk.folder = p.options.output_folder;
  r.disk.free_bytes = int64_t(p.options.output_folder_free_bytes);
  r.recommendation = p.recommendation;
  r.notes = p.notes;
  r.text = plan::plan_text(p);
  r.json = json_text(plan::plan_json(p), 2);
  r.html = plan::plan_html(p);
  return r;
}

}  // namespace framelift
