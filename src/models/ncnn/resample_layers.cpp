// Interp, Pooling, PixelShuffle: layers that change the spatial size.
#include <cfloat>

#include <ATen/ATen.h>

#include "models/ncnn/builtin_layers.h"
#include "models/ncnn/ncnn_tensor.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models::ncnn {
namespace {

[[noreturn]] void fail(const std::string& layer, const std::string& problem) {
  throw Error(ErrorKind::Model, str("ncnn layer ", layer, ": ", problem));
}

class InterpLayer : public NcnnOp {
 public:
  explicit InterpLayer(const LayerSpec& spec) : name_(spec.layer.name) {
    const auto& p = spec.layer.params;
    type_ = p.get_int(0, 0);
    h_scale_ = p.get_float(1, 1.f);
    w_scale_ = p.get_float(2, 1.f);
    out_h_ = p.get_int(3, 0);
    out_w_ = p.get_int(4, 0);
    dynamic_ = p.get_int(5, 0) != 0;
    align_corners_ = p.get_int(6, 0) != 0;
    if (type_ < 1 || type_ > 3) spec.fail(str("unsupported resize_type ", type_));
    if (!p.get_string(9).empty()) spec.fail("expression-based sizes (param 9) are not supported");
    if (dynamic_ && spec.layer.inputs.size() != 2) spec.fail("dynamic_target_size needs a reference blob");
  }

  Blobs forward(Blobs in) override {
    const at::Tensor& x = in.at(0);
    if (x.dim() != 4) fail(name_, "Interp is supported on 3-D (c,h,w) blobs only");
    int64_t h = x.size(2), w = x.size(3);
    int64_t oh = out_h_, ow = out_w_;
    bool sized = dynamic_ || (oh != 0 && ow != 0);
    if (dynamic_) {
      oh = in.at(1).size(in[1].dim() - 2);
      ow = in.at(1).size(in[1].dim() - 1);
    } else if (!sized) {
      oh = static_cast<int64_t>(h * h_scale_);  // ncnn truncates
      ow = static_cast<int64_t>(w * w_scale_);
    }
    if (oh == h && ow == w) return {x};
    if (type_ == 1) {
      // ncnn samples at floor(dst * in/out) when sized, floor(dst / scale) otherwise.
      c10::optional<double> sh, sw;
      if (!sized) sh = h_scale_, sw = w_scale_;
      return {at::upsample_nearest2d(x, {oh, ow}, sh, sw)};
    }
    // Bilinear and bicubic always use in/out in ncnn, which ATen does when given no scales. ncnn's
    // bicubic (A = -0.75) folds the taps outside the image onto the border, as ATen's clamping does.
    if (type_ == 2) return {at::upsample_bilinear2d(x, {oh, ow}, align_corners_, c10::nullopt, c10::nullopt)};
    return {at::upsample_bicubic2d(x, {oh, ow}, align_corners_, c10::nullopt, c10::nullopt)};
  }

 private:
  std::string name_;
  int type_;
  float h_scale_, w_scale_;
  int64_t out_h_, out_w_;
  bool dynamic_, align_corners_;
};

class PoolingLayer : public NcnnOp {
 public:
  explicit PoolingLayer(const LayerSpec& spec) : name_(spec.layer.name) {
    const auto& p = spec.layer.params;
    type_ = p.get_int(0, 0);
    kw_ = p.get_int(1, 0), kh_ = p.get_int(11, kw_);
    sw_ = p.get_int(2, 1), sh_ = p.get_int(12, sw_);
    pl_ = p.get_int(3, 0), pr_ = p.get_int(14, pl_), pt_ = p.get_int(13, pl_), pb_ = p.get_int(15, pt_);
    global_ = p.get_int(4, 0) != 0;
    pad_mode_ = p.get_int(5, 0);
    include_pad_ = p.get_int(6, 0) != 0;
    adaptive_ = p.get_int(7, 0) != 0;
    out_w_ = p.get_int(8, 0), out_h_ = p.get_int(18, out_w_);
    if (type_ != 0 && type_ != 1) spec.fail(str("unsupported pooling_type ", type_));
    if (!global_ && !adaptive_ && (kw_ <= 0 || kh_ <= 0 || sw_ <= 0 || sh_ <= 0)) spec.fail("bad pooling geometry");
  }

  Blobs forward(Blobs in) override {
    const at::Tensor& x = in.at(0);
    if (x.dim() != 4) fail(name_, "Pooling is supported on 3-D (c,h,w) blobs only");
    bool max = type_ == 0;
    if (global_) return {max ? x.amax({2, 3}) : x.mean({2, 3})};  // ncnn: a 1-D blob of c values
    if (adaptive_) {
      int64_t oh = out_h_ == -233 ? x.size(2) : out_h_, ow = out_w_ == -233 ? x.size(3) : out_w_;
      return {max ? std::get<0>(at::adaptive_max_pool2d(x, {oh, ow})) : at::adaptive_avg_pool2d(x, {oh, ow})};
    }
    int64_t h = x.size(2), w = x.size(3);
    int64_t t = pt_, b = pb_, l = pl_, r = pr_, tail_h = 0, tail_w = 0;
    if (pad_mode_ == 0) {  // "full": Caffe's ceil mode, extra padding at the bottom/right
      int64_t wt = (w + l + r - kw_) % sw_, ht = (h + t + b - kh_) % sh_;
      tail_w = wt ? sw_ - wt : 0;
      tail_h = ht ? sh_ - ht : 0;
    } else if (pad_mode_ == 2 || pad_mode_ == 3) {
      int64_t wpad = std::max<int64_t>(0, kw_ + (w - 1) / sw_ * sw_ - w);
      int64_t hpad = std::max<int64_t>(0, kh_ + (h - 1) / sh_ * sh_ - h);
      bool upper = pad_mode_ == 2;
      l = upper ? wpad / 2 : wpad - wpad / 2, r = wpad - l;
      t = upper ? hpad / 2 : hpad - hpad / 2, b = hpad - t;
    }
    std::vector<int64_t> pad = {l, r + tail_w, t, b + tail_h};
    if (max) return {at::max_pool2d(at::constant_pad_nd(x, pad, -FLT_MAX), {kh_, kw_}, {sh_, sw_})};
    at::Tensor sum = at::avg_pool2d(at::constant_pad_nd(x, pad, 0.0), {kh_, kw_}, {sh_, sw_});
    // The divisor counts real pixels, plus the declared padding (never the tail) when include_pad.
    at::Tensor ones = at::ones({1, 1, h, w}, x.options());
    at::Tensor mask = include_pad_ ? at::constant_pad_nd(at::constant_pad_nd(ones, {l, r, t, b}, 1.0),
                                                         {0, tail_w, 0, tail_h}, 0.0)
                                   : at::constant_pad_nd(ones, pad, 0.0);
    return {sum / at::avg_pool2d(mask, {kh_, kw_}, {sh_, sw_})};
  }

 private:
  std::string name_;
  int type_;
  int kw_, kh_, sw_, sh_, pl_, pr_, pt_, pb_, pad_mode_, out_w_, out_h_;
  bool global_, include_pad_, adaptive_;
};

std::unique_ptr<NcnnOp> make_pixel_shuffle(const LayerSpec& spec) {
  int64_t r = spec.layer.params.get_int(0, 1);
  int mode = spec.layer.params.get_int(1, 0);
  if (r < 1) spec.fail("upscale_factor must be positive");
  std::string name = spec.layer.name;
  return std::make_unique<LambdaOp>([r, mode, name](Blobs in) -> Blobs {
    const at::Tensor& x = in.at(0);
    if (x.dim() != 4 || x.size(1) % (r * r) != 0) fail(name, framelift::str("cannot pixel-shuffle a blob of shape ", x.sizes()));
    if (mode == 0) return {at::pixel_shuffle(x, r)};  // channel = c * r * r + dy * r + dx (PyTorch)
    // mode 1, ONNX DepthToSpace "DCR": channel = (dy * r + dx) * C + c
    int64_t n = x.size(0), c = x.size(1) / (r * r), h = x.size(2), w = x.size(3);
    return {x.view({n, r, r, c, h, w}).permute({0, 3, 4, 1, 5, 2}).reshape({n, c, h * r, w * r})};
  });
}

}  // namespace

void add_resample_layers(FactoryTable& t) {
  t["Interp"] = [](const LayerSpec& s) { return std::make_unique<InterpLayer>(s); };
  t["Pooling"] = [](const LayerSpec& s) { return std::make_unique<PoolingLayer>(s); };
  t["PixelShuffle"] = make_pixel_shuffle;
}

}  // namespace framelift::models::ncnn
