#include "models/layer_report.h"

#include <ATen/ATen.h>

#include "arch/declaration.h"
#include "infer/conv_layout.h"
#include "infer/device.h"
#include "infer/winograd_conv.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::models {

nlohmann::ordered_json cpu_layer_report(ImageModel& model, const std::string& arch) {
  const arch::Declaration* d = arch.empty() ? nullptr : arch::find_declaration(arch);
  const infer::ReducedPrecisions reduced{d && d->runs_in(arch::Precision::Bf16), false};
  const infer::ExecutionTarget target = infer::resolve_target("cpu", "auto", reduced);
  model.to(c10::kCPU, target.dtype);
  const int64_t m = std::max(1, model.info().size_multiple);
  int64_t side = (64 + m - 1) / m * m;
  at::InferenceMode guard;
  log::QuietScope quiet;  // the run is the report's, not a frame of the user's
  infer::ConvLayoutRecorder recorder;
  const infer::WinogradScope winograd(target.winograd);  // as the model runner opens it
  try {
    model.forward(at::rand({1, model.info().in_channels, side, side}));
  } catch (const Error& e) {
    // A network that takes one size only (a face restorer: its face size) says so as a usage error,
    // before any layer runs.
    if (e.kind() != ErrorKind::Usage || side == m) throw;
    side = m;
    model.forward(at::rand({1, model.info().in_channels, side, side}));
  }
  nlohmann::ordered_json convs = nlohmann::ordered_json::array();
  for (const infer::ConvLayoutRecorder::Entry& e : recorder.entries()) {
    convs.push_back({{"layer", e.shape.describe()},
                     {"calls", e.calls},
                     {"layout", e.layout},
                     {"why", e.why},
                     {"summary", str(e.shape.describe(), " x", e.calls, ": ", e.layout)}});
  }
  return {{"precision", infer::precision_name(target.dtype)}, {"input", str(side, "x", side)}, {"convolutions", convs}};
}

}  // namespace framelift::models
