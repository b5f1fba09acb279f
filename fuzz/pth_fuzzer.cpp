// Any byte string must load or throw framelift::Error; crashes, leaks and UB are bugs. Seed it
// with small synthetic checkpoints (see fuzz/README.md): the real ones are megabytes.
#include <cstddef>
#include <cstdint>
#include <span>

#include "util/error.h"
#include "weights/pth.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    framelift::weights::load_pth_bytes(std::span<const uint8_t>(data, size), "fuzz.pth");
  } catch (const framelift::Error&) {
  }
  return 0;
}
