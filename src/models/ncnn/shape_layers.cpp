// Split, Concat, Slice, Crop, Padding, Reshape, Flatten: layers that move data without arithmetic.
#include <ATen/ATen.h>

#include "infer/fp32_islands.h"
#include "models/ncnn/builtin_layers.h"
#include "models/ncnn/ncnn_tensor.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models::ncnn {
namespace {

[[noreturn]] void fail(const std::string& layer, const std::string& problem) {
  throw Error(ErrorKind::Model, str("ncnn layer ", layer, ": ", problem));
}

int64_t axis_or_fail(int axis, const at::Tensor& x, const std::string& layer) {
  int64_t d = tensor_axis(axis, ncnn_dims(x));
  if (d < 0) fail(layer, str("axis ", axis, " out of range for a ", ncnn_dims(x), "-D blob"));
  return d;
}

// Crop's region along one tensor dim: [start, start + length).
struct Range {
  int64_t start = 0, length = -1;  // length -1: to the end
};

class CropLayer : public NcnnOp {
 public:
  explicit CropLayer(const LayerSpec& spec) : name_(spec.layer.name) {
    const auto& p = spec.layer.params;
    offsets_ = {p.get_int(2, 0), p.get_int(13, 0), p.get_int(1, 0), p.get_int(0, 0)};    // c d h w
    sizes_ = {p.get_int(5, 0), p.get_int(14, 0), p.get_int(4, 0), p.get_int(3, 0)};      // c d h w
    tails_ = {p.get_int(8, 0), p.get_int(15, 0), p.get_int(7, 0), p.get_int(6, 0)};      // c d h w
    starts_ = p.get_ints(9);
    ends_ = p.get_ints(10);
    axes_ = p.get_ints(11);
    if (!p.get_string(19).empty() || !p.get_string(20).empty())
      spec.fail("expression-based crops (params 19-21) are not supported");
    if (!starts_.empty() && starts_.size() != ends_.size()) spec.fail("starts and ends differ in length");
    if (!axes_.empty() && axes_.size() != starts_.size()) spec.fail("axes and starts differ in length");
  }

  Blobs forward(Blobs in) override {
    const at::Tensor& x = in.at(0);
    int dims = ncnn_dims(x);
    std::vector<Range> ranges(dims);  // per ncnn axis
    if (!starts_.empty()) {
      for (size_t i = 0; i < starts_.size(); ++i) {
        int axis = axes_.empty() ? static_cast<int>(i) : axes_[i];
        int64_t d = axis_or_fail(axis, x, name_) - 1;
        int64_t size = x.size(d + 1);
        int64_t start = starts_[i] == -233 ? 0 : starts_[i];
        int64_t end = ends_[i] == -233 ? size : ends_[i];
        start = start >= 0 ? start : size + start;
        end = std::min(size, end > 0 ? end : size + end);
        ranges[d] = {start, end - start};
      }
    } else if (in.size() > 1) {  // crop to the reference blob's size at the given offsets
      const at::Tensor& ref = in[1];
      int rdims = ncnn_dims(ref);
      for (int d = 0; d < dims; ++d) {
        int64_t off = axis_param(offsets_, d, dims);
        bool keep_channels = d == 0 && dims >= 3 && rdims != dims;
        ranges[d] = {off, keep_channels ? x.size(1) - off : ref.size(ref.dim() - dims + d)};
      }
    } else {
      for (int d = 0; d < dims; ++d) {
        int64_t size = x.size(d + 1);
        int64_t off = axis_param(offsets_, d, dims);
        int64_t len = size - off - axis_param(tails_, d, dims);
        int64_t want = axis_param(sizes_, d, dims);
        if (want != -233 && want != 0) len = std::min(want, len);
        ranges[d] = {off, len};
      }
    }
    at::Tensor y = x;
    for (int d = 0; d < dims; ++d) {
      if (ranges[d].length < 0 && ranges[d].start == 0) continue;
      int64_t size = x.size(d + 1);
      int64_t len = ranges[d].length < 0 ? size - ranges[d].start : ranges[d].length;
      if (ranges[d].start < 0 || len <= 0 || ranges[d].start + len > size)
        fail(name_, str("crop [", ranges[d].start, ", +", len, ") outside axis ", d, " of size ", size));
      y = y.narrow(d + 1, ranges[d].start, len);
    }
    return {y};
  }

 private:
  // Picks the c/d/h/w parameter for ncnn axis d of a blob with `dims` axes.
  static int64_t axis_param(const std::array<int, 4>& cdhw, int d, int dims) {
    static const int kMap[5][4] = {{}, {3}, {2, 3}, {0, 2, 3}, {0, 1, 2, 3}};
    return cdhw[kMap[dims][d]];
  }

  std::string name_;
  std::array<int, 4> offsets_{}, sizes_{}, tails_{};
  std::vector<int> starts_, ends_, axes_;
};

class PaddingLayer : public NcnnOp {
 public:
  explicit PaddingLayer(const LayerSpec& spec) : name_(spec.layer.name) {
    const auto& p = spec.layer.params;
    top_ = p.get_int(0, 0), bottom_ = p.get_int(1, 0), left_ = p.get_int(2, 0), right_ = p.get_int(3, 0);
    type_ = p.get_int(4, 0);
    value_ = p.get_float(5, 0.f);
    front_ = p.get_int(7, 0), behind_ = p.get_int(8, 0);
    per_channel_ = spec.optional_weight("pad_values");
    if (type_ < 0 || type_ > 2) spec.fail(str("unsupported padding type ", type_));
    if (type_ != 0 && (front_ || behind_)) spec.fail("channel padding is only supported with constant type");
  }

  Blobs forward(Blobs in) override {
    const at::Tensor& x = in.at(0);
    if (x.dim() < 3) fail(name_, "padding needs a blob with h and w");
    if (type_ == 1) return {infer::replicate_pad2d(x, {left_, right_, top_, bottom_})};
    if (type_ == 2) return {infer::reflect_pad2d(x, {left_, right_, top_, bottom_})};
    if (!per_channel_.defined()) {
      std::vector<int64_t> pad = {left_, right_, top_, bottom_};
      if (front_ || behind_) pad.insert(pad.end(), {front_, behind_});
      return {at::constant_pad_nd(x, pad, value_)};
    }
    // Per-channel values: fill the output with each channel's value, then place the input inside.
    int64_t c = x.size(1) + front_ + behind_;
    if (per_channel_.numel() != c) fail(name_, str("has ", per_channel_.numel(), " pad values for ", c, " channels"));
    std::vector<int64_t> shape = {x.size(0), c, x.size(2) + top_ + bottom_, x.size(3) + left_ + right_};
    at::Tensor y = per_channel_.to(x.options()).view({1, c, 1, 1}).expand(shape).contiguous();
    y.narrow(1, front_, x.size(1)).narrow(2, top_, x.size(2)).narrow(3, left_, x.size(3)).copy_(x);
    return {y};
  }

  void to(c10::Device device, c10::ScalarType dtype) override {
    if (per_channel_.defined()) per_channel_ = per_channel_.to(device, dtype);
  }

 private:
  std::string name_;
  int64_t top_, bottom_, left_, right_, front_, behind_;
  int type_;
  float value_;
  at::Tensor per_channel_;
};

std::unique_ptr<NcnnOp> make_slice(const LayerSpec& spec) {
  std::vector<int> slices = spec.layer.params.get_ints(0);
  int axis = spec.layer.params.get_int(1, 0);
  if (!spec.layer.params.get_ints(2).empty()) spec.fail("Slice with indices (param 2) is not supported");
  if (slices.size() != spec.layer.outputs.size()) spec.fail("slice count differs from outputs");
  std::string name = spec.layer.name;
  return std::make_unique<LambdaOp>([slices, axis, name](Blobs in) -> Blobs {
    const at::Tensor& x = in.at(0);
    int64_t d = axis_or_fail(axis, x, name);
    int64_t size = x.size(d), pos = 0;
    Blobs out;
    for (size_t i = 0; i < slices.size(); ++i) {
      int64_t n = slices[i];
      if (n == -233) n = (size - pos) / static_cast<int64_t>(slices.size() - i);  // ncnn: split the rest evenly
      if (pos + n > size) fail(name, "slices exceed the blob");
      out.push_back(x.narrow(d, pos, n));
      pos += n;
    }
    return out;
  });
}

std::unique_ptr<NcnnOp> make_reshape(const LayerSpec& spec) {
  const auto& p = spec.layer.params;
  if (!p.get_string(6).empty()) spec.fail("expression-based reshape is not supported");
  int w = p.get_int(0, -233), h = p.get_int(1, -233), d = p.get_int(11, -233), c = p.get_int(2, -233);
  std::vector<int> want;  // outer to inner, as the output's ncnn shape
  for (int v : {c, d, h, w}) if (v != -233) want.push_back(v);
  if (p.get_int(3, 0)) spec.fail("permuted reshape (param 3) is not supported");
  std::string name = spec.layer.name;
  return std::make_unique<LambdaOp>([want, name](Blobs in) -> Blobs {
    const at::Tensor& x = in.at(0);
    std::vector<int64_t> shape = {x.size(0)};
    // 0 keeps the input's size on that axis (aligned from the inner end, as ncnn's w/h/c are).
    int dims = ncnn_dims(x);
    for (size_t i = 0; i < want.size(); ++i) {
      int64_t v = want[i];
      if (v == 0) {
        int64_t src = dims - static_cast<int64_t>(want.size()) + static_cast<int64_t>(i);
        if (src < 0) fail(name, "reshape keeps an axis the input lacks");
        v = x.size(src + 1);
      }
      shape.push_back(v);
    }
    return {x.contiguous().view(shape)};
  });
}

}  // namespace

void add_shape_layers(FactoryTable& t) {
  t["Split"] = [](const LayerSpec& s) -> std::unique_ptr<NcnnOp> {
    size_t n = s.layer.outputs.size();
    return std::make_unique<LambdaOp>([n](Blobs in) { return Blobs(n, in.at(0)); });
  };
  t["Concat"] = [](const LayerSpec& s) -> std::unique_ptr<NcnnOp> {
    int axis = s.layer.params.get_int(0, 0);
    std::string name = s.layer.name;
    return std::make_unique<LambdaOp>([axis, name](Blobs in) -> Blobs {
      return {at::cat(in, axis_or_fail(axis, in.at(0), name))};
    });
  };
  t["Crop"] = [](const LayerSpec& s) { return std::make_unique<CropLayer>(s); };
  t["Padding"] = [](const LayerSpec& s) { return std::make_unique<PaddingLayer>(s); };
  t["Slice"] = make_slice;
  t["Reshape"] = make_reshape;
  t["Flatten"] = [](const LayerSpec&) -> std::unique_ptr<NcnnOp> {
    return std::make_unique<LambdaOp>([](Blobs in) -> Blobs { return {in.at(0).flatten(1)}; });
  };
}

}  // namespace framelift::models::ncnn
