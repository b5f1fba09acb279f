#pragma once
// Where framelift's read-only data is: the model catalog (models.json) and the planner's GPU and
// offer tables (gpus.json, offers.json). This is the one place that decides it.
#include <filesystem>

namespace framelift::library {

// <prefix>/share/framelift when framelift runs installed: that folder, holding models.json,
// beside the executable or libframelift.so this code was linked into (found from the running
// object's own path, so a package extracted anywhere, or `cmake --install --prefix P`, finds
// its own data). Otherwise the source tree's data/ that framelift was built from, so a build
// folder runs without installing. Decided once per process; never throws.
const std::filesystem::path& data_dir();

}  // namespace framelift::library
