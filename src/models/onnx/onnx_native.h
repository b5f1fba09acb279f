#pragma once
// ONNX graphs that are a native architecture: their weights under the native network's names, so
// that the native path (channels-last layouts, bf16 throughout, the architecture's declared
// geometry) runs them. A mapping is only used once the native network reproduces the graph on a
// probe input (native_twin), so a graph that merely looks like one is never run as it.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "infer/image_model.h"
#include "models/onnx/onnx_model.h"
#include "weights/state_dict.h"

namespace framelift::models::onnx {

// The weights under a native network's names, and that network, built and checked.
struct NativeTwin {
  weights::StateDict dict;
  std::unique_ptr<ImageModel> model;
};

// Compact (SRVGGNetCompact): Conv, PRelu, (Conv, PRelu)*, Conv, DepthToSpace (CRD), a nearest
// Resize of the input and an Add, as `body.N` tensors, by structure (exporters rename PReLU
// slopes); else the initializers that kept state-dict names, when a native detector claims them
// (RRDBNet under BasicSR's or ESRGAN's names, a deployed SPAN, say). Each reading of the graph's
// weights to try, first first: a flag that lives only in a buffer the forward never reads (SPAN's
// no_norm) is not exported, so both of its values are readings. Empty for any other graph.
std::vector<weights::StateDict> native_readings(const OnnxModel& graph);

// The first reading whose native network agrees with the graph within 50 dB on a seeded
// odd-size input; nullopt when none does (FRAMELIFT_ONNX_GRAPH=1: always nullopt).
std::optional<NativeTwin> native_twin(OnnxModel& graph, const std::string& source);

}  // namespace framelift::models::onnx
