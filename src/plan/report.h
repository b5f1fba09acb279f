#pragma once
// A plan for people (a ranked table), for machines (JSON) and as a self-contained HTML page with
// a cost-vs-time SVG chart (no scripts, no external files).
#include <string>

#include <nlohmann/json.hpp>

#include "plan/planner.h"

namespace framelift::plan {

std::string plan_text(const Plan& plan);
nlohmann::json plan_json(const Plan& plan);
std::string plan_html(const Plan& plan);

}  // namespace framelift::plan
