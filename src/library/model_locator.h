#pragma once
// Which file a model name means: what a user types after -m / model=, resolved without opening
// anything (no libtorch here), for the stages that open models and for the tools that list them.
//
// A name is, in order: a file path; a model installed in the cache (`framelift models install`);
// NAME.param in $FRAMELIFT_MODEL_PATH (colon-separated) and in the folders setup.sh unpacks the
// npm packages into; then a catalog model whose npm package setup.sh unpacked. A catalog name
// found nowhere is an error that says `framelift models install NAME`.
#include <filesystem>
#include <string>
#include <vector>

namespace framelift::library {

// $FRAMELIFT_MODEL_PATH's folders, then the unpacked npm packages' model folders.
std::vector<std::filesystem::path> model_search_path();

// Names of the models found on the search path (and their aliases), sorted.
std::vector<std::string> available_model_names();

// The file a name or path means (for ncnn models, the .param). Throws Error(Model) naming the
// model and, for an unknown name, the closest known names.
std::filesystem::path resolve_model_file(const std::string& name_or_path);

}  // namespace framelift::library
