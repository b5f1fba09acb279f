#pragma once
// The networks framelift ships, one per file, named in arch/architecture_list.h. The registry
// calls register_builtin_architectures() on first use: a static initializer per file would be
// dropped by the linker from a static library nobody references by symbol.
#include "arch/architecture_list.h"
#include "models/architecture.h"

namespace framelift::models {

#define FRAMELIFT_NETWORK(id) Architecture id##_architecture();
#define FRAMELIFT_NO_NETWORK(id)
FRAMELIFT_ARCHITECTURES(FRAMELIFT_NETWORK, FRAMELIFT_NO_NETWORK)
#undef FRAMELIFT_NETWORK
#undef FRAMELIFT_NO_NETWORK

void register_builtin_architectures();

}  // namespace framelift::models
