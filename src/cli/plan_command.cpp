// `framelift plan`: which GPU and provider to rent for a job, from the input's probe, the
// pipeline's cost model and the catalog (src/plan, docs/planner.md). Parsing and printing only.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "cli/commands.h"
#include "cli/plan_pipeline.h"
#include "library/catalog.h"
#include "media/probe.h"
#include "plan/diffusion.h"
#include "plan/format.h"
#include "plan/pipeline_spec.h"
#include "plan/planner.h"
#include "plan/report.h"
#include "util/error.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::cli {
namespace {

struct PlanArgs {
  std::string input, pipeline = "upscale:model=realesr-animevideov3-x2", deadline, html, workload = "video";
  std::vector<std::string> catalogs, calibrations, gpus;
  plan::PlanOptions options;
  plan::Job job;
  bool json = false, local = false;
  double local_price = 0;
  double interruption_rate = -1;
  plan::SvdSettings svd;
};

void print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

plan::PlanCatalog load_catalog(const PlanArgs& a) {
  return plan::PlanCatalog::load_default({a.catalogs.begin(), a.catalogs.end()});
}

// Size, frames, rate and bytes of the input from the media probe.
void describe_input(PlanArgs& a) {
  nlohmann::json info = media::probe(a.input, {.count_frames = true});
  const int v = info.value("video_stream", -1);
  if (v < 0) throw Error(ErrorKind::Input, str(a.input, ": no video stream"));
  const auto& s = info["streams"][v];
  plan::Job& j = a.job;
  j.width = s.value("width", 0);
  j.height = s.value("height", 0);
  j.fps = s.contains("frame_rate") && s["frame_rate"].is_number() ? s["frame_rate"].get<double>() : 0;
  j.duration_s = info["duration_s"].is_number() ? info["duration_s"].get<double>() : 0;
  j.frames = s.value("frame_count", int64_t{0});
  if (j.frames <= 0 && j.fps > 0) j.frames = static_cast<int64_t>(j.duration_s * j.fps);
  if (j.width <= 0 || j.height <= 0 || j.frames <= 0)
    throw Error(ErrorKind::Input, str(a.input, ": the probe gives no size or frame count to plan with"));
  std::error_code ec;
  const auto bytes = fs::file_size(a.input, ec);
  j.input_bytes = !ec ? double(bytes)
                      : info["bit_rate"].is_number() ? info["bit_rate"].get<double>() / 8 * j.duration_s : 0;
}

int run_svd(const PlanArgs& a) {
  const plan::PlanCatalog catalog = load_catalog(a);
  nlohmann::json rows = nlohmann::json::array();
  std::string text = str("SVD ", a.svd.width, "x", a.svd.height, ", ", a.svd.frames, " frames, ", a.svd.steps,
                         " steps (estimates, +-50%: docs/planner.md)\n");
  for (const auto& d : catalog.devices()) {
    if (!a.gpus.empty() && std::find(a.gpus.begin(), a.gpus.end(), d.id) == a.gpus.end()) continue;
    const plan::SvdEstimate asked = plan::estimate_svd(a.svd, d, a.options.memory_margin);
    const auto ladder = plan::svd_settings_ladder(a.svd, d, a.options.memory_margin);
    const plan::SvdEstimate& fit = ladder.back();
    std::string how = fit.fits ? str("decode_chunk_size=", fit.settings.decode_chunk_size ? fit.settings.decode_chunk_size : a.svd.frames,
                                     fit.settings.forward_chunking ? ", forward chunking" : "",
                                     fit.settings.offload != "none" ? ", " + fit.settings.offload + " offload" : "")
                               : std::string("does not fit even with sequential offload");
    text += str(d.id, ": peak ", plan::gigabytes(asked.peak_gb * 1e9), " as asked (", asked.fits ? "fits" : "too big",
                "), ", plan::human_duration(asked.seconds), "; fits with: ", how,
                fit.fits ? str(" (", plan::gigabytes(fit.peak_gb * 1e9), ", ", plan::human_duration(fit.seconds), ")") : "", "\n");
    nlohmann::json stages = nlohmann::json::array();
    for (const auto& st : asked.stages)
      stages.push_back({{"stage", st.name}, {"weights_gb", st.weights_gb}, {"activations_gb", st.activations_gb}, {"total_gb", st.total_gb}});
    rows.push_back({{"gpu", d.id}, {"peak_gb", asked.peak_gb}, {"seconds", asked.seconds}, {"fits", asked.fits},
                    {"stages", stages}, {"fits_with", fit.fits ? nlohmann::json{{"decode_chunk_size", fit.settings.decode_chunk_size},
                                                                                {"forward_chunking", fit.settings.forward_chunking},
                                                                                {"offload", fit.settings.offload},
                                                                                {"peak_gb", fit.peak_gb},
                                                                                {"seconds", fit.seconds}}
                                                               : nlohmann::json(nullptr)}});
  }
  print(a.json ? nlohmann::json{{"workload", "svd"}, {"devices", rows}}.dump(2) + "\n" : text);
  return 0;
}

int run_plan(PlanArgs& a) {
  if (a.workload == "svd") return run_svd(a);
  if (a.workload != "video") throw Error(ErrorKind::Usage, str("--workload: '", a.workload, "' is not video or svd"));
  if (a.input.empty()) throw Error(ErrorKind::Usage, "-i/--input is required for a video plan");
  if (!a.deadline.empty()) a.options.deadline_s = plan::parse_duration(a.deadline, "--deadline");
  if (a.interruption_rate >= 0) a.options.interruption_rate = a.interruption_rate;
  a.options.only_gpus = a.gpus;
  describe_input(a);
  a.job.stages = plan_stages_for(a.pipeline, {a.job.width, a.job.height, a.job.fps});
  plan::PlanCatalog catalog = load_catalog(a);
  if (a.local) {
    plan::Device cpu = plan::local_cpu();
    catalog.add(cpu, plan::Provider{plan::kLocalProvider, "this machine", 0, 100, 0, 0},
                plan::Offer{plan::kLocalProvider, "cpu", "", a.local_price, {}, cpu.cores});
  }
  plan::Calibration calibration;
  for (const auto& f : a.calibrations) calibration.add_manifest_file(f, catalog);
  const plan::Plan p = plan::make_plan(a.job, catalog, a.options, calibration);
  if (!a.html.empty()) {
    std::ofstream out(a.html, std::ios::binary | std::ios::trunc);
    const std::string page = plan::plan_html(p);
    if (!(out << page) || !out.flush()) throw Error(ErrorKind::Output, str(a.html, ": cannot write the HTML page"));
  }
  print(a.json ? plan::plan_json(p).dump(2) + "\n" : plan::plan_text(p));
  return 0;
}

}  // namespace

void add_plan_command(CLI::App& app, Command& selected) {
  auto* cmd = app.add_subcommand("plan", "Which GPU and provider to rent for a job: memory fit, tile, speed, time and cost");
  auto a = std::make_shared<PlanArgs>();
  cmd->add_option("-i,--input", a->input, "Input video (probed for size, frames and rate)");
  cmd->add_option("--pipeline", a->pipeline, "Stages as for `framelift run`")->capture_default_str();
  cmd->add_option("-c,--codec", a->job.codec, "Encoder the job will use")->capture_default_str();
  cmd->add_option("--preset", a->job.preset, "Encoder preset (default: the encoder's)");
  cmd->add_option("--precision", a->job.precision, "fp16, bf16 or fp32 on GPUs")->capture_default_str();
  cmd->add_option("--batch", a->job.batch, "Tiles per model call")->capture_default_str();
  cmd->add_option("--tile", a->job.tile, "Input tile side the job will use (0: the largest that fits each GPU)")->capture_default_str();
  cmd->add_option("--segment-seconds", a->job.segment_s, "Job segment length: what a spot reclaim re-does")->capture_default_str();
  cmd->add_option("--deadline", a->deadline, "Finish within, e.g. 2h, 90m, 1h30m");
  cmd->add_option("--budget", a->options.budget, "Spend at most this many USD");
  cmd->add_flag("--spot", a->options.spot, "Rank and recommend by spot (interruptible) prices");
  cmd->add_option("--interruption-rate", a->interruption_rate, "Spot reclaims per hour (default: the catalog's assumed rate)");
  cmd->add_option("--memory-margin", a->options.memory_margin, "Fraction of GPU memory to keep free")->capture_default_str();
  cmd->add_option("--gpu", a->gpus, "Only these catalog GPU ids (repeatable)");
  cmd->add_option("--catalog", a->catalogs, "A catalog file overriding or extending data/gpus.json and data/offers.json (repeatable)");
  cmd->add_option("--calibration", a->calibrations, "A `framelift profile` manifest with measured speeds (repeatable)");
  cmd->add_flag("--local", a->local, "Also price this machine's CPU");
  cmd->add_option("--local-price", a->local_price, "USD per hour for --local")->capture_default_str();
  cmd->add_flag("--json", a->json, "Print JSON instead of a table");
  cmd->add_option("--html", a->html, "Also write a self-contained page with a cost-vs-time chart");
  cmd->add_option("--workload", a->workload, "video, or svd for Stable Video Diffusion memory and time estimates")->capture_default_str();
  cmd->add_option("--svd-frames", a->svd.frames, "svd: frames (14 img2vid, 25 img2vid-xt)")->capture_default_str();
  cmd->add_option("--svd-steps", a->svd.steps, "svd: denoising steps")->capture_default_str();
  cmd->add_option("--svd-width", a->svd.width, "svd: width")->capture_default_str();
  cmd->add_option("--svd-height", a->svd.height, "svd: height")->capture_default_str();
  cmd->add_option("--decode-chunk-size", a->svd.decode_chunk_size, "svd: frames the VAE decodes at once (0: all)")->capture_default_str();
  cmd->add_flag("--forward-chunking", a->svd.forward_chunking, "svd: chunked feed-forward in the UNet");
  cmd->add_option("--offload", a->svd.offload, "svd: none, model or sequential CPU offload")->capture_default_str();
  cmd->footer(
      "Examples:\n"
      "  framelift plan -i clip.mkv --pipeline \"upscale:model=realesrgan-x4plus\" --deadline 2h\n"
      "  framelift plan -i clip.mkv --spot --budget 20 -c hevc_nvenc --html plan.html\n"
      "  framelift plan --workload svd --svd-frames 25 --gpu rtx4090 --gpu l4\n"
      "Prices are indicative and dated (data/offers.json); models and limits: docs/planner.md.");
  cmd->callback([a, &selected] { selected = [a] { return run_plan(*a); }; });
}

}  // namespace framelift::cli
