#pragma once
// The library's version. The shared library's SONAME carries the major number: a program built
// against 0.x runs with any 0.y >= x that it finds.
#define FRAMELIFT_VERSION_MAJOR 0
#define FRAMELIFT_VERSION_MINOR 1
#define FRAMELIFT_VERSION_PATCH 0

namespace framelift {

// "0.1.0": the version of the library the program runs with (which may be newer than the headers
// it was built against). Thread-safe.
const char* version() noexcept;

}  // namespace framelift
