#include "framelift/policy.h"

#include "api/policy_check.h"
#include "library/locations.h"
#include "media/filter_policy.h"
#include "pipeline/pipeline_policy.h"

namespace framelift {
namespace api {

void check_stages(const std::vector<pipeline::StageSpec>& stages, const PipelinePolicy& policy) {
  pipeline::Policy p;
  p.filters = policy.filters.empty() ? media::safe_filters() : policy.filters;
  p.file_roots = policy.file_roots;
  if (policy.allow_model_cache) p.file_roots.push_back(library::default_cache_root());
  p.devices = policy.devices;
  p.max_frame_size = policy.max_frame_size;
  p.max_tile = policy.max_tile;
  p.max_batch = policy.max_batch;
  pipeline::check_policy(stages, p);
}

}  // namespace api

const std::set<std::string>& default_safe_filters() { return media::safe_filters(); }

void check_pipeline(const std::string& text, const PipelinePolicy& policy) {
  api::check_stages(pipeline::parse_pipeline(text), policy);
}

}  // namespace framelift
