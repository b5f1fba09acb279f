#pragma once
// Small catalogs and jobs for the planner tests: two or three made-up devices with round figures.
#include <nlohmann/json.hpp>

#include "plan/gpu_catalog.h"
#include "plan/job.h"

namespace framelift::plan::testing {

inline nlohmann::json gpu(const std::string& id, double memory_gb, double tflops) {
  return {{"id", id}, {"memory_gb", memory_gb}, {"memory_bandwidth_gbs", 1000}, {"fp32_tflops", tflops / 4},
          {"fp16_tensor_tflops", tflops}, {"nvenc", 1}, {"nvdec", 1}};
}

inline nlohmann::json provider(const std::string& id) {
  return {{"id", id}, {"egress_per_gb", 0}, {"network_gbps", 10}, {"spot_interruptions_per_hour", 0.1}};
}

inline nlohmann::json offer(const std::string& p, const std::string& g, double price, double spot = 0) {
  nlohmann::json o{{"provider", p}, {"gpu", g}, {"on_demand", price}, {"vcpus", 16}};
  if (spot > 0) o["spot"] = spot;
  return o;
}

inline PlanCatalog catalog(const nlohmann::json& doc) { return PlanCatalog::from_json({doc}, {"test catalog"}); }

// 1080p, 10 minutes at 24 fps, through `stages`, encoded with NVENC so the GPU bounds the job.
inline Job job_1080p(std::vector<StageSpec> stages) {
  Job j;
  j.width = 1920;
  j.height = 1080;
  j.fps = 24;
  j.frames = 24 * 600;
  j.duration_s = 600;
  j.input_bytes = 500e6;
  j.stages = std::move(stages);
  j.codec = "hevc_nvenc";
  return j;
}

// Field by field: a brace list would have to name every field up to the last one given.
inline StageSpec stage(std::string kind, std::string model, framelift::arch::ArchCost cost, double scale,
                       int frame_factor) {
  StageSpec s;
  s.kind = std::move(kind);
  s.model = std::move(model);
  s.cost = std::move(cost);
  s.scale = scale;
  s.frame_factor = frame_factor;
  return s;
}

inline StageSpec upscale(const std::string& arch, int scale) {
  return stage("upscale", arch, framelift::arch::cost(arch, scale), double(scale), 1);
}

inline StageSpec interpolate(int factor) { return stage("interpolate", "rife", framelift::arch::cost("rife", 1), 1, factor); }

}  // namespace framelift::plan::testing
