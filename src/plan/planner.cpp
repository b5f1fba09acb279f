#include "plan/planner.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "plan/format.h"
#include "util/disk_space.h"
#include "util/str.h"
#include "util/tile_spans.h"

namespace framelift::plan {

int Job::out_width() const {
  double w = width;
  for (const auto& s : stages) w *= s.scale;
  return static_cast<int>(std::lround(w));
}

int Job::out_height() const {
  double h = height;
  for (const auto& s : stages) h *= s.scale;
  return static_cast<int>(std::lround(h));
}

int64_t Job::out_frames() const {
  int64_t f = frames;
  for (const auto& s : stages) f *= s.frame_factor;
  return f;
}

TiledPixels tiled_input_pixels(double w, double h, int tile, int overlap, int multiple) {
  const double m = std::max(1, multiple);
  auto up = [&](double v) { return std::ceil(v / m) * m; };
  if (tile <= 0 || tile >= std::max(w, h)) return {up(w) * up(h), 1, up(w) * up(h)};
  // Tiles are separable: the windows' widths along x times their heights along y.
  auto windows = [&](double side, double* sum, double* largest) {
    const auto spans = tile_spans(int64_t(side), tile, overlap, multiple);
    for (const TileSpan& s : spans) {
      const double window = up(double(s.window_end - s.window_begin));
      *sum += window;
      *largest = std::max(*largest, window);
    }
    return int(spans.size());
  };
  double sx = 0, sy = 0, lx = 0, ly = 0;
  const int nx = windows(w, &sx, &lx), ny = windows(h, &sy, &ly);
  return {sx * sy, nx * ny, lx * ly};
}

const char* fit_name(Fit f) { return f == Fit::Yes ? "yes" : f == Fit::Tight ? "tight" : "no"; }

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double round_up(double v, int multiple) { return std::ceil(v / multiple) * multiple; }

struct MemoryPlan {
  bool ok = false;
  std::string why;
  int tile = 0;            // smallest tile chosen over the stages; 0: whole frames everywhere
  double peak_gb = 0;
};

// The largest tiles that leave `margin` of the device free; model weights stay resident for all
// stages, activations are needed one stage at a time.
MemoryPlan fit_memory(const Job& job, const Device& d, double margin, const Calibration& cal) {
  MemoryPlan m;
  const double bytes = precision_on(d, job.precision) == "fp32" ? 4 : 2;
  double weights = 0;
  for (const auto& s : job.stages)
    if (s.runs_network()) weights += s.cost.params * bytes;
  const double fixed = (d.cpu ? 0.5e9 : (kContextGb + kWorkspaceGb) * 1e9) + weights;
  const double total = d.memory_gb * 1e9;
  double w = job.width, h = job.height, worst = 0;
  for (const auto& s : job.stages) {
    if (!s.runs_network()) {
      w *= s.scale;
      h *= s.scale;
      continue;
    }
    const double per_px = s.cost.peak_elems_per_px * bytes * cal.memory_factor(d, s.cost.arch);
    // The tiler blends tiles into a float output frame with a weight plane on the device.
    const double buffers = w * h * s.scale * s.scale * 4 * 4 + w * h * 3 * bytes;
    const double avail = total * (1 - margin) - fixed - buffers;
    if (avail <= 0) {
      m.why = str("weights and buffers alone need ", gigabytes(fixed + buffers), " of ", gigabytes(total));
      return m;
    }
    const double mult = s.cost.size_multiple;
    if (!s.cost.tiled) {
      const double need = round_up(w, mult) * round_up(h, mult) * per_px;
      if (need > avail) {
        m.why = str(s.model, " runs on whole ", int(w), "x", int(h), " frames and needs ", gigabytes(fixed + buffers + need));
        return m;
      }
      worst = std::max(worst, buffers + need);
    } else if (job.tile > 0 && job.tile < std::max(w, h)) {
      // The tile the user asked for: its largest window, as the tiler cuts it.
      const double largest = tiled_input_pixels(w, h, job.tile, s.cost.tile_overlap, s.cost.tile_alignment()).largest;
      const double need = largest * per_px * std::max(1, job.batch);
      if (need > avail) {
        m.why = str(s.model, ": ", job.tile, " px tiles need ", gigabytes(fixed + buffers + need));
        return m;
      }
      m.tile = job.tile;
      worst = std::max(worst, buffers + need);
    } else {
      const double batch = std::max(1, job.batch);
      const double frame = round_up(w, mult) * round_up(h, mult) * per_px * batch;
      if (frame <= avail) {
        worst = std::max(worst, buffers + frame);
      } else {
        const double side = std::sqrt(avail / (per_px * batch)) - 2.0 * s.cost.tile_overlap;
        const int tile = static_cast<int>(std::floor(side / 16)) * 16;
        if (tile < kMinTile) {
          m.why = str(s.model, ": even a ", kMinTile, " px tile does not fit");
          return m;
        }
        m.tile = m.tile == 0 ? tile : std::min(m.tile, tile);
        const double edge = tile + 2.0 * s.cost.tile_overlap;
        worst = std::max(worst, buffers + edge * edge * per_px * batch);
      }
    }
    w *= s.scale;
    h *= s.scale;
  }
  m.ok = true;
  m.peak_gb = (fixed + worst) / 1e9;
  return m;
}

double tflops(const Device& d, const std::string& precision) {
  if (precision == "fp32") return d.fp32_tflops;
  return precision == "bf16" ? d.bf16_tensor_tflops : d.fp16_tensor_tflops;
}

// A stage without a cost model: what a manifest of this pipeline measured on this device, or
// unknown, left out of the figures and marked.
void add_unpriced_stage(const Job& job, size_t index, const Device& d, const Calibration& cal, DeviceEstimate& e) {
  const StageSpec& s = job.stages[index];
  if (const auto s_per_px = cal.measured_stage_s_per_px(d, job.pipeline, index)) {
    StageEstimate st;
    st.kind = s.kind;
    st.model = s.model;
    st.seconds_per_frame = *s_per_px * job.width * job.height;
    e.gpu_s_per_frame += st.seconds_per_frame;
    e.stages.push_back(st);
    return;
  }
  e.unknown_stages.push_back(s.model);
  e.warnings.push_back(str(s.model, ": cost unknown, left out of fps, time and cost (needs a profile: framelift profile)"));
}

}  // namespace

DeviceEstimate estimate_device(const Job& job, const Device& d, double threads, const PlanOptions& options,
                               const Calibration& cal) {
  DeviceEstimate e;
  e.device = d;
  MemoryPlan mem = fit_memory(job, d, options.memory_margin, cal);
  e.fit = Fit::Yes;
  if (!mem.ok) {
    const std::string why = mem.why;
    mem = fit_memory(job, d, 0, cal);
    e.fit = mem.ok ? Fit::Tight : Fit::No;
    if (!mem.ok) {
      e.why_not = why;
      e.fps = 0;
      // Marked also where it does not run: the row's figures say nothing of that stage either.
      for (size_t i = 0; i < job.stages.size(); ++i)
        if (!job.stages[i].priced && !cal.measured_stage_s_per_px(d, job.pipeline, i)) e.unknown_stages.push_back(job.stages[i].model);
      return e;
    }
    e.warnings.push_back(str("memory: fits only without the ", std::lround(options.memory_margin * 100), "% margin"));
  }
  e.tile = mem.tile;
  e.memory_gb = mem.peak_gb;
  e.margin = 1 - mem.peak_gb / d.memory_gb;

  const std::string precision = precision_on(d, job.precision);
  const double bytes = precision == "fp32" ? 4 : 2;
  double w = job.width, h = job.height, mult = 1;
  for (size_t i = 0; i < job.stages.size(); ++i) {
    const StageSpec& s = job.stages[i];
    if (!s.priced) add_unpriced_stage(job, i, d, cal, e);
    if (!s.runs_network()) {
      w *= s.scale;
      h *= s.scale;
      mult *= s.frame_factor;  // deinterlacing to fields doubles the frames later stages see
      continue;
    }
    const TiledPixels tiles = tiled_input_pixels(w, h, s.cost.tiled ? mem.tile : 0, s.cost.tile_overlap, s.cost.tile_alignment());
    const double px = tiles.total, calls = tiles.calls;
    const double runs = s.kind == "interpolate" ? mult * (s.frame_factor - 1) : mult;
    const double compute = calls * s.cost.effective_flops(px / calls) /
                           (tflops(d, precision) * 1e12 * cal.compute_efficiency(d, s.cost.arch, precision));
    const double traffic = s.cost.traffic_elems_per_px * px * bytes / (d.memory_bandwidth_gbs * 1e9 * cal.bandwidth_efficiency());
    e.gpu_s_per_frame += runs * (compute + traffic);
    StageEstimate st;
    st.kind = s.kind;
    st.model = s.model;
    st.pixels_per_call = px / calls;
    st.calls_per_frame = runs * calls;
    st.seconds_per_frame = runs * (compute + traffic);
    st.activation_bytes = s.cost.peak_elems_per_px * bytes * cal.memory_factor(d, s.cost.arch) * tiles.largest *
                          std::max(1, job.batch);
    e.stages.push_back(st);
    if (s.kind == "interpolate") mult *= s.frame_factor;
    w *= s.scale;
    h *= s.scale;
  }
  e.encode = encode_plan(job.codec, job.preset, d, threads, cal);
  e.encode_s_per_frame = w * h * mult / 1e6 / e.encode.mpx_per_s;
  e.decode_s_per_frame = double(job.width) * job.height / 1e6 / decode_mpx_per_s(threads);

  // Decode, model and encode run on their own threads and overlap; the slowest bounds the job.
  // Software decode and encode share the CPU, and on a CPU device so does the model.
  const double cpu_side = e.decode_s_per_frame + (e.encode.on_gpu ? 0 : e.encode_s_per_frame);
  double per_frame;
  if (d.cpu) {
    per_frame = e.gpu_s_per_frame + cpu_side;
    e.bound = "inference";
  } else {
    per_frame = std::max({e.gpu_s_per_frame, cpu_side, e.encode.on_gpu ? e.encode_s_per_frame : 0.0});
    e.bound = per_frame == e.gpu_s_per_frame ? "inference"
              : e.encode_s_per_frame >= e.decode_s_per_frame ? "encode" : "decode";
  }
  e.fps = per_frame > 0 ? mult / per_frame : kInf;
  e.gpu_busy = per_frame > 0 ? e.gpu_s_per_frame / per_frame : 0;

  if (e.encode.fell_back) {
    e.warnings.push_back(str("no NVENC", d.nvenc > 0 ? " for AV1" : "", ": ", job.codec, " falls to ", e.encode.codec,
                             " on ", threads, " vCPUs"));
  }
  if (!d.cpu && e.gpu_busy < 0.3) {
    e.warnings.push_back(str("overkill: the GPU is busy ", std::lround(e.gpu_busy * 100), "% of the time; ", e.bound,
                             " bounds the job"));
  }
  return e;
}

namespace {

// Expected spot re-work: each reclaim loses half a segment on average plus a restart; reclaims
// happen at `rate` per billed hour, and the re-work is billed too (two rounds of that converge).
double spot_rework(double time_s, double rate, double segment_proc_s, double restart_s, double* interruptions) {
  const double loss = segment_proc_s / 2 + restart_s;
  double rework = 0, n = 0;
  for (int i = 0; i < 3; ++i) {
    n = rate * (time_s + rework) / 3600;
    rework = n * loss;
  }
  *interruptions = n;
  return rework;
}

// The note when the job's peak does not fit in the output folder's free space; "" when it does
// or the free space is unknown.
std::string disk_shortage(const DiskEstimate& disk, const PlanOptions& options) {
  if (options.output_folder_free_bytes < 0 || disk.peak_bytes() <= options.output_folder_free_bytes) return "";
  return str("disk: ", options.output_folder, " has ", human_bytes(options.output_folder_free_bytes),
             " free; the job needs about ", human_bytes(disk.peak_bytes()), " at its peak (short by ",
             human_bytes(disk.peak_bytes() - options.output_folder_free_bytes), ")");
}

}  // namespace

Plan make_plan(const Job& job, const PlanCatalog& catalog, const PlanOptions& options, const Calibration& cal) {
  Plan plan;
  plan.job = job;
  plan.options = options;
  const auto frames_out = static_cast<double>(job.out_frames());
  plan.disk = estimate_disk(job, cal);
  plan.output_bytes = plan.disk.output_bytes;
  for (const Offer& offer : catalog.offers()) {
    const Device* d = catalog.device(offer.gpu);
    const Provider* p = catalog.provider(offer.provider);
    if (!d || !p) continue;
    if (!options.only_gpus.empty() &&
        std::find(options.only_gpus.begin(), options.only_gpus.end(), d->id) == options.only_gpus.end())
      continue;
    OfferEstimate r;
    r.offer = offer;
    r.provider = *p;
    r.est = estimate_device(job, *d, offer.vcpus, options, cal);
    if (r.est.fit == Fit::No || !(r.est.fps > 0)) {
      r.time_s = r.cost = kInf;
      r.meets_deadline = r.within_budget = false;
      plan.rows.push_back(std::move(r));
      continue;
    }
    r.compute_s = (offer.provider == kLocalProvider ? 0.0 : options.startup_s) + frames_out / r.est.fps;
    r.transfer_s = (job.input_bytes + plan.output_bytes) * 8 / (p->network_gbps * 1e9);
    r.time_s = r.compute_s + r.transfer_s;
    r.egress_cost = plan.output_bytes / 1e9 * p->egress_per_gb;
    r.cost = r.time_s / 3600 * offer.on_demand + r.egress_cost;
    if (offer.spot) {
      const double rate = options.interruption_rate.value_or(p->spot_interruptions_per_hour);
      const double out_per_in = frames_out / std::max<double>(1, job.frames);
      const double segment_proc_s = job.segment_s * job.fps * out_per_in / r.est.fps;
      const double rework = spot_rework(r.time_s, rate, segment_proc_s, options.restart_s, &r.expected_interruptions);
      r.spot_time_s = r.time_s + rework;
      r.spot_cost = *r.spot_time_s / 3600 * *offer.spot + r.egress_cost;
    }
    r.meets_deadline = options.deadline_s <= 0 || r.ranked_time(options.spot) <= options.deadline_s;
    r.within_budget = options.budget <= 0 || r.ranked_cost(options.spot) <= options.budget;
    plan.rows.push_back(std::move(r));
  }
  const bool spot = options.spot;
  std::stable_sort(plan.rows.begin(), plan.rows.end(), [spot](const OfferEstimate& a, const OfferEstimate& b) {
    const bool a_runs = a.est.fit != Fit::No, b_runs = b.est.fit != Fit::No;
    if (a_runs != b_runs) return a_runs;
    const bool a_ok = a.meets_deadline && a.within_budget, b_ok = b.meets_deadline && b.within_budget;
    if (a_ok != b_ok) return a_ok;
    if (a.ranked_cost(spot) != b.ranked_cost(spot)) return a.ranked_cost(spot) < b.ranked_cost(spot);
    return a.ranked_time(spot) < b.ranked_time(spot);
  });
  for (size_t i = 0; i < plan.rows.size(); ++i) {
    const auto& r = plan.rows[i];
    if (r.est.fit == Fit::Yes && r.est.margin >= options.memory_margin && r.meets_deadline && r.within_budget) {
      plan.recommended = i;
      break;
    }
  }
  const char* mode = spot ? "spot" : "on demand";
  if (plan.recommended) {
    const auto& r = plan.rows[*plan.recommended];
    const char* bound = r.est.cost_known() ? "" : "more than ";  // an unknown stage is in no figure
    plan.recommendation = str("Recommended: ", r.est.device.name, " at ", r.provider.name, ": ", bound,
                              human_duration(r.ranked_time(spot)), ", ", bound, money(r.ranked_cost(spot)), " ",
                              spot && r.spot_cost ? "spot" : "on demand", ", ",
                              r.est.tile ? str("tile ", r.est.tile) : std::string("whole frames"), ", ",
                              std::lround(r.est.margin * 100), "% memory free.");
  } else {
    const OfferEstimate* fastest = nullptr;
    for (const auto& r : plan.rows)
      if (r.est.fit == Fit::Yes && (!fastest || r.ranked_time(spot) < fastest->ranked_time(spot))) fastest = &r;
    std::string limits;
    if (options.deadline_s > 0) limits += str(" the ", human_duration(options.deadline_s), " deadline");
    if (options.budget > 0) limits += str(limits.empty() ? " " : " and", " the ", money(options.budget), " budget");
    plan.recommendation = fastest ? str("No offer meets", limits.empty() ? " the limits" : limits, " (", mode, ") with ",
                                        std::lround(options.memory_margin * 100), "% memory free; the fastest that fits is ",
                                        fastest->est.device.name, " at ", fastest->provider.name, " (",
                                        human_duration(fastest->ranked_time(spot)), ", ", money(fastest->ranked_cost(spot)), ").")
                                  : std::string("No device in the catalog can run this job.");
  }
  std::vector<std::string> dates = catalog.as_of();
  std::sort(dates.begin(), dates.end());
  dates.erase(std::unique(dates.begin(), dates.end()), dates.end());
  for (const auto& date : dates)
    plan.notes.push_back(str("catalog prices as of ", date, ": indicative, check the provider before renting"));
  std::vector<std::string> unknown;
  for (const auto& r : plan.rows)
    for (const auto& name : r.est.unknown_stages)
      if (std::find(unknown.begin(), unknown.end(), name) == unknown.end()) unknown.push_back(name);
  for (const auto& name : unknown)
    plan.notes.push_back(str(name, ": cost unknown; fps is an upper bound, time and cost lower bounds (marked <, >) ",
                             "where it is not measured; measure it with framelift profile and pass the manifest to --calibration"));
  if (cal.manifests() == 0) plan.notes.push_back("speeds use the shipped efficiency defaults (no --calibration manifest)");
  if (const std::string short_of = disk_shortage(plan.disk, options); !short_of.empty()) plan.notes.push_back(short_of);
  if (plan.disk.bits_from == "table")
    plan.notes.push_back("disk sizes use the bits-per-pixel table (no --calibration manifest measured " + job.codec +
                         "): content moves them by a factor of several; a profile measures them");
  return plan;
}

}  // namespace framelift::plan
