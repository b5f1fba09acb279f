#pragma once
// Exit codes of the framelift CLI, one per class of failure so scripts can react.
#include "util/error.h"

namespace framelift::cli {

constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;

inline int exit_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Usage: return 2;
    case ErrorKind::Input: return 3;
    case ErrorKind::Output: return 4;
    case ErrorKind::Model: return 5;
    case ErrorKind::Resource: return 6;
    case ErrorKind::Interrupted: return 130;
    case ErrorKind::Internal: return kExitInternal;
  }
  return kExitInternal;
}

}  // namespace framelift::cli
