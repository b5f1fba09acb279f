#pragma once
// A video job as the planner sees it: the input's size, length and bytes, the model stages in
// order, and the encoder. Built from a probe and a --pipeline string (pipeline_spec.h) or by hand.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arch/declaration.h"

namespace framelift::plan {

struct StageSpec {
  std::string kind;     // upscale, denoise, interpolate, resize
  std::string model;    // catalog name or "arch=..." for display
  arch::ArchCost cost;        // the network that runs (unused for resize)
  double scale = 1;     // output size / input size of this stage (an x2 may run an x4 net: cost.scale)
  int frame_factor = 1; // interpolate: output frames per input frame
  arch::ArchParams params;    // what arch::cost() was given for it (profile manifests record them)
  // false: a stage without a cost model (a filter graph, deinterlacing, a user's TorchScript
  // module, an architecture the planner cannot count): its cost is unknown; the planner leaves
  // it out of the figures and marks every row (DeviceEstimate::unknown_stages, "needs a
  // profile": framelift profile measures it), never refuses it.
  bool priced = true;

  // Whether a network runs in this stage (its weights and activations count).
  bool runs_network() const { return priced && kind != "resize"; }
};

struct Job {
  int width = 0, height = 0;
  int64_t frames = 0;
  double fps = 0;
  double duration_s = 0;
  double input_bytes = 0;
  std::vector<StageSpec> stages;
  std::string pipeline;           // the --pipeline text: a manifest measured on the same text prices
                                  // its unpriced stages (Calibration::measured_stage_s_per_px)
  std::string codec = "libx264";
  std::string preset;             // empty: the encoder's default
  std::optional<double> crf;      // nullopt: the encoder's default
  double raw_bits_per_pixel = 12; // uncompressed bits per pixel of the output's format (8-bit 4:2:0)
  double other_stream_bytes = 0;  // the source's audio, subtitles, attachments: copied into the output
  double model_bytes = 0;         // model files a run has to install first (not on this machine)
  std::string precision = "fp16"; // on GPUs; CPUs run fp32
  int batch = 1;
  int tile = 0;                   // input tile side the job forces (--tile); 0: the largest that fits
  double segment_s = 10;          // job segment length (docs/jobs.md): the unit re-done after a reclaim

  int out_width() const;
  int out_height() const;
  int64_t out_frames() const;
};

}  // namespace framelift::plan
