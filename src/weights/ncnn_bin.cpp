#include "weights/ncnn_bin.h"

#include <cstring>
#include <initializer_list>
#include <optional>
#include <fstream>
#include <sstream>

#include <ATen/ATen.h>

#include "util/error.h"
#include "weights/byte_reader.h"
#include "util/str.h"

namespace framelift::weights {
namespace {

constexpr uint32_t kTagFp16 = 0x01306B47;
constexpr uint32_t kTagInt8 = 0x000D4B38;
constexpr uint32_t kTagFp32 = 0x0002C056;

size_t align4(size_t n) { return (n + 3) / 4 * 4; }

// Bytes for `count` elements of `element` bytes, or nullopt when the product overflows. Counts come
// from the .param and are untrusted: they are checked against the file before anything is allocated.
std::optional<size_t> byte_size(int64_t count, size_t element) {
  size_t bytes = 0;
  if (count < 0 || __builtin_mul_overflow(static_cast<uint64_t>(count), element, &bytes)) return std::nullopt;
  return bytes;
}

// A bounds-checked cursor over the .bin bytes that decodes ModelBin blobs.
class BinCursor {
 public:
  BinCursor(const std::string& bytes, const std::string& source) : bytes_(bytes), source_(source) {}

  // A "weight" blob: 4-byte tag first (ModelBin type 0).
  at::Tensor tagged(int64_t count, const std::string& layer) {
    uint32_t tag = 0;
    read_into(&tag, sizeof(tag), layer, "tag");
    if (tag == kTagFp16) {
      const size_t bytes = need(count, 2, layer, "fp16 weights");
      auto t = at::empty({count}, at::kHalf);
      read_into(t.data_ptr(), bytes, layer, "fp16 weights");
      skip(align4(bytes) - bytes, layer);
      return t;
    }
    if (tag == kTagInt8)
      throw Error(ErrorKind::Model, str(source_, ": layer ", layer, ": int8-quantized weights are not supported"));
    if (tag == kTagFp32 || tag == 0) return raw(count, layer);
    // Any other non-zero tag: an old quantization table of 256 floats, then one byte index per value.
    auto table = raw(256, layer);
    const size_t bytes = need(count, 1, layer, "quantized weights");
    auto indices = at::empty({count}, at::kByte);
    read_into(indices.data_ptr(), bytes, layer, "quantized weights");
    skip(align4(bytes) - bytes, layer);
    return table.index_select(0, indices.to(at::kLong));
  }

  // A raw fp32 blob without tag (ModelBin type 1).
  at::Tensor raw(int64_t count, const std::string& layer) {
    const size_t bytes = need(count, 4, layer, "fp32 data");
    auto t = at::empty({count}, at::kFloat);
    read_into(t.data_ptr(), bytes, layer, "fp32 data");
    return t;
  }

  size_t remaining() const { return bytes_.size() - pos_; }

 private:
  // The byte size of a blob, checked against what is left of the file before it is allocated.
  size_t need(int64_t count, size_t element, const std::string& layer, const char* what) const {
    const auto bytes = byte_size(count, element);
    if (!bytes || *bytes > remaining())
      throw Error(ErrorKind::Model, str(source_, ": file ends inside layer ", layer, " (", what, ": need ", count,
                                        " x ", element, " bytes at offset ", pos_, ", ", remaining(), " left)"));
    return *bytes;
  }
  void read_into(void* dst, size_t n, const std::string& layer, const char* what) {
    if (n > remaining())
      throw Error(ErrorKind::Model, str(source_, ": file ends inside layer ", layer, " (", what, ": need ", n,
                                        " bytes at offset ", pos_, ", ", remaining(), " left)"));
    if (n > 0) std::memcpy(dst, bytes_.data() + pos_, n);
    pos_ += n;
  }
  void skip(size_t n, const std::string& layer) {
    if (n > remaining()) throw Error(ErrorKind::Model, str(source_, ": file ends inside layer ", layer));
    pos_ += n;
  }

  const std::string& bytes_;
  const std::string& source_;
  size_t pos_ = 0;
};

// a * b * c, or nullopt when it overflows int64.
std::optional<int64_t> product(std::initializer_list<int64_t> factors) {
  int64_t out = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(out, f, &out)) return std::nullopt;
  return out;
}

int64_t checked_count(int64_t n, const std::string& source, const NcnnLayer& layer, const char* what) {
  if (n < 0) throw Error(ErrorKind::Model, str(source, ": layer ", layer.name, ": negative ", what));
  return n;
}

void refuse_int8(const NcnnLayer& layer, int param_id, const std::string& source) {
  if (layer.params.get_int(param_id, 0) != 0)
    throw Error(ErrorKind::Model,
                str(source, ": layer ", layer.name, " (", layer.type, "): int8-quantized layers are not supported"));
}

// Convolution family: weight (tagged), then bias (raw) when bias_term.
void load_conv(const NcnnLayer& layer, BinCursor& in, StateDict& out, const std::string& source, bool transposed,
               bool has_group) {
  const auto& p = layer.params;
  if (!transposed) refuse_int8(layer, 8, source);
  int dynamic_id = transposed ? 28 : 19;
  if (p.get_int(dynamic_id, 0) != 0) return;  // weights come from a second input blob
  int64_t num_output = p.get_int(0, 0);
  int64_t kw = p.get_int(1, 0);
  int64_t kh = p.get_int(11, static_cast<int>(kw));
  int64_t size = checked_count(p.get_int(6, 0), source, layer, "weight_data_size");
  int64_t group = has_group ? p.get_int(7, 1) : 1;
  // In checked arithmetic: hostile sizes whose product wraps to 0 would reach `size % 0`.
  const auto per_input = num_output > 0 && kw > 0 && kh > 0 ? product({num_output, kw, kh}) : std::nullopt;
  if (!per_input || group <= 0 || size % *per_input != 0 || num_output % group != 0)
    throw Error(ErrorKind::Model, str(source, ": layer ", layer.name, ": weight_data_size ", size,
                                      " does not fit num_output ", num_output, ", kernel ", kw, "x", kh));
  auto weight = in.tagged(size, layer.name);
  int64_t in_per_group = size / *per_input;  // ncnn stores [group][out/g][in/g][kh][kw]
  if (!transposed) {
    out[layer.name + ".weight"] = weight.view({num_output, in_per_group, kh, kw});
  } else {
    int64_t out_per_group = num_output / group;
    out[layer.name + ".weight"] = weight.view({group, out_per_group, in_per_group, kh, kw})
                                      .transpose(1, 2)
                                      .reshape({group * in_per_group, out_per_group, kh, kw})
                                      .contiguous();
  }
  if (p.get_int(5, 0)) out[layer.name + ".bias"] = in.raw(num_output, layer.name);
}

void load_layer(const NcnnLayer& layer, BinCursor& in, StateDict& out, const std::string& source) {
  const auto& p = layer.params;
  const std::string& t = layer.type;
  const std::string& n = layer.name;
  if (t == "Convolution") return load_conv(layer, in, out, source, false, false);
  if (t == "ConvolutionDepthWise") return load_conv(layer, in, out, source, false, true);
  if (t == "Deconvolution") return load_conv(layer, in, out, source, true, false);
  if (t == "DeconvolutionDepthWise") return load_conv(layer, in, out, source, true, true);
  if (t == "InnerProduct") {
    refuse_int8(layer, 8, source);
    int64_t num_output = p.get_int(0, 0);
    int64_t size = checked_count(p.get_int(2, 0), source, layer, "weight_data_size");
    if (num_output <= 0 || size % num_output != 0)
      throw Error(ErrorKind::Model, str(source, ": layer ", n, ": weight_data_size ", size,
                                        " is not a multiple of num_output ", num_output));
    out[n + ".weight"] = in.tagged(size, n).view({num_output, size / num_output});
    if (p.get_int(1, 0)) out[n + ".bias"] = in.raw(num_output, n);
    return;
  }
  if (t == "PReLU") {
    out[n + ".weight"] = in.raw(checked_count(p.get_int(0, 0), source, layer, "num_slope"), n);
    return;
  }
  if (t == "Scale") {
    int64_t size = p.get_int(0, 0);
    if (size == -233) return;  // scale comes from a second input blob
    out[n + ".weight"] = in.raw(checked_count(size, source, layer, "scale_data_size"), n);
    if (p.get_int(1, 0)) out[n + ".bias"] = in.raw(size, n);
    return;
  }
  if (t == "Bias") {
    out[n + ".bias"] = in.raw(checked_count(p.get_int(0, 0), source, layer, "bias_data_size"), n);
    return;
  }
  if (t == "BatchNorm") {
    int64_t c = checked_count(p.get_int(0, 0), source, layer, "channels");
    for (const char* role : {".weight", ".running_mean", ".running_var", ".bias"}) out[n + role] = in.raw(c, n);
    return;
  }
  if (t == "InstanceNorm" || t == "LayerNorm" || t == "GroupNorm") {
    int size_id = t == "GroupNorm" ? 1 : 0;
    int affine_id = t == "GroupNorm" ? 3 : 2;
    if (!p.get_int(affine_id, 1)) return;
    int64_t c = checked_count(p.get_int(size_id, 0), source, layer, "channels");
    out[n + ".weight"] = in.raw(c, n);
    out[n + ".bias"] = in.raw(c, n);
    return;
  }
  if (t == "Padding") {
    int64_t c = checked_count(p.get_int(6, 0), source, layer, "per_channel_pad_data_size");
    if (c > 0) out[n + ".pad_values"] = in.raw(c, n);
    return;
  }
  if (t == "MemoryData") {
    std::vector<int64_t> shape;
    for (int id : {2, 11, 1, 0}) {  // c, d, h, w
      int64_t v = p.get_int(id, 0);
      if (v > 0) shape.push_back(v);
    }
    int64_t count = 1;
    for (auto v : shape)
      if (__builtin_mul_overflow(count, v, &count))
        throw Error(ErrorKind::Model, str(source, ": layer ", n, ": MemoryData shape is too large"));
    out[n + ".data"] = in.raw(count, n).view(shape);
    return;
  }
  throw Error(ErrorKind::Model, str(source, ": layer ", n, " has unknown type ", t,
                                    " (cannot tell how many weights it stores)"));
}

}  // namespace

bool ncnn_layer_is_weightless(const std::string& type) {
  static const std::set<std::string> kTypes = {
      "Input", "Split", "ReLU", "Clip", "Sigmoid", "TanH", "Swish", "Mish", "HardSigmoid", "HardSwish", "ELU",
      "GELU", "SELU", "Softmax", "PixelShuffle", "Reorg", "Interp", "BinaryOp", "UnaryOp", "Eltwise", "Concat",
      "Crop", "Pooling", "Reshape", "Flatten", "Permute", "Slice", "Noop", "Dropout", "Exp", "Log", "Power",
      "AbsVal", "ShuffleChannel", "Squeeze", "ExpandDims", "Cast", "Threshold", "DeepCopy", "Tile", "Erf"};
  return kTypes.count(type) != 0;
}

namespace {

StateDict read_layers(const NcnnGraph& graph, const std::string& bytes, const std::string& source_name,
                      const NcnnBinOptions& options) {
  StateDict out;
  BinCursor in(bytes, source_name);
  for (const auto& layer : graph.layers) {
    if (ncnn_layer_is_weightless(layer.type) || options.weightless_custom_types.count(layer.type)) continue;
    load_layer(layer, in, out, source_name);
  }
  if (in.remaining() != 0)
    throw Error(ErrorKind::Model, str(source_name, ": ", in.remaining(),
                                      " bytes left after the last layer (weights do not match ", graph.source, ")"));
  return out;
}

}  // namespace

StateDict ncnn_to_state_dict(const NcnnGraph& graph, const std::string& bytes, const std::string& source_name,
                             const NcnnBinOptions& options) {
  // Our checks stop bad input first; this keeps the one-error-type promise (one line, no libtorch
  // backtrace) if libtorch or the allocator objects anyway.
  try {
    return read_layers(graph, bytes, source_name, options);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Model, str(source_name, ": cannot load ncnn weights (", first_line(e.what()), ")"));
  }
}

StateDict ncnn_to_state_dict(const NcnnGraph& graph, const std::filesystem::path& bin_path,
                             const NcnnBinOptions& options) {
  std::ifstream file(bin_path, std::ios::binary);
  if (!file) throw Error(ErrorKind::Model, str(bin_path.string(), ": cannot open ncnn .bin"));
  std::ostringstream buf;
  buf << file.rdbuf();
  return ncnn_to_state_dict(graph, buf.str(), bin_path.string(), options);
}

}  // namespace framelift::weights
