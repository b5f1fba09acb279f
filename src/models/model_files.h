#pragma once
// Opens a model from what a user types after -m / model=: a file path (.param/.bin for ncnn,
// .pth/.pt/.ckpt/.safetensors for native architectures) or a known model name, resolved to a file
// by library/model_locator.h.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arch/cost.h"
#include "infer/image_model.h"
#include "models/architecture.h"
#include "weights/ncnn_param.h"
#include "weights/state_dict.h"

namespace framelift::models {

// Throws Error(Model) naming the model and, for an unknown name, the closest known names.
std::unique_ptr<ImageModel> open_model(const std::string& name_or_path);

// An ncnn export given as its parsed graph and weights (weights::ncnn_to_state_dict's): its native
// architecture when one matches, else the graph interpreter (FRAMELIFT_NCNN_GRAPH=1: always).
std::unique_ptr<ImageModel> open_ncnn_model(weights::NcnnGraph graph, const weights::StateDict& ncnn_weights);

// The network open_model would run for a model file (.param/.bin, .pth/.pt/.ckpt,
// .safetensors), found the way open_model finds it, so the planner prices what `run` runs.
struct ModelFileNetwork {
  // The native architecture; nullopt when none is detected or an ncnn export would run on the
  // graph interpreter (no native match, or FRAMELIFT_NCNN_GRAPH=1).
  std::optional<DetectedArch> native;
  // Output size / input size: an animevideov3 x2 ncnn export runs the x4 network (native->scale
  // 4) and resizes down to 2.
  int output_scale = 1;
  // An ONNX graph's cost counted from its operators (OnnxModel::cost_model): what the planner
  // prices it by, there being no architecture to walk.
  std::optional<arch::ArchCost> graph_cost;
};
// Throws Error(Model) like open_model for an unreadable or unsupported file.
ModelFileNetwork detect_model_file(const std::filesystem::path& file);

// A network whose weights are (1 - t) * a + t * b, for two weight sets of one ncnn graph (waifu2x
// noise levels, Real-CUGAN denoise strengths): a strength between two trained levels, the way
// Real-ESRGAN blends general-x4v3 with its denoise twin; native like open_model's. Throws
// Error(Model) when the two are not the same network.
std::unique_ptr<ImageModel> open_blended_model(const std::string& a, const std::string& b, double t);

// What `framelift models info` prints, as JSON: the file(s), format, and the detected
// architecture with scale, channels, parameter count and hyper-parameters (for ncnn files, also
// the graph's measured geometry). With cpu_paths, also "cpu": the path each convolution takes on
// this CPU (models/layer_report.h; runs the network once on a 64x64 input).
std::string describe_model_file(const std::string& name_or_path, bool cpu_paths = false);

}  // namespace framelift::models
