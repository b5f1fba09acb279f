// Any byte string must load or throw framelift::Error; crashes, leaks and UB are bugs.
#include <cstddef>
#include <cstdint>
#include <span>

#include "util/error.h"
#include "weights/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    framelift::weights::load_safetensors_bytes(std::span<const uint8_t>(data, size),
                                               "fuzz.safetensors");
  } catch (const framelift::Error&) {
  }
  return 0;
}
