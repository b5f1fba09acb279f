#pragma once
// Turns a --pipeline string ("upscale:model=NAME,interpolate:factor=2") into the planner's
// stages: catalog models (data/models.json) resolve to their architecture and parameters;
// "upscale:arch=rrdbnet:scale=4:nb=23" describes a model by hand (a .pth the catalog lacks).
#include <string>
#include <vector>

#include "library/catalog.h"
#include "plan/job.h"

namespace framelift::plan {

// `fps`: the input's rate, for interpolate:fps=F. Throws Error(Usage, "stage NAME: ...").
std::vector<StageSpec> parse_pipeline(const std::string& pipeline, const library::Catalog& models, double fps);

// The planner's stage for one catalog model (architecture parameters the catalog does not list
// are filled in per model: docs/planner.md).
StageSpec stage_for_model(const library::CatalogModel& model);

}  // namespace framelift::plan
