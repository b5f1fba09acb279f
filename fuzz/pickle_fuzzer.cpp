// Any byte string must unpickle or throw framelift::Error; crashes, leaks and UB are bugs.
#include <cstddef>
#include <cstdint>
#include <span>

#include "util/error.h"
#include "weights/unpickler.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    // A small copy budget: memo bombs are still refused, just faster, so more inputs run.
    framelift::weights::pickle::Limits limits;
    limits.max_copied_bytes = 1 << 20;
    framelift::weights::pickle::unpickle(std::span<const uint8_t>(data, size), "fuzz.pkl", limits);
  } catch (const framelift::Error&) {
  }
  return 0;
}
