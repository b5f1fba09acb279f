#pragma once
// Native super-resolution networks, chosen from a weight file's state-dict keys and shapes: the
// user gives a .pth or .safetensors file, never an architecture name. See docs/models.md.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/architecture.h"
#include "infer/image_model.h"
#include "weights/state_dict.h"

namespace framelift::models {

// Registered architectures, built-ins first (registers them on first call), in the order of
// arch/architecture_list.h.
std::vector<Architecture> architectures();

// The architecture whose detector accepts the dict; nullopt when none does. Throws Error(Model)
// when one recognises the keys but the shapes are inconsistent, and when more than one claims
// the dict (detectors are exclusive; the order of registration is not a priority).
std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source = "weights");

// A CPU float32 network with the dict's weights. Unknown layouts throw Error(Model)
// "<source>: unsupported architecture (tried ...)". source names the file in messages.
std::unique_ptr<ImageModel> build_model(const weights::StateDict& dict, const std::string& source = "weights");

// weights::load_weights() then build_model().
std::unique_ptr<ImageModel> load_model(const std::filesystem::path& weights_file);

// One-line JSON for `framelift models info`: {"arch", "description", "scale", "in_channels",
// "out_channels", "params" (count), "hyperparameters" {...}}. Throws like build_model().
std::string describe_model(const weights::StateDict& dict, const std::string& source = "weights");

}  // namespace framelift::models
