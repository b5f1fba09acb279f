#pragma once
// Finds and opens a model from what a user types after -m / model=: a file path (.param/.bin for
// ncnn, .pth/.pt/.ckpt/.safetensors for native architectures) or a known model name.
//
// Names are looked up as NAME.param in the model folders: $FRAMELIFT_MODEL_PATH (colon-separated)
// first, then the folders setup.sh fills from the npm packages. (The catalog and cache of the
// model-library issue replace this lookup with installed, checksummed models.)
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "models/image_model.h"

namespace framelift::models {

std::vector<std::filesystem::path> model_search_path();

// Names of the models found on the search path, sorted.
std::vector<std::string> available_model_names();

// Throws Error(Model) naming the model and, for an unknown name, the closest known names.
std::unique_ptr<ImageModel> open_model(const std::string& name_or_path);

// What `framelift models info` prints, as JSON: the file(s), format, and the detected
// architecture with scale, channels, parameter count and hyper-parameters (for ncnn files, also
// the graph's measured geometry).
std::string describe_model_file(const std::string& name_or_path);

}  // namespace framelift::models
