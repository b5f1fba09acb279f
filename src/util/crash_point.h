#pragma once
// Fault injection for the crash-safety tests: with FRAMELIFT_CRASH_AT=NAME:N in the environment,
// the N-th time the process passes crash_point("NAME") it kills itself with SIGKILL (no cleanup,
// no destructors: what a power cut or a reclaimed spot instance does). Points: "decode" (each
// decoded frame), "encode" (each encoded frame), "commit" (before each rename into place),
// "assemble" (each packet written by assemble). Without the variable this is one relaxed load.
#include <string_view>

namespace framelift {

void crash_point(std::string_view name);

}  // namespace framelift
