#pragma once
// Exit codes of the framelift CLI, one per class of failure so scripts can react. The mapping is
// the library's (framelift::exit_code in include/framelift/error.h): decided in one place.
#include "framelift/error.h"

namespace framelift::cli {

constexpr int kExitOk = 0;
constexpr int kExitInternal = exit_code(ErrorKind::Internal);

using framelift::exit_code;

}  // namespace framelift::cli
