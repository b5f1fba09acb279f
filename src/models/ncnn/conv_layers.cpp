// Convolution, ConvolutionDepthWise, Deconvolution, DeconvolutionDepthWise, InnerProduct.
#include <ATen/ATen.h>

#include "infer/fp32_islands.h"
#include "models/ncnn/builtin_layers.h"
#include "models/ncnn/fused_activation.h"
#include "models/ncnn/ncnn_tensor.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models::ncnn {
namespace {

struct Pads {
  int64_t left = 0, right = 0, top = 0, bottom = 0;
  bool symmetric() const { return left == right && top == bottom; }
  bool any() const { return left || right || top || bottom; }
};

// Kernel geometry shared by the convolution family (same parameter ids in ncnn).
struct ConvParams {
  int64_t kw, kh, dw, dh, sw, sh;
  int pad_left, pad_right, pad_top, pad_bottom;

  explicit ConvParams(const weights::NcnnParams& p) {
    kw = p.get_int(1, 0);
    kh = p.get_int(11, static_cast<int>(kw));
    dw = p.get_int(2, 1);
    dh = p.get_int(12, static_cast<int>(dw));
    sw = p.get_int(3, 1);
    sh = p.get_int(13, static_cast<int>(sw));
    pad_left = p.get_int(4, 0);
    pad_right = p.get_int(15, pad_left);
    pad_top = p.get_int(14, pad_left);
    pad_bottom = p.get_int(16, pad_top);
  }

  // ncnn's make_padding: explicit pads, or -233 (SAME_UPPER) / -234 (SAME_LOWER) from the input size.
  Pads input_pads(int64_t h, int64_t w) const {
    Pads p;
    if (pad_left > 0 || pad_right > 0 || pad_top > 0 || pad_bottom > 0) {
      p = {std::max(pad_left, 0), std::max(pad_right, 0), std::max(pad_top, 0), std::max(pad_bottom, 0)};
    } else if (pad_left == -233 || pad_left == -234) {
      int64_t wpad = std::max<int64_t>(0, dw * (kw - 1) + 1 + (w - 1) / sw * sw - w);
      int64_t hpad = std::max<int64_t>(0, dh * (kh - 1) + 1 + (h - 1) / sh * sh - h);
      bool upper = pad_left == -233;
      p.left = upper ? wpad / 2 : wpad - wpad / 2;
      p.right = wpad - p.left;
      p.top = upper ? hpad / 2 : hpad - hpad / 2;
      p.bottom = hpad - p.top;
    }
    return p;
  }
};


class ConvOp : public NcnnOp {
 public:
  ConvOp(const LayerSpec& spec, bool depthwise)
      : geo_(spec.layer.params), act_(FusedActivation::from(spec)), name_(spec.layer.name) {
    const auto& p = spec.layer.params;
    if (p.get_int(19, 0)) spec.fail("dynamic weights (second input blob) are not supported");
    groups_ = depthwise ? p.get_int(7, 1) : 1;
    pad_value_ = p.get_float(18, 0.f);
    weight_ = spec.weight("weight");
    bias_ = spec.optional_weight("bias");
    if (geo_.kw <= 0 || geo_.sw <= 0 || geo_.sh <= 0 || geo_.dw <= 0 || geo_.dh <= 0) spec.fail("bad kernel geometry");
  }

  Blobs forward(Blobs in) override {
    at::Tensor x = std::move(in.at(0));
    if (x.dim() != 4) throw_rank(x);
    Pads pads = geo_.input_pads(x.size(2), x.size(3));
    std::vector<int64_t> conv_pad = {0, 0};
    if (pads.any()) {
      if (pads.symmetric() && pad_value_ == 0.f) {
        conv_pad = {pads.top, pads.left};
      } else {
        x = at::constant_pad_nd(x, {pads.left, pads.right, pads.top, pads.bottom}, pad_value_);
      }
    }
    at::Tensor y = at::convolution(x, weight_, bias_, {geo_.sh, geo_.sw}, conv_pad, {geo_.dh, geo_.dw}, false, {0, 0},
                                   groups_);
    act_.apply_(y);
    return {y};
  }

  void to(c10::Device device, c10::ScalarType dtype) override {
    weight_ = weight_.to(device, dtype);
    if (bias_.defined()) bias_ = bias_.to(device, dtype);
  }

 private:
  [[noreturn]] void throw_rank(const at::Tensor& x) const {
    throw Error(ErrorKind::Model, str("ncnn layer ", name_, ": convolution needs a 3-D (c,h,w) blob, got ",
                                      ncnn_dims(x), "-D"));
  }

  ConvParams geo_;
  FusedActivation act_;
  std::string name_;
  int64_t groups_ = 1;
  float pad_value_ = 0.f;
  at::Tensor weight_, bias_;
};

class DeconvOp : public NcnnOp {
 public:
  DeconvOp(const LayerSpec& spec, bool depthwise)
      : geo_(spec.layer.params), act_(FusedActivation::from(spec)), name_(spec.layer.name) {
    const auto& p = spec.layer.params;
    if (p.get_int(28, 0)) spec.fail("dynamic weights (second input blob) are not supported");
    groups_ = depthwise ? p.get_int(7, 1) : 1;
    out_pad_right_ = p.get_int(18, 0);
    out_pad_bottom_ = p.get_int(19, static_cast<int>(out_pad_right_));
    output_w_ = p.get_int(20, 0);
    output_h_ = p.get_int(21, static_cast<int>(output_w_));
    weight_ = spec.weight("weight");
    bias_ = spec.optional_weight("bias");
  }

  Blobs forward(Blobs in) override {
    at::Tensor x = std::move(in.at(0));
    if (x.dim() != 4)
      throw Error(ErrorKind::Model, str("ncnn layer ", name_, ": deconvolution needs a 3-D blob"));
    bool positive = geo_.pad_left > 0 || geo_.pad_right > 0 || geo_.pad_top > 0 || geo_.pad_bottom > 0;
    bool plain_sym = positive && geo_.pad_left == geo_.pad_right && geo_.pad_top == geo_.pad_bottom &&
                     out_pad_right_ == 0 && out_pad_bottom_ == 0;
    if (plain_sym) {  // the common case maps onto one ATen call
      at::Tensor y = infer::conv_transpose2d(x, weight_, bias_, {geo_.sh, geo_.sw}, {geo_.pad_top, geo_.pad_left}, {0, 0},
                                             groups_, {geo_.dh, geo_.dw});
      act_.apply_(y);
      return {y};
    }
    // ncnn computes the full "bordered" output, fills output padding with the bias, then cuts.
    at::Tensor y = infer::conv_transpose2d(x, weight_, {}, {geo_.sh, geo_.sw}, {0, 0}, {0, 0}, groups_, {geo_.dh, geo_.dw});
    if (out_pad_right_ || out_pad_bottom_) y = at::constant_pad_nd(y, {0, out_pad_right_, 0, out_pad_bottom_}, 0.0);
    if (bias_.defined()) y.add_(bias_.view({1, -1, 1, 1}));
    int64_t H = y.size(2), W = y.size(3);
    int64_t top = 0, bottom = 0, left = 0, right = 0;
    if (positive) {
      top = std::max(geo_.pad_top, 0), bottom = std::max(geo_.pad_bottom, 0);
      left = std::max(geo_.pad_left, 0), right = std::max(geo_.pad_right, 0);
    } else if (output_w_ > 0 && output_h_ > 0 && (geo_.pad_left == -233 || geo_.pad_left == -234)) {
      int64_t wcut = W - output_w_, hcut = H - output_h_;
      bool upper = geo_.pad_left == -233;
      top = upper ? hcut / 2 : hcut - hcut / 2;
      bottom = hcut - top;
      left = upper ? wcut / 2 : wcut - wcut / 2;
      right = wcut - left;
    }
    if (top || bottom || left || right) y = y.slice(2, top, H - bottom).slice(3, left, W - right).contiguous();
    act_.apply_(y);
    return {y};
  }

  void to(c10::Device device, c10::ScalarType dtype) override {
    weight_ = weight_.to(device, dtype);
    if (bias_.defined()) bias_ = bias_.to(device, dtype);
  }

 private:
  ConvParams geo_;
  FusedActivation act_;
  std::string name_;
  int64_t groups_ = 1;
  int64_t out_pad_right_ = 0, out_pad_bottom_ = 0, output_w_ = 0, output_h_ = 0;
  at::Tensor weight_, bias_;
};

class InnerProductOp : public NcnnOp {
 public:
  explicit InnerProductOp(const LayerSpec& spec) : act_(FusedActivation::from(spec)) {
    weight_ = spec.weight("weight");
    bias_ = spec.optional_weight("bias");
  }

  Blobs forward(Blobs in) override {
    at::Tensor x = std::move(in.at(0));
    // A 2-D blob whose rows match num_input is a batch of rows (ncnn's gemm path); anything
    // else is flattened into one vector.
    bool rows = x.dim() == 3 && x.size(2) == weight_.size(1);
    if (!rows) x = x.flatten(1);
    at::Tensor y = at::linear(x, weight_, bias_);
    act_.apply_(y);
    return {y};
  }

  void to(c10::Device device, c10::ScalarType dtype) override {
    weight_ = weight_.to(device, dtype);
    if (bias_.defined()) bias_ = bias_.to(device, dtype);
  }

 private:
  FusedActivation act_;
  at::Tensor weight_, bias_;
};

}  // namespace

void add_conv_layers(FactoryTable& t) {
  t["Convolution"] = [](const LayerSpec& s) { return std::make_unique<ConvOp>(s, false); };
  t["ConvolutionDepthWise"] = [](const LayerSpec& s) { return std::make_unique<ConvOp>(s, true); };
  t["Deconvolution"] = [](const LayerSpec& s) { return std::make_unique<DeconvOp>(s, false); };
  t["DeconvolutionDepthWise"] = [](const LayerSpec& s) { return std::make_unique<DeconvOp>(s, true); };
  t["InnerProduct"] = [](const LayerSpec& s) { return std::make_unique<InnerProductOp>(s); };
}

}  // namespace framelift::models::ncnn
