#include "models/ncnn_native_weights.h"

#include <algorithm>
#include <vector>

#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

using weights::NcnnGraph;
using weights::NcnnLayer;
using weights::StateDict;

bool has_type(const NcnnGraph& g, const std::string& type) {
  return std::any_of(g.layers.begin(), g.layers.end(), [&](const NcnnLayer& l) { return l.type == type; });
}

int count_type(const NcnnGraph& g, const std::string& type) {
  return static_cast<int>(std::count_if(g.layers.begin(), g.layers.end(), [&](const NcnnLayer& l) { return l.type == type; }));
}

// Layers that carry weights, in file (= PyTorch forward) order.
std::vector<const NcnnLayer*> weighted_layers(const NcnnGraph& g) {
  std::vector<const NcnnLayer*> out;
  for (const auto& l : g.layers)
    if (l.type == "Convolution" || l.type == "Deconvolution" || l.type == "InnerProduct" || l.type == "PReLU")
      out.push_back(&l);
  return out;
}

class Renamer {
 public:
  Renamer(const NcnnGraph& g, const StateDict& w) : graph_(g), weights_(w) {}

  // Copies "<layer>.weight" (and ".bias" when present) to "<native>.weight"/".bias". InnerProduct
  // [out, in] becomes the 1x1 convolution [out, in, 1, 1] the native squeeze-excitation uses.
  void map(const NcnnLayer& layer, const std::string& native, const std::string& expected_type) {
    if (layer.type != expected_type) {
      throw Error(ErrorKind::Model, str(graph_.source, ": layer ", layer.name, " is ", layer.type, ", expected ",
                                        expected_type, " for ", native));
    }
    for (const char* role : {".weight", ".bias"}) {
      auto it = weights_.find(layer.name + role);
      if (it == weights_.end()) continue;
      at::Tensor t = it->second;
      if (layer.type == "InnerProduct" && t.dim() == 2) t = t.reshape({t.size(0), t.size(1), 1, 1});
      out_[native + role] = t;
    }
  }
  StateDict take() { return std::move(out_); }

 private:
  const NcnnGraph& graph_;
  const StateDict& weights_;
  StateDict out_;
};

Error layer_count_error(const NcnnGraph& g, const std::string& arch, size_t found, const std::string& expected) {
  return Error(ErrorKind::Model, str(g.source, ": ", arch, " export with ", found, " weighted layers; expected ", expected));
}

StateDict compact(const NcnnGraph& g, const StateDict& w) {
  auto layers = weighted_layers(g);
  if (layers.size() < 5 || layers.size() % 2 == 0)
    throw layer_count_error(g, "Compact (SRVGG)", layers.size(), "an odd count >= 5 (conv, PReLU pairs and a last conv)");
  Renamer r(g, w);
  for (size_t i = 0; i < layers.size(); ++i)
    r.map(*layers[i], str("body.", i), i % 2 == 0 ? "Convolution" : "PReLU");
  return r.take();
}

StateDict rrdbnet(const NcnnGraph& g, const StateDict& w) {
  auto layers = weighted_layers(g);
  // conv_first, 15 per block, conv_body, one per upscaling step (each after an Interp), conv_hr, conv_last.
  const int ups = count_type(g, "Interp");
  const int64_t body = static_cast<int64_t>(layers.size()) - 4 - ups;
  if (body <= 0 || body % 15 != 0)
    throw layer_count_error(g, "RRDBNet", layers.size(), str("4 + ", ups, " + 15 per block"));
  Renamer r(g, w);
  size_t i = 0;
  r.map(*layers[i++], "conv_first", "Convolution");
  for (int64_t b = 0; b < body / 15; ++b)
    for (int j = 1; j <= 3; ++j)
      for (int k = 1; k <= 5; ++k) r.map(*layers[i++], str("body.", b, ".rdb", j, ".conv", k), "Convolution");
  r.map(*layers[i++], "conv_body", "Convolution");
  for (int u = 1; u <= ups; ++u) r.map(*layers[i++], str("conv_up", u), "Convolution");
  r.map(*layers[i++], "conv_hr", "Convolution");
  r.map(*layers[i++], "conv_last", "Convolution");
  return r.take();
}

StateDict realcugan(const NcnnGraph& g, const StateDict& w) {
  // Native layer names in forward order, with the ncnn layer type each one was exported as.
  std::vector<std::pair<std::string, std::string>> names;
  auto unet_conv = [&](const std::string& p, bool se) {
    names.push_back({p + ".conv.0", "Convolution"});
    names.push_back({p + ".conv.2", "Convolution"});
    if (se) {
      names.push_back({p + ".seblock.conv1", "InnerProduct"});
      names.push_back({p + ".seblock.conv2", "InnerProduct"});
    }
  };
  unet_conv("unet1.conv1", false);
  names.push_back({"unet1.conv1_down", "Convolution"});
  unet_conv("unet1.conv2", true);
  names.push_back({"unet1.conv2_up", "Deconvolution"});
  names.push_back({"unet1.conv3", "Convolution"});
  // waifu2x's noise-only CUNet has a convolution here, the only layer where the two differ.
  auto layers = weighted_layers(g);
  const bool one_x = layers.size() > names.size() && layers[names.size()]->type == "Convolution";
  names.push_back({"unet1.conv_bottom", one_x ? "Convolution" : "Deconvolution"});
  unet_conv("unet2.conv1", false);
  names.push_back({"unet2.conv1_down", "Convolution"});
  unet_conv("unet2.conv2", true);
  names.push_back({"unet2.conv2_down", "Convolution"});
  unet_conv("unet2.conv3", true);
  names.push_back({"unet2.conv3_up", "Deconvolution"});
  unet_conv("unet2.conv4", true);
  names.push_back({"unet2.conv4_up", "Deconvolution"});
  names.push_back({"unet2.conv5", "Convolution"});
  names.push_back({"unet2.conv_bottom", "Convolution"});
  if (layers.size() == names.size() + 1) names.push_back({"conv_final", "Convolution"});  // 4x
  if (layers.size() != names.size())
    throw layer_count_error(g, "Real-CUGAN", layers.size(), str(names.size() - 1, " (2x, 3x) or ", names.size(), " (4x)"));
  Renamer r(g, w);
  for (size_t i = 0; i < layers.size(); ++i) r.map(*layers[i], names[i].first, names[i].second);
  return r.take();
}

StateDict upconv7(const NcnnGraph& g, const StateDict& w) {
  auto layers = weighted_layers(g);
  if (layers.size() != 7) throw layer_count_error(g, "waifu2x UpConv7", layers.size(), "7 (6 convolutions, 1 deconvolution)");
  Renamer r(g, w);
  for (size_t i = 0; i < layers.size(); ++i) r.map(*layers[i], str("net.", 2 * i), i < 6 ? "Convolution" : "Deconvolution");
  return r.take();
}

}  // namespace

StateDict ncnn_to_native_state_dict(const NcnnGraph& graph, const StateDict& ncnn_weights) {
  if (has_type(graph, "Deconvolution") && has_type(graph, "InnerProduct")) return realcugan(graph, ncnn_weights);
  if (has_type(graph, "PReLU") && has_type(graph, "PixelShuffle")) return compact(graph, ncnn_weights);
  if (has_type(graph, "Concat") && has_type(graph, "Eltwise")) return rrdbnet(graph, ncnn_weights);
  // A plain chain ending in the one deconvolution: nothing else in the graph but its Input.
  if (has_type(graph, "Deconvolution") && graph.layers.size() == 8) return upconv7(graph, ncnn_weights);
  throw Error(ErrorKind::Model, str(graph.source, ": ncnn graph is not a known export of a native architecture"
                                                  " (Compact, RRDBNet, Real-CUGAN, waifu2x CUNet and UpConv7)"));
}

}  // namespace framelift::models
