#include "framelift/version.h"

#define FRAMELIFT_STR2(x) #x
#define FRAMELIFT_STR(x) FRAMELIFT_STR2(x)

namespace framelift {

const char* version() noexcept {
  return FRAMELIFT_STR(FRAMELIFT_VERSION_MAJOR) "." FRAMELIFT_STR(FRAMELIFT_VERSION_MINOR) "." FRAMELIFT_STR(
      FRAMELIFT_VERSION_PATCH);
}

}  // namespace framelift
