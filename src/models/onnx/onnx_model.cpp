#include "models/onnx/onnx_model.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include "infer/tiler.h"
#include "models/onnx/op_registry.h"
#include "util/error.h"
#include "util/str.h"
#include "weights/byte_reader.h"
#include "weights/onnx_tensor.h"

namespace framelift::models::onnx {

struct OnnxModel::Step {
  std::string name, op_type;
  std::unique_ptr<OnnxOp> op;
  std::vector<int> inputs;  // -1: an omitted optional input
  std::vector<int> outputs;
};

namespace {

// libtorch's messages carry a backtrace after the first line. Caught as std::exception: a
// Debian's libtorch: a reshape error from libtorch_cpu escaped a `catch (const c10::Error&)` here.
std::string message_of(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  return std::string(weights::first_line(c10_error ? c10_error->what_without_backtrace() : e.what()));
}

bool is_float(const at::Tensor& t) { return at::isFloatingType(t.scalar_type()); }

// Operators that take statistics over the whole picture: a tile would see only its own.
bool whole_frame_statistics(const std::string& op) {
  return op == "InstanceNormalization" || op == "GlobalAveragePool" || op == "GlobalMaxPool";
}

std::optional<std::vector<weights::onnx::Dim>> declared_shape(const weights::onnx::Graph& g, const std::string& name) {
  for (const auto& in : g.inputs)
    if (in.name == name) return in.shape;
  return std::nullopt;
}

// Inputs that are an operator's parameters rather than data (scales, sizes, clip bounds, pad
// values, exponents): they stay fp32 on the CPU when the model moves to bf16 or a GPU, so a scale of
// 1/3 or a bound of 0.999 keeps its value.
bool parameter_input(const std::string& op, size_t k) {
  if (op == "Resize") return k >= 1;
  if (op == "Upsample" || op == "Pow") return k == 1;
  if (op == "Clip" || op == "Pad") return k >= 1;
  return op == "Range" || op == "ConstantOfShape";
}

}  // namespace

std::unique_ptr<OnnxModel> OnnxModel::load(const std::filesystem::path& file) {
  return std::make_unique<OnnxModel>(weights::onnx::parse_onnx(file));
}

OnnxModel::~OnnxModel() = default;

OnnxModel::OnnxModel(weights::onnx::Model model) : source_(model.source), opset_(model.opset()) {
  build(model);
  probe_geometry();
}

int OnnxModel::value(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? -1 : it->second;
}

// One pass over the nodes in file order (ONNX requires a topological order): each node's op is
// built, and run at once when all its inputs are known.
void OnnxModel::build(const weights::onnx::Model& model) {
  const auto& g = model.graph;
  if (opset_ < kMinOpset || opset_ > kMaxOpset)
    throw Error(ErrorKind::Model, str(source_, ": opset ", opset_, " is not supported (framelift runs opsets ", kMinOpset, "-",
                                      kMaxOpset, "; re-export with opset_version in that range)"));
  auto add_value = [&](const std::string& name) {
    auto [it, fresh] = values_.emplace(name, static_cast<int>(constants_.size()));
    if (fresh) constants_.emplace_back();
    return it->second;
  };
  for (const auto& [name, tensor] : weights::onnx::initializers(model)) {
    constants_[static_cast<size_t>(add_value(name))] = tensor;
    initializer_names_.insert(name);
    ++stats_.initializers;
    if (is_float(tensor)) stats_.parameters += tensor.numel();
  }
  std::vector<std::string> image_inputs;
  for (const auto& in : g.inputs)
    if (!values_.count(in.name)) image_inputs.push_back(in.name);  // IR < 4 lists initializers as inputs too
  if (image_inputs.size() != 1)
    throw Error(ErrorKind::Model, str(source_, ": the graph has ", image_inputs.size(),
                                      " inputs besides its weights; framelift runs networks of one image input"));
  if (g.outputs.empty()) throw Error(ErrorKind::Model, str(source_, ": the graph has no output"));
  input_name_ = image_inputs[0];
  output_name_ = g.outputs[0].name;
  input_ = add_value(input_name_);

  stats_.nodes = g.nodes.size();
  int64_t first_conv_channels = 0;
  std::vector<Step> steps;
  for (const auto& node : g.nodes) {
    NodeSpec spec{node, opset_, source_, {}};
    if (!node.domain.empty() && node.domain != "ai.onnx")
      spec.fail(str("operator domain '", node.domain, "' is not supported (only the default ONNX domain)"));
    const auto factory = find_op(node.op_type);
    if (!factory)
      spec.fail(str("operator ", node.op_type, " is not supported (docs/models.md lists the ", supported_ops().size(), " that are)"));
    Step step;
    if (node.op_type == "Conv" && node.inputs.size() > 1 && node.inputs[0] == input_name_ && !first_conv_channels) {
      const int v = value(node.inputs[1]);
      const at::Tensor w = v < 0 ? at::Tensor() : constants_[static_cast<size_t>(v)];
      const auto* group = node.find("group");
      if (w.defined() && w.dim() == 4) first_conv_channels = w.size(1) * (group ? group->i : 1);
    }
    step.name = node.name;
    step.op_type = node.op_type;
    bool known = true;
    for (const auto& name : node.inputs) {
      if (name.empty()) {
        step.inputs.push_back(-1);
        spec.constants.emplace_back();
        continue;
      }
      const int v = value(name);
      if (v < 0) spec.fail(str("reads ", name, " before any node makes it"));
      step.inputs.push_back(v);
      spec.constants.push_back(constants_[static_cast<size_t>(v)]);
      known = known && constants_[static_cast<size_t>(v)].defined();
    }
    for (size_t k = 0; k < step.inputs.size(); ++k)
      if (step.inputs[k] >= 0 && parameter_input(node.op_type, k)) parameters_.insert(step.inputs[k]);
    for (const auto& name : node.outputs) {
      if (values_.count(name)) spec.fail(str("writes ", name, ", which another node or an initializer already holds"));
      step.outputs.push_back(add_value(name));
    }
    try {
      step.op = (*factory)(spec);
      if (known) {
        // Constant folding: the result is a value from now on, and the node does not run per frame.
        Tensors args;
        for (int v : step.inputs) args.push_back(v < 0 ? at::Tensor() : constants_[static_cast<size_t>(v)]);
        Tensors out = step.op->run(args, RunContext{});
        for (size_t k = 0; k < step.outputs.size() && k < out.size(); ++k)
          constants_[static_cast<size_t>(step.outputs[k])] = out[k];
        ++stats_.folded;
        continue;
      }
    } catch (const Error& e) {
      if (std::string(e.what()).rfind(source_ + ": ", 0) == 0) throw;
      spec.fail(e.what());
    } catch (const std::exception& e) {
      spec.fail(message_of(e));
    }
    steps.push_back(std::move(step));
  }
  output_ = value(output_name_);
  if (output_ < 0) throw Error(ErrorKind::Model, str(source_, ": no node makes the graph's output ", output_name_));

  // Only the nodes the output depends on run.
  std::vector<bool> needed(constants_.size(), false);
  needed[static_cast<size_t>(output_)] = true;
  std::vector<bool> keep(steps.size(), false);
  for (size_t s = steps.size(); s-- > 0;) {
    for (int o : steps[s].outputs) keep[s] = keep[s] || needed[static_cast<size_t>(o)];
    if (!keep[s]) continue;
    for (int i : steps[s].inputs)
      if (i >= 0) needed[static_cast<size_t>(i)] = true;
  }
  for (size_t s = 0; s < steps.size(); ++s) {
    if (!keep[s]) continue;
    ++stats_.op_counts[steps[s].op_type];
    if (whole_frame_statistics(steps[s].op_type)) info_.tiled = false;
    steps_.push_back(std::move(steps[s]));
  }
  // Constants nobody reads (folded intermediates, unused initializers) are freed.
  for (size_t v = 0; v < constants_.size(); ++v)
    if (!needed[v]) constants_[v] = at::Tensor();
  info_.arch = "onnx_graph";
  // Input channels: what the first convolution reading the input expects, else the declared dim.
  info_.in_channels = 3;
  if (const auto& shape = g.inputs.empty() ? std::nullopt : declared_shape(g, input_name_); shape && shape->size() == 4)
    if (const auto* c = std::get_if<int64_t>(&(*shape)[1]); c && *c > 0) info_.in_channels = static_cast<int>(*c);
  if (first_conv_channels > 0 && first_conv_channels < 65536) info_.in_channels = static_cast<int>(first_conv_channels);
}

struct OnnxModel::Counts {
  double macs = 0, peak_elems = 0, traffic_elems = 0;
};

namespace {

// Multiply-accumulates of one node, from the shapes it ran on; 0 for the cheap operators.
double node_macs(const std::string& op, const Tensors& in, const Tensors& out) {
  if (out.empty() || !out[0].defined() || in.size() < 2 || !in[0].defined() || !in[1].defined()) return 0;
  const at::Tensor& w = in[1];
  if (op == "Conv" && w.dim() >= 3) return static_cast<double>(out[0].numel()) * static_cast<double>(w.numel() / w.size(0));
  if (op == "ConvTranspose" && w.dim() >= 3) return static_cast<double>(in[0].numel()) * static_cast<double>(w.numel() / w.size(0));
  if ((op == "MatMul" || op == "Gemm") && in[0].dim() >= 1) {
    // The reduced dimension: A's last (Gemm's transA is rare in exports; its shapes give the same product).
    return static_cast<double>(out[0].numel()) * static_cast<double>(in[0].size(-1));
  }
  return 0;
}

double live_elements(const std::vector<at::Tensor>& table, const std::vector<at::Tensor>& constants) {
  double n = 0;
  for (size_t v = 0; v < table.size(); ++v)
    if (table[v].defined() && !constants[v].defined()) n += static_cast<double>(table[v].numel());
  return n;
}

}  // namespace

at::Tensor OnnxModel::run(const at::Tensor& image) { return run(image, nullptr); }

std::map<std::string, at::Tensor> OnnxModel::initializer_values() const {
  std::map<std::string, at::Tensor> out;
  for (const auto& name : initializer_names_) {
    const at::Tensor& t = constants_[static_cast<size_t>(values_.at(name))];
    if (t.defined()) out[name] = t;
  }
  return out;
}

std::vector<OnnxModel::WeightedNode> OnnxModel::weighted_nodes() const {
  std::vector<WeightedNode> out;
  for (const auto& step : steps_) {
    WeightedNode n{step.op_type, {}};
    for (size_t k = 1; k < step.inputs.size(); ++k)
      n.weights.push_back(step.inputs[k] < 0 ? at::Tensor() : constants_[static_cast<size_t>(step.inputs[k])]);
    out.push_back(std::move(n));
  }
  return out;
}

arch::ArchCost OnnxModel::cost_model() {
  const c10::Device device = device_;
  const c10::ScalarType dtype = dtype_;
  to(c10::kCPU, at::kFloat);
  Counts counts;
  const int64_t side = (64 + info_.size_multiple - 1) / info_.size_multiple * info_.size_multiple;
  run(at::zeros({1, info_.in_channels, side, side}), nullptr, &counts);
  to(device, dtype);
  const double px = static_cast<double>(side * side);
  arch::ArchCost c;
  c.arch = "onnx_graph";
  c.scale = info_.scale;
  c.macs_per_px = counts.macs / px;
  c.peak_elems_per_px = counts.peak_elems / px;
  c.traffic_elems_per_px = counts.traffic_elems / px;
  c.params = static_cast<double>(stats_.parameters);
  c.tile_overlap = info_.tile_overlap;
  c.size_multiple = info_.size_multiple;
  c.tiled = info_.tiled;
  return c;
}

at::Tensor OnnxModel::run(const at::Tensor& image, bool* whole_picture, Counts* counts) {
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> table = constants_;
  table[static_cast<size_t>(input_)] = image;
  std::vector<int> uses(table.size(), 0);
  for (const auto& step : steps_)
    for (int i : step.inputs)
      if (i >= 0) ++uses[static_cast<size_t>(i)];
  ++uses[static_cast<size_t>(output_)];
  const RunContext context{dtype_, whole_picture};
  for (const auto& step : steps_) {
    Tensors args;
    args.reserve(step.inputs.size());
    for (int i : step.inputs) {
      if (i < 0) {
        args.emplace_back();
        continue;
      }
      args.push_back(table[static_cast<size_t>(i)]);
      // The last reader releases a value that is not a constant, so activations do not pile up.
      if (--uses[static_cast<size_t>(i)] == 0 && !constants_[static_cast<size_t>(i)].defined()) table[static_cast<size_t>(i)] = at::Tensor();
    }
    Tensors out;
    try {
      out = step.op->run(args, context);
    } catch (const Error& e) {
      throw Error(ErrorKind::Model, str(source_, ": node ", step.name, " (", step.op_type, "): ", e.what()));
    } catch (const std::exception& e) {
      // An allocation failure stays what it is: the tiler halves its tile on it.
      if (infer::is_out_of_memory(e)) throw;
      throw Error(ErrorKind::Model, str(source_, ": node ", step.name, " (", step.op_type, "): ", message_of(e)));
    }
    if (out.size() < step.outputs.size())
      throw Error(ErrorKind::Model, str(source_, ": node ", step.name, " (", step.op_type, ") made ", out.size(), " outputs, the graph names ",
                                        step.outputs.size()));
    if (counts) {
      counts->macs += node_macs(step.op_type, args, out);
      for (const auto& t : out)
        if (t.defined()) counts->traffic_elems += 2.0 * static_cast<double>(t.numel());  // written, then read back
    }
    for (size_t k = 0; k < step.outputs.size(); ++k) table[static_cast<size_t>(step.outputs[k])] = std::move(out[k]);
    if (counts) counts->peak_elems = std::max(counts->peak_elems, live_elements(table, constants_));
  }
  at::Tensor y = table[static_cast<size_t>(output_)];
  if (!y.defined()) throw Error(ErrorKind::Model, str(source_, ": the graph's output ", output_name_, " was not computed"));
  return y;
}

void OnnxModel::probe_geometry() {
  // out = scale * in for a fully convolutional net; nets with a size multiple fail (mismatched
  // shapes at a skip connection or a window partition) until the probe's sizes are multiples of it.
  std::string last_error;
  for (int base : {16, 40, 88}) {
    for (int m : {1, 2, 4, 8, 16, 32, 64}) {
      const int64_t a = (base + m - 1) / m * m;
      at::Tensor y;
      bool whole_picture = false;
      try {
        y = run(at::zeros({1, info_.in_channels, a, a + m}, at::TensorOptions().device(device_).dtype(dtype_)), &whole_picture);
      } catch (const Error& e) {
        last_error = e.what();
        continue;
      }
      if (y.dim() != 4) throw Error(ErrorKind::Model, str(source_, ": the output has ", y.dim(), " dimensions, not an image's 4"));
      const int64_t oh = y.size(2), ow = y.size(3);
      if (ow <= oh || (ow - oh) % m != 0) continue;
      const int64_t s = (ow - oh) / m;
      if (s * a != oh) continue;
      info_.scale = static_cast<int>(s);
      info_.size_multiple = m;
      info_.out_channels = static_cast<int>(y.size(1));
      if (whole_picture) info_.tiled = false;
      return;
    }
  }
  throw Error(ErrorKind::Model, str(source_, ": cannot determine the network's scale and size multiple (probe inputs up to 128x192 ",
                                    "failed; an export with fixed H and W needs dynamic axes)",
                                    last_error.empty() ? "" : ": ", last_error));
}

at::Tensor OnnxModel::forward(const at::Tensor& input) {
  at::NoGradGuard no_grad;
  if (input.dim() != 4 || input.size(1) != info_.in_channels)
    throw Error(ErrorKind::Model, framelift::str(source_, ": expects [N, ", info_.in_channels, ", H, W], got ", input.sizes()));
  if (input.size(2) % info_.size_multiple || input.size(3) % info_.size_multiple)
    throw Error(ErrorKind::Model, str(source_, ": input ", input.size(3), "x", input.size(2), " is not a multiple of ", info_.size_multiple));
  at::Tensor y = run(input.to(device_, dtype_).contiguous());
  return y.to(input.scalar_type()).contiguous();
}

void OnnxModel::to(c10::Device device, c10::ScalarType dtype) {
  for (size_t v = 0; v < constants_.size(); ++v) {
    at::Tensor& c = constants_[v];
    if (c.defined() && is_float(c) && !parameters_.count(static_cast<int>(v))) c = c.to(device, dtype);
  }
  device_ = device;
  dtype_ = dtype;
}

}  // namespace framelift::models::onnx
