#include "framelift/values.h"

#include "infer/memory_budget.h"
#include "plan/format.h"

namespace framelift {

int64_t parse_byte_size(const std::string& text) { return infer::parse_byte_size(text); }

double parse_duration(const std::string& text, const std::string& option) { return plan::parse_duration(text, option); }

}  // namespace framelift
