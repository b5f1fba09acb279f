#include "run/warm_stages.h"

#include "pipeline/stage.h"
#include "pipeline/stage_registry.h"

namespace framelift::pipeline {

WarmStages::WarmStages() = default;
WarmStages::~WarmStages() = default;

std::vector<std::unique_ptr<Stage>>& WarmStages::get(const std::string& pipeline,
                                                     const std::map<std::string, std::string>& defaults) {
  if (built_ && pipeline == pipeline_ && defaults == defaults_) {
    for (auto& stage : stages_) stage->reset();
    ++reuses_;
    return stages_;
  }
  built_ = false;
  stages_.clear();  // the old chain's memory first: two models may not fit side by side
  stages_ = make_stages(pipeline, defaults);
  pipeline_ = pipeline;
  defaults_ = defaults;
  built_ = true;
  ++builds_;
  return stages_;
}

}  // namespace framelift::pipeline
