#include "models/builtin_architectures.h"

namespace framelift::models {

void register_builtin_architectures() {
#define FRAMELIFT_NETWORK(id) register_architecture(id##_architecture());
#define FRAMELIFT_NO_NETWORK(id)
  FRAMELIFT_ARCHITECTURES(FRAMELIFT_NETWORK, FRAMELIFT_NO_NETWORK)
#undef FRAMELIFT_NETWORK
#undef FRAMELIFT_NO_NETWORK
}

}  // namespace framelift::models
