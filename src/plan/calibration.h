#pragma once
// Efficiency factors that turn peak TFLOPS into speed and the walked activation peak into memory,
// with shipped defaults and updates from `framelift profile` manifests (docs/planner.md defines
// their fields). A factor for one GPU and architecture beats one for the architecture on any GPU,
// which beats the default.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "arch/declaration.h"
#include "plan/gpu_catalog.h"

namespace framelift::plan {

// What a profile measured an encoder's output to take: bits per output pixel of its keyframes and
// of the other frames, at the crf it ran with.
struct MeasuredVideoBits {
  double key_bits_per_pixel = 0, other_bits_per_pixel = 0;
  std::optional<double> crf;  // nullopt: the encoder's default
  std::string manifest;       // the manifest that measured it
};

class Calibration {
 public:
  Calibration();  // the shipped defaults

  // Reads a profile manifest; each run becomes a factor for its (gpu, arch). Throws
  // Error(Input, "<name>: <problem>") for a manifest without the fields calibration needs.
  // The catalog gives the peak figures the measured speeds are divided by.
  void add_manifest(const nlohmann::json& manifest, const std::string& name, const PlanCatalog& catalog);
  void add_manifest_file(const std::filesystem::path& file, const PlanCatalog& catalog);

  // Fraction of the device's peak (tensor for fp16/bf16, FP32 otherwise) that `arch` reaches.
  double compute_efficiency(const Device& d, const std::string& arch, const std::string& precision) const;
  // Measured peak activation memory / walked peak (caching allocator, cuDNN buffers).
  double memory_factor(const Device& d, const std::string& arch) const;
  // Fraction of peak memory bandwidth reached by activation traffic.
  double bandwidth_efficiency() const { return 0.7; }
  // Measured encoder speed in megapixels per second per thread, or 0 when no manifest had one.
  double encoder_mpx_per_thread(const std::string& codec, const std::string& preset) const;
  // The output size a manifest measured for `codec` (the last one read that has it); nullopt
  // when none did.
  std::optional<MeasuredVideoBits> video_bits(const std::string& codec) const;
  // What a stage without a cost model (a TorchScript module, a filter graph) took where a manifest
  // measured the same --pipeline text (compared as written) on device `d`: seconds per pixel of
  // the job's input frames, for stage `index` (0-based, in pipeline order); nullopt elsewhere, so
  // the planner keeps its cost unknown on every other device.
  std::optional<double> measured_stage_s_per_px(const Device& d, const std::string& pipeline, size_t index) const;
  int manifests() const { return manifests_; }

 private:
  using Key = std::pair<std::string, std::string>;  // gpu id ("" for any), arch
  void add_measured_stages(const nlohmann::json& manifest, const std::string& device_id);
  void add_video_bits(const nlohmann::json& encoder, const nlohmann::json& manifest, const std::string& name);
  std::map<Key, double> efficiency_, memory_;
  std::map<Key, double> encoders_;  // (codec, preset) -> Mpx/s per thread
  std::map<std::string, MeasuredVideoBits> video_bits_;  // codec -> measured output size
  std::map<std::tuple<std::string, std::string, size_t>, double> stages_;  // (gpu id, pipeline, index) -> s/px
  int manifests_ = 0;
};

}  // namespace framelift::plan
