// SPAN (Swift Parameter-free Attention Network, Wan et al. 2024; NTIRE 2024 efficient SR winner):
// a 3x3 "Conv3XC" stem, six SPAB blocks, a 3x3 Conv3XC, a 1x1 fusion of four feature maps and a
// pixel-shuffle upsampler. A SPAB is three Conv3XC with SiLU between them and a parameter-free
// attention: out = (c3 + x) * (sigmoid(c3) - 0.5).
//
// Conv3XC is trained as three branches (1x1 -> 3x3 -> 1x1, plus a 1x1 skip) and run as one 3x3
// convolution whose weights are those branches composed. Upstream recomputes that composition from
// the branch weights on every eval forward and ignores the stored eval_conv, so this file does the
// same once at load: a checkpoint whose eval_conv is stale still runs as upstream runs it.
//
// State dict: conv_1, block_{1..6}.c{1,2,3}_r, conv_2 (each Conv3XC: sk, conv.0, conv.1, conv.2,
// eval_conv), conv_cat (1x1, 4 * feat -> feat), upsampler.0 (3x3, feat -> out * scale^2), and a
// "no_norm" buffer when the input is not normalised ((x - mean) * 255 otherwise). Upstream:
// hongyuanyu/SPAN; the layout read here is chaiNNer-org/spandrel's SPAN arch.
//
// A deployed SPAN holds each Conv3XC's eval_conv alone: what an ONNX export keeps, since an eval
// forward reads no branch (models/onnx/onnx_native.h). Then eval_conv is the convolution.
#include <ATen/ATen.h>

#include "arch/declaration.h"
#include "models/builtin_architectures.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr int kBlocks = 6;
constexpr int kGain = 2;  // Conv3XC's hidden width, in multiples of its input and output

// The three branches of a Conv3XC composed into one 3x3 convolution (in float32, as read), or a
// deployed one's eval_conv.
Conv2d read_conv3xc(WeightReader& r, const std::string& p, int64_t in, int64_t out, bool deployed) {
  if (deployed) return read_conv(r, p + ".eval_conv", in, out, 3);
  const Conv2d skip = read_conv(r, p + ".sk", in, out, 1, 1, 0);
  const Conv2d a = read_conv(r, p + ".conv.0", in, in * kGain, 1, 1, 0);
  const Conv2d b = read_conv(r, p + ".conv.1", in * kGain, out * kGain, 3, 1, 0);
  const Conv2d c = read_conv(r, p + ".conv.2", out * kGain, out, 1, 1, 0);
  read_conv(r, p + ".eval_conv", in, out, 3);  // recomputed below, as upstream's eval does
  const at::Tensor wa = a.weight.flatten(1), wc = c.weight.flatten(1);  // [hidden, in], [out, hidden]
  at::Tensor w = at::einsum("omhw,mi->oihw", {b.weight, wa});           // 1x1 then 3x3
  at::Tensor bias = b.weight.sum({2, 3}).matmul(a.bias) + b.bias;
  w = at::einsum("op,pihw->oihw", {wc, w});  // then 1x1
  bias = wc.matmul(bias) + c.bias;
  w.select(2, 1).select(2, 1).add_(skip.weight.flatten(1));  // the skip is the kernel's centre tap
  bias = bias + skip.bias;
  return Conv2d{w.contiguous(), bias.contiguous(), 1, 1};
}

struct Spab {
  Conv2d c1, c2, c3;
};

class Span : public NativeModel {
 public:
  Span(const weights::StateDict& dict, const DetectedArch& d, const std::string& source)
      : NativeModel(declared_info(d), source), scale_(d.scale), normalise_(d.params.get("norm", 1) != 0) {
    WeightReader r(dict, source);
    const int64_t feat = int64_t(d.params.get("feature_channels", 48));
    const bool deployed = d.params.get("deployed", 0) != 0;
    stem_ = read_conv3xc(r, "conv_1", d.in_channels, feat, deployed);
    for (int i = 1; i <= kBlocks; ++i) {
      const std::string p = str("block_", i);
      blocks_.push_back({read_conv3xc(r, p + ".c1_r", feat, feat, deployed), read_conv3xc(r, p + ".c2_r", feat, feat, deployed),
                         read_conv3xc(r, p + ".c3_r", feat, feat, deployed)});
    }
    tail_ = read_conv3xc(r, "conv_2", feat, feat, deployed);
    fuse_ = read_conv(r, "conv_cat", 4 * feat, feat, 1, 1, 0);
    upsample_ = read_conv(r, "upsampler.0", feat, int64_t(d.out_channels) * d.scale * d.scale, 3);
    if (!normalise_) r.tensor("no_norm", {1});
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    at::Tensor x = input;
    if (normalise_) {
      // RGB mean of DIV2K, times 255: upstream's img_range. The output is not scaled back.
      const at::Tensor mean = div2k_mean(input, 3);
      x = (x - mean) * 255.0;
    }
    const at::Tensor feature = stem_(x);
    at::Tensor y = feature, first, last_c1;
    for (size_t i = 0; i < blocks_.size(); ++i) {
      const Spab& b = blocks_[i];
      const at::Tensor a1 = at::silu(b.c1(y));
      const at::Tensor c3 = b.c3(at::silu(b.c2(a1)));
      y = (c3 + y) * (at::sigmoid(c3) - 0.5);
      if (i == 0) first = y;
      // Upstream fuses the last block's "out1" after its in-place SiLU: the activated c1.
      if (i + 1 == blocks_.size()) last_c1 = a1;
    }
    const at::Tensor fused = fuse_(at::cat({feature, tail_(y), first, last_c1}, 1));
    return at::pixel_shuffle(upsample_(fused), scale_);
  }

  void visit_weights(const TensorVisitor& f) override {
    visit(stem_, f);
    for (auto& b : blocks_) {
      visit(b.c1, f);
      visit(b.c2, f);
      visit(b.c3, f);
    }
    visit(tail_, f);
    visit(fuse_, f);
    visit(upsample_, f);
  }

 private:
  int64_t scale_;
  bool normalise_;
  Conv2d stem_, tail_, fuse_, upsample_;
  std::vector<Spab> blocks_;
};

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  for (const char* key : {"conv_1.eval_conv.weight", "block_1.c1_r.eval_conv.weight", "conv_2.eval_conv.weight", "conv_cat.weight",
                          "upsampler.0.weight"})
    if (!dict.count(key)) return std::nullopt;
  // Branches on the stem mean a trained checkpoint; none anywhere, a deployed one.
  const bool deployed = !dict.count("conv_1.sk.weight");
  if (deployed == (dict.count("block_1.c1_r.sk.weight") || dict.count("conv_2.sk.weight"))) return std::nullopt;
  const std::string stem = deployed ? "conv_1.eval_conv.weight" : "conv_1.sk.weight";
  const auto feat = dim_of(dict, stem, 4, 0), in = dim_of(dict, stem, 4, 1);
  const auto up = dim_of(dict, "upsampler.0.weight", 4, 0);
  if (!feat || !in || !up) throw Error(ErrorKind::Model, str(source, ": SPAN layout: ", stem, " or upsampler.0 is not a convolution"));
  const bool norm = !dict.count("no_norm");
  if (norm && *in != 3)
    throw Error(ErrorKind::Model, str(source, ": SPAN with ", *in, " input channels normalises by an RGB mean; only 3 fit it"));
  // Output channels as many as the input's when that gives a square scale (spandrel's rule).
  std::optional<int> scale = shuffle_factor(*up, *in);
  int64_t out = *in;
  if (!scale && (scale = shuffle_factor(*up, 3))) out = 3;
  if (!scale)
    throw Error(ErrorKind::Model, str(source, ": SPAN layout: upsampler.0 has ", *up, " outputs, not channels times a square scale"));
  // Checked before they narrow to int: 2^32 + 3 channels would otherwise pass as 3.
  arch::check_shapes("span", {{"in_channels", double(*in)}}, source);
  DetectedArch d;
  d.arch = "span";
  d.scale = *scale;
  d.in_channels = int(*in);
  d.out_channels = int(out);
  d.params = {{"feature_channels", double(*feat)}, {"norm", norm ? 1.0 : 0.0}};
  if (deployed) d.params["deployed"] = 1;
  return d;
}

}  // namespace

Architecture span_architecture() {
  return {"span", detect,
          [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return std::make_unique<Span>(dict, d, source);
          }};
}

}  // namespace framelift::models
