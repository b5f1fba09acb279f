#include "models/ncnn/ncnn_model.h"

#include "infer/fp32_islands.h"

#include <cmath>
#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include "models/ncnn/layer_registry.h"
#include "util/error.h"
#include "util/str.h"
#include "weights/ncnn_bin.h"

namespace framelift::models::ncnn {

struct NcnnModel::Step {
  const weights::NcnnLayer* layer = nullptr;
  std::unique_ptr<NcnnOp> op;  // null for Input layers, whose blobs are fed by the caller
  std::vector<int> inputs, outputs;
};

namespace {

// The first line of a c10::Error, without the C++ backtrace libtorch appends.
std::string first_line(const char* what) {
  std::string s(what);
  auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

// Input channels: the Input layer's c when given, else what the first convolution expects.
int infer_in_channels(const weights::NcnnGraph& graph, const weights::StateDict& weights, const std::string& input) {
  std::vector<std::string> frontier = {input};
  for (const auto& layer : graph.layers) {
    if (layer.type == "Input" && !layer.outputs.empty() && layer.outputs[0] == input) {
      int c = layer.params.get_int(2, 0);
      if (c > 0) return c;
    }
  }
  for (const auto& layer : graph.layers) {
    bool consumes = false;
    for (const auto& in : layer.inputs)
      for (const auto& f : frontier) consumes |= in == f;
    if (!consumes) continue;
    if (layer.type == "Split") {
      frontier.insert(frontier.end(), layer.outputs.begin(), layer.outputs.end());
      continue;
    }
    auto it = weights.find(layer.name + ".weight");
    if ((layer.type == "Convolution" || layer.type == "ConvolutionDepthWise") && it != weights.end())
      return static_cast<int>(it->second.size(1) * layer.params.get_int(7, 1));
  }
  return 3;
}

}  // namespace

std::unique_ptr<NcnnModel> NcnnModel::load(const std::filesystem::path& param, const std::filesystem::path& bin,
                                           NcnnModelOptions options) {
  auto graph = weights::parse_ncnn_param(param);
  weights::NcnnBinOptions bin_options;
  bin_options.weightless_custom_types = custom_layer_types();
  auto state = weights::ncnn_to_state_dict(graph, bin, bin_options);
  return std::make_unique<NcnnModel>(std::move(graph), state, std::move(options));
}

NcnnModel::~NcnnModel() = default;

NcnnModel::NcnnModel(weights::NcnnGraph graph, const weights::StateDict& weights, NcnnModelOptions options)
    : graph_(std::move(graph)), options_(std::move(options)) {
  const std::string& src = graph_.source;
  for (const auto& layer : graph_.layers) {
    Step step;
    step.layer = &layer;
    for (const auto& name : layer.inputs) {
      auto it = blob_index_.find(name);
      if (it == blob_index_.end())
        throw Error(ErrorKind::Model, str(src, ": layer ", layer.name, " reads blob ", name, " before any layer makes it"));
      step.inputs.push_back(it->second);
    }
    for (const auto& name : layer.outputs) {
      auto [it, fresh] = blob_index_.emplace(name, static_cast<int>(blob_index_.size()));
      step.outputs.push_back(it->second);
    }
    if (layer.type != "Input") {
      auto factory = find_layer(layer.type);
      if (!factory)
        throw Error(ErrorKind::Model, str(src, ": layer ", layer.name, " has unsupported type ", layer.type));
      step.op = (*factory)(LayerSpec{layer, weights, src});
    }
    steps_.push_back(std::move(step));
  }
  if (steps_.empty()) throw Error(ErrorKind::Model, str(src, ": network has no layers"));

  input_blob_ = options_.input_blob;
  if (input_blob_.empty()) {
    for (const auto& layer : graph_.layers)
      if (layer.type == "Input" && !layer.outputs.empty()) {
        input_blob_ = layer.outputs[0];
        break;
      }
  }
  output_blob_ = options_.output_blob.empty() ? graph_.layers.back().outputs.at(0) : options_.output_blob;
  if (input_blob_.empty()) throw Error(ErrorKind::Model, str(src, ": network has no Input layer"));
  index_of(input_blob_);
  index_of(output_blob_);

  info_.arch = "ncnn_graph";
  info_.in_channels = infer_in_channels(graph_, weights, input_blob_);
  if (options_.probe) {
    geometry_ = probe_geometry();
    info_.scale = geometry_.scale;
    info_.size_multiple = geometry_.size_multiple;
  }
}

int NcnnModel::index_of(const std::string& blob) const {
  auto it = blob_index_.find(blob);
  if (it == blob_index_.end()) throw Error(ErrorKind::Model, str(graph_.source, ": network has no blob named ", blob));
  return it->second;
}

std::map<std::string, at::Tensor> NcnnModel::run(const std::map<std::string, at::Tensor>& inputs,
                                                 const std::vector<std::string>& outputs) {
  at::NoGradGuard no_grad;
  const size_t nblobs = blob_index_.size();
  std::vector<at::Tensor> table(nblobs);
  std::vector<int> uses(nblobs, 0);
  std::vector<bool> needed_blob(nblobs, false);
  for (const auto& name : outputs) {
    int i = index_of(name);
    needed_blob[i] = true;
    ++uses[i];  // keeps requested blobs alive to the end
  }
  for (const auto& [name, tensor] : inputs) table[index_of(name)] = tensor;

  // Only the layers the requested outputs depend on run; walk backwards to find them.
  std::vector<bool> needed_step(steps_.size(), false);
  for (size_t s = steps_.size(); s-- > 0;) {
    const Step& step = steps_[s];
    bool need = false;
    for (int o : step.outputs) need |= needed_blob[o] && !table[o].defined();
    if (!need) continue;
    needed_step[s] = true;
    for (int i : step.inputs) {
      needed_blob[i] = true;
      ++uses[i];
    }
  }

  for (size_t s = 0; s < steps_.size(); ++s) {
    if (!needed_step[s]) continue;
    const Step& step = steps_[s];
    const auto& layer = *step.layer;
    if (!step.op) {
      throw Error(ErrorKind::Model, str(graph_.source, ": input blob ", layer.outputs.at(0), " of layer ", layer.name,
                                        " was not provided"));
    }
    Blobs args;
    args.reserve(step.inputs.size());
    for (int i : step.inputs) {
      if (--uses[i] == 0) args.push_back(std::move(table[i]));  // last reader: hand over ownership
      else args.push_back(table[i]);
    }
    Blobs results;
    try {
      results = step.op->forward(std::move(args));
    } catch (const Error&) {
      throw;
    } catch (const c10::Error& e) {
      throw Error(ErrorKind::Model, str(graph_.source, ": layer ", layer.name, " (", layer.type,
                                        "): ", first_line(e.what_without_backtrace())));
    }
    if (results.size() != step.outputs.size())
      throw Error(ErrorKind::Model, str(graph_.source, ": layer ", layer.name, " produced ", results.size(),
                                        " blobs, the .param declares ", step.outputs.size()));
    for (size_t k = 0; k < results.size(); ++k)
      if (uses[step.outputs[k]] > 0) table[step.outputs[k]] = std::move(results[k]);
  }

  std::map<std::string, at::Tensor> out;
  for (const auto& name : outputs) out[name] = table[index_of(name)];
  return out;
}

at::Tensor NcnnModel::run(const at::Tensor& input) {
  return run({{input_blob_, input}}, {output_blob_}).at(output_blob_);
}

NcnnGeometry NcnnModel::probe_geometry() {
  // One probe of size a x (a + m) gives two equations out = s * in - 2 * border. Nets that need a
  // size multiple fail (mismatched shapes at a skip connection) until m reaches it; nets that crop
  // their border fail until a is large enough.
  for (int base : {16, 40, 88}) {
    for (int m : {1, 2, 4, 8, 16}) {
      int64_t a = (base + m - 1) / m * m;
      at::Tensor y;
      try {
        y = run(at::zeros({1, info_.in_channels, a, a + m}, at::TensorOptions().device(device_).dtype(dtype_)));
      } catch (const std::exception&) {
        continue;
      }
      if (y.dim() != 4) break;
      int64_t oh = y.size(2), ow = y.size(3);
      if ((ow - oh) % m != 0 || ow <= oh) continue;
      int64_t s = (ow - oh) / m;
      int64_t crop = s * a - oh;
      if (crop < 0 || crop % 2 != 0) continue;
      info_.out_channels = static_cast<int>(y.size(1));
      // A flat mid-grey picture comes out grey from an image net, near zero from a residual one.
      const double grey = run(at::full({1, info_.in_channels, a, a + m}, 0.5, at::TensorOptions().device(device_).dtype(dtype_)))
                              .to(at::kFloat).mean().item<double>();
      const bool residual = info_.in_channels == info_.out_channels && std::abs(grey) < 0.15;
      return {static_cast<int>(s), m, static_cast<int>(crop / 2), residual};
    }
  }
  throw Error(ErrorKind::Model, str(graph_.source, ": cannot determine the network's scale and size multiple"
                                                   " (probe inputs up to 104x120 all failed)"));
}

at::Tensor NcnnModel::forward(const at::Tensor& input) {
  at::NoGradGuard no_grad;
  const auto& g = geometry_;
  if (input.dim() != 4 || input.size(1) != info_.in_channels)
    throw Error(ErrorKind::Model, framelift::str(graph_.source, ": expects [N, ", info_.in_channels, ", H, W], got ", input.sizes()));
  int64_t h = input.size(2), w = input.size(3);
  if (h % g.size_multiple || w % g.size_multiple)
    throw Error(ErrorKind::Model, str(graph_.source, ": input ", w, "x", h, " is not a multiple of ", g.size_multiple));
  at::Tensor x = input.to(device_, dtype_);
  // A net that crops its border gets it back by reflection, rounded up to whole input pixels.
  int64_t pad = (g.border_out + g.scale - 1) / g.scale;
  if (pad > 0) {
    if (pad >= h || pad >= w)
      throw Error(ErrorKind::Model, str(graph_.source, ": input ", w, "x", h, " is smaller than the ", pad,
                                        "-pixel border the network needs"));
    x = infer::reflect_pad2d(x, {pad, pad, pad, pad});
  }
  // Plain NCHW: channels-last measured no faster here (PReLU and pixel shuffle reorder it back).
  at::Tensor y = run(x.contiguous());
  int64_t extra = pad * g.scale - g.border_out;
  if (extra > 0) y = y.slice(2, extra, extra + h * g.scale).slice(3, extra, extra + w * g.scale);
  if (g.residual) y = y + at::upsample_nearest2d(input.to(device_, dtype_), {h * g.scale, w * g.scale});
  return y.to(input.scalar_type()).contiguous();
}

void NcnnModel::to(c10::Device device, c10::ScalarType dtype) {
  for (auto& step : steps_)
    if (step.op) step.op->to(device, dtype);
  device_ = device;
  dtype_ = dtype;
}

}  // namespace framelift::models::ncnn
