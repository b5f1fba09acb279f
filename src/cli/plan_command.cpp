// `framelift plan`: which GPU and provider to rent for a job, from the input's probe, the
// pipeline's cost model and the catalog (framelift/plan.h, docs/planner.md). Parsing and printing only.
#include <cstdio>
#include <fstream>
#include <memory>

#include "cli/commands.h"
#include "framelift/error.h"
#include "framelift/plan.h"
#include "framelift/values.h"
#include "util/str.h"

namespace framelift::cli {
namespace {

struct PlanArgs {
  PlanRequest request;  // what the library plans (include/framelift/plan.h)
  std::string deadline, html, workload = "video";
  bool json = false;
  double interruption_rate = -1;
  double crf = -1;
  SvdPlanRequest svd;
};

void print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

int run_svd(PlanArgs& a) {
  // The GPUs, catalogs and margin are the flags a video plan reads too.
  SvdPlanRequest& q = a.svd;
  q.gpus = a.request.gpus;
  q.catalogs = a.request.catalogs;
  q.memory_margin = a.request.memory_margin;
  const SvdPlanResult r = plan_svd(q);
  print(a.json ? r.json + "\n" : r.text);
  return 0;
}

int run_plan(PlanArgs& a) {
  if (a.workload == "svd") return run_svd(a);
  if (a.workload != "video") throw Error(ErrorKind::Usage, str("--workload: '", a.workload, "' is not video or svd"));
  if (!a.deadline.empty()) a.request.deadline_s = parse_duration(a.deadline, "--deadline");
  if (a.interruption_rate >= 0) a.request.interruption_rate = a.interruption_rate;
  if (a.crf >= 0) a.request.crf = a.crf;
  const PlanResult p = plan_job(a.request);
  if (!a.html.empty()) {
    std::ofstream out(a.html, std::ios::binary | std::ios::trunc);
    if (!(out << p.html) || !out.flush()) throw Error(ErrorKind::Output, str(a.html, ": cannot write the HTML page"));
  }
  print(a.json ? p.json + "\n" : p.text);
  return 0;
}

}  // namespace

void add_plan_command(CLI::App& app, Command& selected) {
  auto* cmd = app.add_subcommand("plan", "Which GPU and provider to rent for a job: memory fit, tile, speed, time and cost");
  auto a = std::make_shared<PlanArgs>();
  cmd->add_option("-i,--input", a->request.input, "Input video (probed for size, frames and rate)");
  cmd->add_option("--pipeline", a->request.pipeline, "Stages as for `framelift run`")->capture_default_str();
  cmd->add_option("-c,--codec", a->request.codec, "Encoder the job will use")->capture_default_str();
  cmd->add_option("--preset", a->request.preset, "Encoder preset (default: the encoder's)");
  cmd->add_option("--crf", a->crf, "Constant quality the job will use (default: the encoder's): output size");
  cmd->add_option("-o,--output", a->request.output,
                  "Where the job will write: the disk estimate is checked against its folder's free space "
                  "(default: the current folder)");
  cmd->add_option("--precision", a->request.precision, "fp16, bf16 or fp32 on GPUs")->capture_default_str();
  cmd->add_option("--batch", a->request.batch, "Tiles per model call")->capture_default_str();
  cmd->add_option("--tile", a->request.tile, "Input tile side the job will use (0: the largest that fits each GPU)")->capture_default_str();
  cmd->add_option("--segment-seconds", a->request.segment_seconds, "Job segment length: what a spot reclaim re-does")->capture_default_str();
  cmd->add_option("--deadline", a->deadline, "Finish within, e.g. 2h, 90m, 1h30m");
  cmd->add_option("--budget", a->request.budget, "Spend at most this many USD");
  cmd->add_flag("--spot", a->request.spot, "Rank and recommend by spot (interruptible) prices");
  cmd->add_option("--interruption-rate", a->interruption_rate, "Spot reclaims per hour (default: the catalog's assumed rate)");
  cmd->add_option("--memory-margin", a->request.memory_margin, "Fraction of GPU memory to keep free")->capture_default_str();
  cmd->add_option("--gpu", a->request.gpus, "Only these catalog GPU ids (repeatable)");
  cmd->add_option("--catalog", a->request.catalogs, "A catalog file overriding or extending data/gpus.json and data/offers.json (repeatable)");
  cmd->add_option("--calibration", a->request.calibrations, "A `framelift profile` manifest with measured speeds (repeatable)");
  cmd->add_flag("--local", a->request.local, "Also price this machine's CPU");
  cmd->add_option("--local-price", a->request.local_price, "USD per hour for --local")->capture_default_str();
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
