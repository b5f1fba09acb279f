#pragma once
// The cost planner: a pure function from a job, a catalog and calibration to a ranked list of
// offers with memory fit, tile, speed, time and cost, and a recommendation. No I/O; the CLI
// (src/cli/plan_command.cpp) probes the input and prints (report.h). docs/planner.md has the model.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plan/calibration.h"
#include "plan/disk_model.h"
#include "plan/gpu_catalog.h"
#include "plan/job.h"
#include "plan/media_rates.h"

namespace framelift::plan {

// The provider id of `plan --local`: this machine, already running, so no start-up time.
inline constexpr const char* kLocalProvider = "local";

struct PlanOptions {
  double deadline_s = 0;                        // 0: none
  double budget = 0;                            // USD; 0: none
  bool spot = false;                            // rank and recommend by spot price where offered
  double memory_margin = 0.2;                   // fraction of device memory kept free
  std::optional<double> interruption_rate;      // per hour; default: the provider's assumed rate
  double startup_s = 90;                        // machine ready to first frame: model load, warm-up
                                                // (none for kLocalProvider: this machine is ready)
  double restart_s = 180;                       // after a spot reclaim: new machine, resume
  std::vector<std::string> only_gpus;           // empty: every device
  // Where the job will write and the free space there (the caller asks the file system; -1:
  // unknown): a note says when the job's disk peak does not fit.
  std::string output_folder;
  double output_folder_free_bytes = -1;
};

enum class Fit { Yes, Tight, No };  // Tight: runs only by eating into the margin
const char* fit_name(Fit f);

// One model stage on one device: what a single network call takes and how often it runs.
struct StageEstimate {
  std::string kind, model;
  double pixels_per_call = 0;     // input pixels of one call (a tile with its context, or a frame), mean
  double calls_per_frame = 0;     // per input frame of the job
  double seconds_per_frame = 0;   // per input frame of the job
  double activation_bytes = 0;    // the rise of device memory during the largest call
};

// Input pixels the tiler (src/infer/tiler.cpp) sends through a network for one w x h frame: tiles
// of `tile` (0 or >= the longer side: the whole frame) with `overlap` context, clipped at the
// frame's edges, each padded up to `multiple`.
struct TiledPixels {
  double total = 0;    // over all calls
  int calls = 0;
  double largest = 0;  // the largest call's (it sets the memory peak)
};
TiledPixels tiled_input_pixels(double w, double h, int tile, int overlap, int multiple);

struct DeviceEstimate {
  Device device;
  Fit fit = Fit::No;
  std::string why_not;       // for Fit::No
  int tile = 0;              // input tile side of the largest upscale stage; 0: whole frames
  double memory_gb = 0;      // planned peak use
  double margin = 0;         // 1 - memory_gb / device memory
  double gpu_s_per_frame = 0;   // model stages, per input frame
  std::vector<StageEstimate> stages;  // the model stages, in order
  double encode_s_per_frame = 0, decode_s_per_frame = 0;
  double fps = 0;            // output frames per second through the whole pipeline
  std::string bound;         // the slowest stage: inference, encode or decode
  double gpu_busy = 0;       // fraction of the time the model stages keep the device busy
  EncodePlan encode;
  std::vector<std::string> warnings;
  // Stages without a cost model (StageSpec::priced false): their time is in none of the figures
  // above, so fps is an upper bound and time and cost lower bounds; the report marks them.
  std::vector<std::string> unknown_stages;
  bool cost_known() const { return unknown_stages.empty(); }
};

struct OfferEstimate {
  Offer offer;
  Provider provider;
  DeviceEstimate est;
  double compute_s = 0;       // startup + frames
  double transfer_s = 0;      // input in, output out, at the provider's typical bandwidth
  double time_s = 0;          // on demand: compute + transfer
  double cost = 0;            // on demand, egress included
  double egress_cost = 0;
  std::optional<double> spot_time_s, spot_cost;  // with expected re-work after reclaims
  double expected_interruptions = 0;
  bool meets_deadline = true, within_budget = true;

  // The mode the plan ranks by: spot when asked for and offered.
  double ranked_cost(bool spot) const { return spot && spot_cost ? *spot_cost : cost; }
  double ranked_time(bool spot) const { return spot && spot_time_s ? *spot_time_s : time_s; }
};

struct Plan {
  Job job;
  PlanOptions options;
  DiskEstimate disk;                // what the job holds on disk at its peak
  double output_bytes = 0;          // the assembled output (disk.output_bytes): transfer and egress
  std::vector<OfferEstimate> rows;  // ranked: fitting, meeting the deadline, cheapest first
  std::optional<size_t> recommended;
  std::string recommendation;       // one sentence, also when nothing qualifies
  std::vector<std::string> notes;
};

// How one device would run the job (memory, tile, speed); `threads`: CPU threads with it.
DeviceEstimate estimate_device(const Job& job, const Device& device, double threads, const PlanOptions& options,
                               const Calibration& calibration);

Plan make_plan(const Job& job, const PlanCatalog& catalog, const PlanOptions& options, const Calibration& calibration);

// Fixed memory the planner assumes on every GPU: CUDA context and libtorch kernels, cuDNN workspace.
constexpr double kContextGb = 0.6;
constexpr double kWorkspaceGb = 0.3;
constexpr int kMinTile = 64;

}  // namespace framelift::plan
