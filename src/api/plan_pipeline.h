#pragma once
// The planner's stages for a --pipeline text, read exactly as `run` reads it: the one parser,
// each stage's options checked against its schema (the same one-line errors), the schema's
// defaults filled in, and a model file's architecture detected by the registry `run` uses.
#include <string>
#include <vector>

#include "plan/job.h"
#include "pipeline/stage_spec.h"
#include "plan/pipeline_spec.h"

namespace framelift::api {

// Throws Error(Usage) for a pipeline `run` would refuse.
std::vector<plan::StageSpec> plan_stages_for(const std::string& pipeline_text, const plan::InputShape& input);
// The same from stages already parsed (one planner stage per pipeline stage, in order).
std::vector<plan::StageSpec> plan_stages_for(const std::vector<pipeline::StageSpec>& stages, const plan::InputShape& input);

}  // namespace framelift::api
