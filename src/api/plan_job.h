#pragma once
// The planner run on a PlanRequest (include/framelift/plan.h): the probe, the pipeline read as
// run reads it, the catalog and calibrations. plan_job() wraps it for the public API; the CLI's
// `plan` prints its result as text, JSON or HTML.
#include "framelift/plan.h"
#include "plan/planner.h"

namespace framelift::api {

plan::Plan make_job_plan(const PlanRequest& request);

}  // namespace framelift::api
