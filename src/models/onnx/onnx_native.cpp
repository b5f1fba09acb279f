#include "models/onnx/onnx_native.h"

#include <cmath>
#include <cstdlib>
#include <regex>
#include <set>

#include <ATen/ATen.h>

#include "models/architecture_registry.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models::onnx {
namespace {

bool graph_forced() {
  const char* forced = std::getenv("FRAMELIFT_ONNX_GRAPH");
  return forced && std::string(forced) == "1";
}

bool has_weight(const OnnxModel::WeightedNode& n, size_t k) { return n.weights.size() > k && n.weights[k].defined(); }

// PSNR of `a` against `b` over b's range, as the ONNX tests measure agreement.
double agreement_db(const at::Tensor& a, const at::Tensor& b) {
  const double range = (b.max() - b.min()).item<double>();
  const double mse = (a - b).pow(2).mean().item<double>();
  if (mse == 0) return 200;
  return 10 * std::log10(range * range / mse);
}

// Initializers that kept their PyTorch state-dict names ("conv_first.weight",
// "body.0.rdb1.conv1.bias"): the exporter keeps a parameter's name unless it folded it.
std::optional<weights::StateDict> named_state_dict(const OnnxModel& graph) {
  static const std::regex key(R"(^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*\.(weight|bias)$)");
  weights::StateDict dict;
  for (const auto& [name, tensor] : graph.initializer_values())
    if (std::regex_match(name, key) && at::isFloatingType(tensor.scalar_type())) dict[name] = tensor.to(at::kFloat).contiguous();
  if (dict.size() < 2) return std::nullopt;
  return dict;
}

std::optional<weights::StateDict> compact_state_dict(const OnnxModel& graph) {
  const auto nodes = graph.weighted_nodes();
  weights::StateDict dict;
  int body = 0;
  size_t k = 0;
  bool conv_next = true;
  // The body: convolutions with their bias, each but the last followed by a PReLU.
  for (; k < nodes.size() && (nodes[k].op_type == "Conv" || nodes[k].op_type == "PRelu"); ++k) {
    const auto& n = nodes[k];
    if ((n.op_type == "Conv") != conv_next) return std::nullopt;
    if (n.op_type == "Conv") {
      if (!has_weight(n, 0) || !has_weight(n, 1) || n.weights[0].dim() != 4) return std::nullopt;
      dict[str("body.", body, ".weight")] = n.weights[0].to(at::kFloat).contiguous();
      dict[str("body.", body, ".bias")] = n.weights[1].to(at::kFloat).contiguous();
    } else {
      if (!has_weight(n, 0)) return std::nullopt;
      dict[str("body.", body, ".weight")] = n.weights[0].to(at::kFloat).flatten().contiguous();
    }
    ++body;
    conv_next = !conv_next;
  }
  // Then the pixel shuffle, the nearest-upscaled input and their sum, in any order the exporter chose.
  std::multiset<std::string> tail;
  for (; k < nodes.size(); ++k) tail.insert(nodes[k].op_type);
  const std::multiset<std::string> compact_tail = {"DepthToSpace", "Resize", "Add"};
  if (body < 3 || conv_next || tail != compact_tail) return std::nullopt;
  return dict;
}

}  // namespace

std::vector<weights::StateDict> native_readings(const OnnxModel& graph) {
  if (auto compact = compact_state_dict(graph)) return {*compact};
  std::optional<weights::StateDict> named = named_state_dict(graph);
  if (!named) return {};
  // Only a dict some architecture claims; native_twin still checks it reproduces the graph.
  std::optional<DetectedArch> claimed;
  try {
    claimed = detect(*named, "onnx");
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Model) throw;
  }
  if (!claimed) return {};
  std::vector<weights::StateDict> readings = {*named};
  if (claimed->arch == "span" && claimed->params.get("norm", 1) != 0) {
    readings.push_back(*named);
    readings.back()["no_norm"] = at::zeros({1});
  }
  return readings;
}

std::optional<NativeTwin> native_twin(OnnxModel& graph, const std::string& source) {
  if (graph_forced()) return std::nullopt;
  // The same numbers on a seeded odd-size input, or the graph runs as it is.
  // A fixed pattern rather than at::rand: the check must not move the process's random stream.
  const int64_t c = graph.info().in_channels;
  const at::Tensor x = (at::sin(at::arange(c * 19 * 23, at::kFloat) * 0.37) * 0.5 + 0.5).reshape({1, c, 19, 23});
  at::Tensor expected;
  for (weights::StateDict& dict : native_readings(graph)) {
    std::unique_ptr<ImageModel> native;
    try {
      native = build_model(dict, source);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Model) throw;
      continue;
    }
    if (native->info().scale != graph.info().scale || native->info().in_channels != graph.info().in_channels) continue;
    if (!expected.defined()) expected = graph.forward(x);
    if (agreement_db(native->forward(x), expected) >= 50) return NativeTwin{std::move(dict), std::move(native)};
  }
  return std::nullopt;
}

}  // namespace framelift::models::onnx
