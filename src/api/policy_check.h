#pragma once
// The public PipelinePolicy (framelift/policy.h) applied to parsed stages: for the Pipeline
// constructor and run(), which parse the text themselves.
#include <vector>

#include "framelift/policy.h"
#include "pipeline/stage_spec.h"

namespace framelift::api {

// Throws Error(Usage) for the first thing `policy` refuses.
void check_stages(const std::vector<pipeline::StageSpec>& stages, const PipelinePolicy& policy);

}  // namespace framelift::api
