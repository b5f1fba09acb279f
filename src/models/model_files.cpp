#include "models/model_files.h"

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "library/model_locator.h"
#include "models/architecture_registry.h"
#include "models/ncnn/layer_registry.h"
#include "models/ncnn/ncnn_model.h"
#include "models/ncnn_native_weights.h"
#include "models/resized_model.h"
#include "util/error.h"
#include "util/str.h"
#include "weights/load_weights.h"
#include "weights/ncnn_bin.h"
#include "weights/ncnn_param.h"

namespace fs = std::filesystem;

namespace framelift::models {
namespace {

std::unique_ptr<ImageModel> open_ncnn(const fs::path& param, const fs::path& bin) {
  // The .param is parsed and the .bin read once: both paths share the tensors.
  weights::NcnnGraph graph = weights::parse_ncnn_param(param);
  weights::NcnnBinOptions bin_options;
  bin_options.weightless_custom_types = ncnn::custom_layer_types();
  const weights::StateDict ncnn_weights = weights::ncnn_to_state_dict(graph, bin, bin_options);
  return open_ncnn_model(std::move(graph), ncnn_weights);
}

std::unique_ptr<ImageModel> open_file(const fs::path& file) {
  std::string ext = file.extension().string();
  if (ext == ".param" || ext == ".bin") {
    fs::path param = fs::path(file).replace_extension(".param"), bin = fs::path(file).replace_extension(".bin");
    if (!fs::exists(param) || !fs::exists(bin))
      throw Error(ErrorKind::Model, str(file.string(), ": an ncnn model needs both ", param.filename().string(), " and ",
                                        bin.filename().string(), " side by side"));
    return open_ncnn(param, bin);
  }
  if (ext == ".pth" || ext == ".pt" || ext == ".ckpt" || ext == ".safetensors") return load_model(file);
  throw Error(ErrorKind::Model, str(file.string(), ": unsupported model file type '", ext,
                                    "' (ncnn .param/.bin, PyTorch .pth/.pt/.ckpt, .safetensors)"));
}

}  // namespace

// An ncnn export runs on its native architecture when it is one (the same weights under native
// names: Compact, RRDBNet, Real-CUGAN, waifu2x CUNet and UpConv7;
// tests/models/arch_ncnn_agreement_test.cpp holds the two paths to each other), which is faster
// and takes bf16 fully; the graph interpreter runs the rest.
// FRAMELIFT_NCNN_GRAPH=1 forces the interpreter (the reference path for those comparisons).
std::unique_ptr<ImageModel> open_ncnn_model(weights::NcnnGraph graph, const weights::StateDict& ncnn_weights) {
  const char* forced = std::getenv("FRAMELIFT_NCNN_GRAPH");
  const bool graph_only = forced && std::string(forced) == "1";
  std::unique_ptr<ImageModel> native;
  if (!graph_only) {
    try {
      native = build_model(ncnn_to_native_state_dict(graph, ncnn_weights), graph.source);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Model) throw;
    }
  }
  // The graph's measured geometry says the export's scale, also when the native network runs.
  auto graph_model = std::make_unique<ncnn::NcnnModel>(std::move(graph), ncnn_weights);
  // Exports that end in a resize (animevideov3 x2/x3) keep it. The graph's other quirks (Real-
  // CUGAN's cropped borders) are inside the native network too: the outputs agree as they are.
  const int graph_scale = graph_model->geometry().scale;
  if (!native || graph_scale > native->info().scale) return graph_model;
  return resized_model(std::move(native), graph_scale);
}

std::unique_ptr<ImageModel> open_model(const std::string& name_or_path) {
  return open_file(library::resolve_model_file(name_or_path));
}

std::string describe_model_file(const std::string& name_or_path) {
  fs::path file = library::resolve_model_file(name_or_path);
  nlohmann::ordered_json j = {{"model", name_or_path}, {"file", file.string()}};
  std::string ext = file.extension().string();
  if (ext == ".param" || ext == ".bin") {
    fs::path param = fs::path(file).replace_extension(".param"), bin = fs::path(file).replace_extension(".bin");
    weights::NcnnGraph graph = weights::parse_ncnn_param(param);
    weights::StateDict ncnn = weights::ncnn_to_state_dict(graph, bin);
    auto model = ncnn::NcnnModel::load(param, bin);
    j["format"] = "ncnn";
    j["layers"] = graph.layers.size();
    j["graph"] = {{"scale", model->geometry().scale},
                  {"size_multiple", model->geometry().size_multiple},
                  {"border_out", model->geometry().border_out}};
    // The same weights as a native architecture, when the graph is one framelift knows.
    try {
      j["native"] = nlohmann::ordered_json::parse(describe_model(ncnn_to_native_state_dict(graph, ncnn), file.string()));
    } catch (const Error&) {
      j["native"] = nullptr;
    }
  } else {
    j["format"] = ext.substr(1);
    j["native"] = nlohmann::ordered_json::parse(describe_model(weights::load_weights(file), file.string()));
  }
  return j.dump(2);
}

}  // namespace framelift::models
