#pragma once
// Which GPU and provider fit a job, and what it will take: memory, tile, speed, time and cost on
// demand and on spot, from a dated catalog (data/gpus.json, data/offers.json) and, when given,
// `framelift profile` manifests that calibrate it with measured speeds. What `framelift plan`
// prints, for programs (a job queue that wants a price before it starts, a GUI).
//
// The pipeline is read exactly as run() reads it: same parser, same option checks, model files
// opened the way run() opens them (an ncnn export priced as the native network it runs). A stage
// without a cost model (a filter graph, deinterlacing, a TorchScript module) is never counted as
// free: every row has cost_known false and a "cost unknown ... (needs a profile)" warning.
//
// Errors: throws framelift::Error: Usage for a bad request or pipeline, Input for an input that
// cannot be probed, Input or Usage for a damaged catalog or calibration file (named).
// Thread-safety: plan_job() and plan_svd() may be called from several threads at once.
#include <optional>
#include <string>
#include <vector>

namespace framelift {

struct PlanRequest {
  std::string input;                                          // probed for size, frames, rate, bytes
  std::string pipeline = "upscale:model=realesr-animevideov3-x2";
  std::string codec = "libx264";
  std::string preset;                                         // "": the encoder's default
  std::optional<double> crf;                                  // nullopt: the encoder's default
  std::string output;                                         // where the run will write: the free
                                                              // space of its folder is checked;
                                                              // "": the current folder
  std::string precision = "fp16";                             // on GPUs: fp16, bf16 or fp32
  int tile = 0;                                               // 0: the largest that fits each device
  int batch = 1;
  double segment_seconds = 10;                                // what a spot reclaim re-does
  double deadline_s = 0;                                      // 0: none
  double budget = 0;                                          // USD; 0: none
  bool spot = false;                                          // rank by spot prices
  double memory_margin = 0.2;                                 // device memory kept free
  std::optional<double> interruption_rate;                    // spot reclaims per hour
  std::vector<std::string> gpus;                              // only these catalog ids; empty: all
  std::vector<std::string> catalogs;                          // files overriding or extending the catalog
  std::vector<std::string> calibrations;                      // `framelift profile` manifests
  bool local = false;                                         // also price this machine's CPU
  double local_price = 0;                                     // USD per hour for it
};

struct PlanRow {
  std::string gpu, gpu_name, provider, instance;
  std::string fits;          // "yes", "tight" (only without the margin) or "no"
  bool recommended = false;
  int tile = 0;              // 0: whole frames
  double fps = 0, memory_gb = 0;
  double time_s = 0, cost = 0;                   // on demand (infinite when it does not fit)
  std::optional<double> spot_time_s, spot_cost;  // with the expected re-work after reclaims
  bool meets_deadline = true, within_budget = true;
  // false: a stage has no cost model (a filter graph, a TorchScript module, ...) and is in none
  // of the figures: fps is an upper bound, time and cost lower bounds; warnings name the stage.
  bool cost_known = true;
  std::vector<std::string> warnings;
};

// The disk the job holds at its peak, at the end of assembly: every segment, the assembled output
// and the model files still to install (docs/planner.md, "Disk"), against the free space of the
// output's folder.
struct PlanDisk {
  double peak_bytes = 0;        // segments + output + models
  double segments_bytes = 0, output_bytes = 0, model_bytes = 0;
  double input_bytes = 0;       // more, on a machine the input must be copied to
  double bits_per_pixel = 0;    // of the output video
  std::string bits_from;        // "table", or the calibration manifest that measured the codec
  std::string folder;           // the output's folder
  int64_t free_bytes = -1;      // free there (statvfs); -1: it cannot be asked
};

struct PlanResult {
  PlanDisk disk;
  std::vector<PlanRow> rows;  // ranked: fitting, meeting the deadline, cheapest first
  std::string recommendation; // one sentence, also when nothing qualifies
  std::vector<std::string> notes;
  std::string text;           // the table `framelift plan` prints
  std::string json;           // `framelift plan --json`
  std::string html;           // `framelift plan --html`: a self-contained page
};

PlanResult plan_job(const PlanRequest& request);

// Stable Video Diffusion (img2vid) on each catalog GPU: peak memory and time for one clip as
// asked, and the first settings on a ladder from fastest to leanest (smaller VAE decode chunks,
// forward chunking, model offload, sequential offload) that fit. Estimates, +-50%
// (docs/planner.md). What `framelift plan --workload svd` prints.
struct SvdPlanRequest {
  int width = 1024, height = 576;
  int frames = 25;                  // 14 for img2vid, 25 for img2vid-xt
  int steps = 25;                   // denoising steps
  int decode_chunk_size = 0;        // frames the VAE decodes at once; 0: all
  bool forward_chunking = false;    // chunked feed-forward in the UNet
  std::string offload = "none";     // none, model or sequential CPU offload
  double memory_margin = 0.2;       // device memory kept free
  std::vector<std::string> gpus;    // only these catalog ids; empty: all
  std::vector<std::string> catalogs;  // files overriding or extending the catalog
};

struct SvdFit {
  int decode_chunk_size = 0;
  bool forward_chunking = false;
  std::string offload;
  double peak_gb = 0, seconds = 0;
};

struct SvdPlanRow {
  std::string gpu;
  double peak_gb = 0, seconds = 0;  // as asked
  bool fits = false;                // as asked, within the memory less the margin
  std::optional<SvdFit> fits_with;  // the leanest-needed settings that fit; nullopt: none does
};

struct SvdPlanResult {
  std::vector<SvdPlanRow> rows;  // in catalog order
  std::string text;              // what `framelift plan --workload svd` prints
  std::string json;              // `--json`, indented by 2, no final newline
};

SvdPlanResult plan_svd(const SvdPlanRequest& request);

}  // namespace framelift
