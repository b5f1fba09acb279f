#include "pipeline/stage_order.h"

#include <map>

#include "util/str.h"

namespace framelift::pipeline {
namespace {

// Stages that clean the source, and why each must come before stages that enlarge or retime it.
const std::map<std::string, std::string>& cleaners() {
  static const std::map<std::string, std::string> table = {
      {"deinterlace", "fields are combed and enlarged before they are separated"},
      {"denoise", "the noise is enlarged (or interpolated) before it is removed, and costs more pixels to remove"},
  };
  return table;
}

bool enlarges_or_retimes(const std::string& stage) { return stage == "upscale" || stage == "interpolate"; }

}  // namespace

std::vector<std::string> stage_order_warnings(const std::vector<StageSpec>& stages) {
  std::vector<std::string> warnings;
  for (size_t i = 0; i < stages.size(); ++i) {
    auto cleaner = cleaners().find(stages[i].name);
    if (cleaner == cleaners().end()) continue;
    for (size_t j = 0; j < i; ++j) {
      if (!enlarges_or_retimes(stages[j].name)) continue;
      warnings.push_back(str(stages[i].name, " after ", stages[j].name, ": ", cleaner->second, "; put ", stages[i].name,
                             " first"));
      break;
    }
  }
  return warnings;
}

}  // namespace framelift::pipeline
