#pragma once
// Which path the convolutions of a network take on this CPU, for `framelift models info`: the
// network runs once on a 64x64 input (its size multiple rounded up) in the precision
// `--precision auto` picks for it, and every convolution is reported by shape, with its call
// count, the layout it ran in and why (infer/conv_layout.h), heaviest first:
//   {"precision": "bf16", "input": "64x64", "convolutions": [{"layer": "17x17 conv 16->16",
//    "calls": 28, "layout": "nchw", "why": "measured at 64x64: ...", "summary": "17x17 conv 16->16 x28: nchw"}, ...]}
#include <string>

#include <nlohmann/json.hpp>

#include "infer/image_model.h"

namespace framelift::models {

// `arch` names the network's declaration (src/arch/), which says whether it runs in bf16; ""
// for one without (an ncnn graph: fp32). Leaves the model on the CPU in that precision.
nlohmann::ordered_json cpu_layer_report(ImageModel& model, const std::string& arch);

}  // namespace framelift::models
