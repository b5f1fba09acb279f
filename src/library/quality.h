#pragma once
// `--quality fast|balanced|best`: picks an installed upscale model by what it costs to run.
//
// The rule, by architecture (measured cost per pixel grows by about 10x per step):
//   fast      SRVGG Compact: realesr-animevideov3-x2, -x4, -x3, realesr-general-x4v3, then any
//             other installed Compact model (2x-AniScale, ...)
//   balanced  Real-CUGAN se: realcugan-se-2x-conservative, -no-denoise, then the other se/pro
//             models, then waifu2x cunet/upconv7 upscalers
//   best      RRDBNet (ESRGAN): realesrgan-x4plus, realesrgan-x4plus-anime, then any other
//             installed RRDBNet model
// Within a tier the named models come first in that order, then the rest by name. Only models
// installed in the cache count; a tier with none is an error naming a model to install.
#include <string>
#include <string_view>
#include <vector>

#include "library/installed_model.h"

namespace framelift::library {

enum class Quality { Fast, Balanced, Best };

// Throws Error(Usage) for anything but fast, balanced, best.
Quality parse_quality(std::string_view text);

// Throws Error(Model, "--quality X: ...") when no installed upscale model fits the tier.
std::string pick_upscale_model(const std::vector<InstalledModel>& installed, Quality quality);

}  // namespace framelift::library
