#pragma once
// ONNX graphs that are a native architecture: their weights under the native network's names, so
// that the native path (channels-last layouts, bf16 throughout, the architecture's declared
// geometry) runs them. A mapping is only used once the native network reproduces the graph on a
// probe input (native_twin), so a graph that merely looks like one is never run as it.
#include <memory>
#include <optional>

#include "infer/image_model.h"
#include "models/onnx/onnx_model.h"
#include "weights/state_dict.h"

namespace framelift::models::onnx {

// Compact (SRVGGNetCompact): Conv, PRelu, (Conv, PRelu)*, Conv, DepthToSpace (CRD), a nearest
// Resize of the input and an Add, as `body.N` tensors, by structure (exporters rename PReLU
// slopes); else the initializers that kept state-dict names, when a native detector claims them
// (RRDBNet under BasicSR's or ESRGAN's names, say); nullopt for any other graph.
std::optional<weights::StateDict> native_state_dict(const OnnxModel& graph);

// The native network for the graph when one is mapped and agrees with the graph within 50 dB on
// a seeded odd-size input; null otherwise (FRAMELIFT_ONNX_GRAPH=1: always null).
std::unique_ptr<ImageModel> native_twin(OnnxModel& graph, const std::string& source);

}  // namespace framelift::models::onnx
