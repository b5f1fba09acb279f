#pragma once
// framelift reports every failure that stops an operation as framelift::Error. The message is one
// line a user can act on: it names the file (or stream, or option) and the problem. The CLI turns
// an Error into that line on stderr and a non-zero exit code (see src/cli/exit_codes.h).
#include <stdexcept>
#include <string>

namespace framelift {

// Broad classes of failure; the CLI maps each to a distinct exit code so scripts can react.
enum class ErrorKind {
  Usage,       // bad command line or option value
  Input,       // input missing, unreadable, not media, corrupt
  Output,      // output cannot be written (permissions, disk full, container limits)
  Model,       // weights missing, malformed, unsupported
  Resource,    // out of memory, device missing
  Interrupted, // stopped by a signal; finished work was kept
  Internal,
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace framelift
