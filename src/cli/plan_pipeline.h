#pragma once
// The planner's stages for a --pipeline text, read exactly as `run` reads it: the one parser,
// each stage's options checked against its schema (the same one-line errors), the schema's
// defaults filled in, and a model file's architecture detected by the registry `run` uses.
#include <string>
#include <vector>

#include "plan/job.h"
#include "plan/pipeline_spec.h"

namespace framelift::cli {

// Throws Error(Usage) for a pipeline `run` would refuse.
std::vector<plan::StageSpec> plan_stages_for(const std::string& pipeline_text, const plan::InputShape& input);

}  // namespace framelift::cli
