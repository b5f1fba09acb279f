#pragma once
// Which catalog model a `denoise` stage runs: the family's model for one noise level at one
// native scale. One place for the naming, read by the stage (to open it) and by the planner
// (to price it), so the two never disagree.
#include <string>

namespace framelift::library {

// The scale the family's model runs at for a requested output scale; the rest is a resize.
// method: waifu2x or realcugan; arch: cunet or upconv7 (waifu2x).
int denoise_native_scale(const std::string& method, const std::string& arch, double scale);

// The catalog name, e.g. waifu2x-cunet-noise3, realcugan-se-2x-denoise2x. Throws Error(Usage)
// for a level the family does not have at that scale.
std::string denoise_model_name(const std::string& method, const std::string& arch, int native_scale, int level);

}  // namespace framelift::library
