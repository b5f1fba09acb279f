#pragma once
// framelift reports every failure that stops an operation as framelift::Error: the library's
// functions throw it and the CLI turns it into one line on stderr and an exit code.
//
// The message is one line a user can act on: it names the file (or stream, or option) and the
// problem ("in.mkv: the video stream has no frames", "stage resize: scale=nan is not allowed
// (a number, 0 < F <= 16)"). kind() says what class of failure it is; exit_code() maps each
// class to the CLI's documented exit code, so a program built on the library can exit as the CLI
// does. Functions that can fail say which kinds they throw; anything else escaping them (an
// std::bad_alloc, say) is a bug to report.
//
// Thread-safety: Error is a value type; copies may be used from any thread.
#include <stdexcept>
#include <string>

namespace framelift {

// Broad classes of failure; each has its own exit code so scripts can react.
enum class ErrorKind {
  Usage,        // bad command line, option or value (exit 2)
  Input,        // input missing, unreadable, not media, corrupt; a damaged job folder (exit 3)
  Output,       // output cannot be written: permissions, disk full, container limits (exit 4)
  Model,        // weights missing, malformed, unsupported (exit 5)
  Resource,     // out of memory, device missing (exit 6)
  Interrupted,  // stopped by a signal or a cancel callback; finished work was kept (exit 130)
  Internal,     // a bug (exit 1)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

// The CLI's exit code for a kind: 2 usage, 3 input, 4 output, 5 model, 6 resources,
// 130 interrupted, 1 internal.
constexpr int exit_code(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::Usage: return 2;
    case ErrorKind::Input: return 3;
    case ErrorKind::Output: return 4;
    case ErrorKind::Model: return 5;
    case ErrorKind::Resource: return 6;
    case ErrorKind::Interrupted: return 130;
    case ErrorKind::Internal: return 1;
  }
  return 1;
}

}  // namespace framelift
