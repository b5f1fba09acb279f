// Any text must parse or throw framelift::Error; crashes, leaks and UB are bugs.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "util/error.h"
#include "weights/ncnn_param.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    framelift::weights::parse_ncnn_param_text(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.param");
  } catch (const framelift::Error&) {
  }
  return 0;
}
