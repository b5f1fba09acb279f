// Any byte string must parse (and its initializers convert) or throw framelift::Error; crashes,
// leaks, UB and allocations beyond the input's size are bugs.
#include <cstddef>
#include <cstdint>
#include <span>

#include "util/error.h"
#include "weights/onnx_proto.h"
#include "weights/onnx_tensor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    namespace onnx = framelift::weights::onnx;
    onnx::looks_like_onnx(std::span<const uint8_t>(data, size));
    onnx::Model model = onnx::parse_onnx_bytes(std::span<const uint8_t>(data, size), "fuzz.onnx");
    onnx::initializers(model);
    for (const auto& node : model.graph.nodes)
      for (const auto& attribute : node.attributes)
        if (attribute.t) onnx::to_tensor(*attribute.t, "fuzz.onnx");
  } catch (const framelift::Error&) {
  }
  return 0;
}
