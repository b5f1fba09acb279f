#pragma once
// The order of stages is the user's; some orders waste quality or time, and framelift says so
// (a warning, never a refusal: the user may know better).
#include <string>
#include <vector>

#include "pipeline/stage_spec.h"

namespace framelift::pipeline {

// One line per odd pair, e.g. "denoise after upscale: the noise is enlarged before it is removed".
std::vector<std::string> stage_order_warnings(const std::vector<StageSpec>& stages);

}  // namespace framelift::pipeline
