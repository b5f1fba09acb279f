#include "models/model_files.h"

#include <cstdlib>
#include <optional>

#include <nlohmann/json.hpp>

#include "library/model_locator.h"
#include "models/architecture_registry.h"
#include "models/face_detector.h"
#include "models/interpolator_networks.h"
#include "models/layer_report.h"
#include "models/ncnn/layer_registry.h"
#include "models/ncnn/ncnn_model.h"
#include "models/ncnn_native_weights.h"
#include "models/onnx/onnx_model.h"
#include "models/onnx/onnx_native.h"
#include "models/resized_model.h"
#include "util/error.h"
#include "util/str.h"
#include "weights/load_weights.h"
#include "weights/ncnn_bin.h"
#include "weights/ncnn_param.h"
#include "weights/file_bytes.h"
#include "weights/onnx_proto.h"

namespace fs = std::filesystem;

namespace framelift::models {
namespace {

struct NcnnFiles {
  weights::NcnnGraph graph;
  weights::StateDict weights;
};

// The .param is parsed and the .bin read once: the native network and the graph interpreter
// share the tensors.
NcnnFiles read_ncnn(const fs::path& file) {
  const fs::path param = fs::path(file).replace_extension(".param"), bin = fs::path(file).replace_extension(".bin");
  if (!fs::exists(param) || !fs::exists(bin))
    throw Error(ErrorKind::Model, str(file.string(), ": an ncnn model needs both ", param.filename().string(), " and ",
                                      bin.filename().string(), " side by side"));
  NcnnFiles f;
  f.graph = weights::parse_ncnn_param(param);
  weights::NcnnBinOptions bin_options;
  bin_options.weightless_custom_types = ncnn::custom_layer_types();
  f.weights = weights::ncnn_to_state_dict(f.graph, bin, bin_options);
  return f;
}

bool is_ncnn(const fs::path& file) { return file.extension() == ".param" || file.extension() == ".bin"; }

bool is_native_weights(const fs::path& file) {
  const std::string ext = file.extension().string();
  return ext == ".pth" || ext == ".pt" || ext == ".ckpt" || ext == ".safetensors";
}

// .onnx, or a file under another name whose bytes are a ModelProto (ONNX has no magic number;
// every exporter writes ir_version first).
bool is_onnx(const fs::path& file) {
  if (file.extension() == ".onnx") return true;
  if (is_ncnn(file) || is_native_weights(file)) return false;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return false;
  return weights::onnx::looks_like_onnx(weights::read_file_head(file, 16).bytes);
}

[[noreturn]] void unsupported(const fs::path& file) {
  throw Error(ErrorKind::Model, str(file.string(), ": unsupported model file type '", file.extension().string(),
                                    "' (ncnn .param/.bin, PyTorch .pth/.pt/.ckpt, .safetensors, ONNX .onnx)"));
}

std::unique_ptr<ImageModel> open_file(const fs::path& file) {
  if (is_ncnn(file)) {
    NcnnFiles f = read_ncnn(file);
    return open_ncnn_model(std::move(f.graph), f.weights);
  }
  if (is_native_weights(file)) return load_model(file);
  if (is_onnx(file)) {
    // A graph that is a native architecture runs natively (onnx_native.h checks they agree).
    std::unique_ptr<onnx::OnnxModel> graph = onnx::OnnxModel::load(file);
    if (auto twin = onnx::native_twin(*graph, file.string())) return std::move(twin->model);
    return graph;
  }
  unsupported(file);
}

bool graph_forced() {
  const char* forced = std::getenv("FRAMELIFT_NCNN_GRAPH");
  return forced && std::string(forced) == "1";
}

// The export's weights under a native architecture's names, or nothing when none matches.
std::optional<weights::StateDict> native_weights(const weights::NcnnGraph& graph, const weights::StateDict& ncnn_weights) {
  if (graph_forced()) return std::nullopt;
  try {
    return ncnn_to_native_state_dict(graph, ncnn_weights);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Model) throw;
  }
  return std::nullopt;
}

// The native network runs unless the graph outputs more than it does (the resize an export ends
// in only ever shrinks: animevideov3 x2/x3).
bool runs_native(int native_scale, int graph_scale) { return graph_scale <= native_scale; }

void describe_onnx(const fs::path& file, nlohmann::ordered_json& j) {
  weights::onnx::Model proto = weights::onnx::parse_onnx(file);
  j["format"] = "onnx";
  j["ir_version"] = proto.ir_version;
  j["opset"] = proto.opset();
  j["producer"] = str(proto.producer_name, proto.producer_version.empty() ? "" : " ", proto.producer_version);
  j["external_data"] = proto.external_files;
  onnx::OnnxModel model(std::move(proto));
  const auto& st = model.stats();
  const ModelInfo& info = model.info();
  j["input"] = model.input_name();
  j["output"] = model.output_name();
  j["nodes"] = st.nodes;
  j["folded_at_load"] = st.folded;
  j["initializers"] = st.initializers;
  j["params"] = st.parameters;
  j["operators"] = st.op_counts;
  const arch::ArchCost cost = model.cost_model();
  j["macs_per_px"] = cost.macs_per_px;
  j["graph"] = {{"scale", info.scale},           {"size_multiple", info.size_multiple}, {"in_channels", info.in_channels},
                {"out_channels", info.out_channels}, {"tiled", info.tiled}};
  // The native architecture that runs the graph, when it is one (onnx_native.h), else null.
  j["native"] = nullptr;
  if (auto twin = onnx::native_twin(model, file.string()))
    j["native"] = nlohmann::ordered_json::parse(describe_model(twin->dict, file.string()));
}

}  // namespace

// An ncnn export runs on its native architecture when it is one (the same weights under native
// names: Compact, RRDBNet, Real-CUGAN, waifu2x CUNet and UpConv7;
// tests/models/arch_ncnn_agreement_test.cpp holds the two paths to each other), which is faster
// and takes bf16 fully; the graph interpreter runs the rest.
// FRAMELIFT_NCNN_GRAPH=1 forces the interpreter (the reference path for those comparisons).
std::unique_ptr<ImageModel> open_ncnn_model(weights::NcnnGraph graph, const weights::StateDict& ncnn_weights) {
  std::unique_ptr<ImageModel> native;
  if (auto dict = native_weights(graph, ncnn_weights)) {
    try {
      native = build_model(*dict, graph.source);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Model) throw;
    }
  }
  // The graph's measured geometry says the export's scale, also when the native network runs.
  auto graph_model = std::make_unique<ncnn::NcnnModel>(std::move(graph), ncnn_weights);
  // Exports that end in a resize (animevideov3 x2/x3) keep it. The graph's other quirks (Real-
  // CUGAN's cropped borders) are inside the native network too: the outputs agree as they are.
  const int graph_scale = graph_model->geometry().scale;
  if (!native || !runs_native(native->info().scale, graph_scale)) return graph_model;
  return resized_model(std::move(native), graph_scale);
}

ModelFileNetwork detect_model_file(const fs::path& file) {
  ModelFileNetwork n;
  if (is_native_weights(file)) {
    n.native = detect(weights::load_weights(file), file.string());
    if (n.native) n.output_scale = n.native->scale;
    return n;
  }
  if (is_onnx(file)) {
    // The graph interpreter runs it; its probed geometry is the scale, its operators the cost.
    const auto model = onnx::OnnxModel::load(file);
    n.output_scale = model->info().scale;
    if (auto twin = onnx::native_twin(*model, file.string())) n.native = detect(twin->dict, file.string());
    else n.graph_cost = model->cost_model();
    return n;
  }
  if (!is_ncnn(file)) unsupported(file);
  NcnnFiles f = read_ncnn(file);
  const std::optional<weights::StateDict> dict = native_weights(f.graph, f.weights);
  const std::string source = f.graph.source;
  // The graph's probed geometry is the export's scale, as open_ncnn_model measures it.
  n.output_scale = ncnn::NcnnModel(std::move(f.graph), f.weights).geometry().scale;
  if (dict) n.native = detect(*dict, source);
  if (n.native && !runs_native(n.native->scale, n.output_scale)) n.native.reset();
  return n;
}

std::unique_ptr<ImageModel> open_model(const std::string& name_or_path) {
  return open_file(library::resolve_model_file(name_or_path));
}

std::string describe_model_file(const std::string& name_or_path, bool cpu_paths) {
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
  } else if (is_onnx(file)) {
    describe_onnx(file, j);
  } else {
    j["format"] = ext.substr(1);
    const weights::StateDict dict = weights::load_weights(file);
    // An interpolator is no image network: its own description, and no CPU layer report below.
    if (const InterpolatorNetwork* network = find_interpolator_network(dict, file.string())) {
      j["native"] = nlohmann::ordered_json::parse(network->describe(dict, file.string()));
      return j.dump(2);
    }
    // A face detector neither: its boxes and landmarks are not an image.
    if (const std::optional<FaceDetectorShape> face = detect_retinaface(dict, file.string())) {
      j["native"] = nlohmann::ordered_json::parse(describe_face_detector(*face, dict));
      return j.dump(2);
    }
    j["native"] = nlohmann::ordered_json::parse(describe_model(dict, file.string()));
  }
  if (cpu_paths) {
    const std::unique_ptr<ImageModel> model = open_file(file);
    j["cpu"] = cpu_layer_report(*model, model->info().arch);
  }
  return j.dump(2);
}

}  // namespace framelift::models
