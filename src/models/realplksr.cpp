// RealPLKSR (neosr's PLKSR for real-world degradations): PLKSR's layout (plksr.cpp) with a DCCM
// channel mixer using Mish, and a normalisation per block: by default a GroupNorm (4 groups) of
// the block's output, whose mean and variance are taken over the whole frame, or with
// layer_norm a per-pixel LayerNorm of the block's input over its channels. The upsampler is a
// pixel shuffle or DySample (dysample.h). With the GroupNorm a tile would be normalised by its
// own statistics, not the frame's, so those models run whole frames only (their declaration
// in src/arch/realplksr.cpp says tiled = false, which ModelInfo and the tiler follow).
//
// State dict: feats.0 (stem), feats.{1..n}.{layer_norm, channel_mixer.{0,2}, lk.conv, attn.f.0,
// refine, norm}, feats.{n+1} a Dropout (no weights), feats.{n+2} (tail), to_img (DySample).
// Upstream: neosr-project/neosr; the layout read here is chaiNNer-org/spandrel's PLKSR arch.
#include <ATen/ATen.h>

#include "infer/fp32_islands.h"
#include "models/builtin_architectures.h"
#include "models/dysample.h"
#include "models/plksr_layers.h"
#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr int64_t kNormGroups = 4;  // upstream's default; a checkpoint's shapes cannot tell
constexpr double kGroupNormEps = 1e-5, kLayerNormEps = 1e-6;

// Affine weights of a normalisation; undefined when the block has none of that kind.
struct Affine {
  at::Tensor weight, bias;
};

struct Block {
  Affine layer_norm, group_norm;
  Conv2d mix_in, mix_out, refine;
  PartialConv lk;
  ElementAttention attn;
};

// Over the channels of each pixel, as upstream's LayerNorm (not at::layer_norm: channels-first).
at::Tensor channel_layer_norm(const at::Tensor& x, const Affine& a) {
  const at::Tensor centred = x - x.mean(1, true);
  const at::Tensor normed = centred * at::rsqrt(centred.pow(2).mean(1, true) + kLayerNormEps);
  return normed * a.weight.view({1, -1, 1, 1}) + a.bias.view({1, -1, 1, 1});
}

at::Tensor run_block(const Block& b, const at::Tensor& x) {
  at::Tensor y = b.layer_norm.weight.defined() ? channel_layer_norm(x, b.layer_norm) : x;
  y = b.refine(b.attn(b.lk(b.mix_out(infer::mish(b.mix_in(y))))));
  if (b.group_norm.weight.defined()) y = infer::group_norm(y, kNormGroups, b.group_norm.weight, b.group_norm.bias, kGroupNormEps);
  return y + x;
}

Affine read_affine(WeightReader& r, const std::string& p, int64_t dim) {
  return {r.tensor(p + ".weight", {dim}), r.tensor(p + ".bias", {dim})};
}

class RealPlksr : public NativeModel {
 public:
  RealPlksr(const weights::StateDict& dict, const DetectedArch& d, const std::string& source)
      : NativeModel(declared_info(d), source), scale_(d.scale) {
    WeightReader r(dict, source);
    const int64_t dim = int64_t(d.params.get("dim", 64)), blocks = int64_t(d.params.get("n_blocks", 28));
    const int64_t k = int64_t(d.params.get("kernel_size", 17)), lk = int64_t(d.params.get("lk_channels", 16));
    const bool ea = d.params.get("ea", 1) != 0, layer_norm = d.params.get("layer_norm", 0) != 0;
    stem_ = read_conv(r, "feats.0", 3, dim, 3);
    for (int64_t i = 1; i <= blocks; ++i) {
      const std::string p = str("feats.", i);
      Block b;
      if (layer_norm) b.layer_norm = read_affine(r, p + ".layer_norm", dim);
      b.mix_in = read_conv(r, p + ".channel_mixer.0", dim, 2 * dim, 3);
      b.mix_out = read_conv(r, p + ".channel_mixer.2", 2 * dim, dim, 3);
      b.lk.conv = read_conv(r, p + ".lk.conv", lk, lk, k);
      if (ea) b.attn.conv = read_conv(r, p + ".attn.f.0", dim, dim, 3);
      b.refine = read_conv(r, p + ".refine", dim, dim, 1);
      if (!layer_norm) b.group_norm = read_affine(r, p + ".norm", dim);
      blocks_.push_back(std::move(b));
    }
    const int64_t s2 = int64_t(d.scale) * d.scale;
    tail_ = read_conv(r, str("feats.", blocks + 2), dim, 3 * s2, 3);
    // Odd scales sample in 3 groups (one per colour), even ones in 4: upstream's choice.
    if (d.params.get("dysample", 0) != 0) to_img_ = DySample(r, "to_img", 3 * s2, 3, d.scale, d.scale % 2 ? 3 : 4);
    dysample_ = d.params.get("dysample", 0) != 0;
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    at::Tensor y = stem_(input);
    for (const Block& b : blocks_) y = run_block(b, y);
    y = tail_(y) + repeat_channels(input, scale_);
    return dysample_ ? to_img_(y) : at::pixel_shuffle(y, scale_);
  }

  void visit_weights(const TensorVisitor& f) override {
    visit(stem_, f);
    for (auto& b : blocks_) {
      for (Affine* a : {&b.layer_norm, &b.group_norm}) {
        f(a->weight);
        f(a->bias);
      }
      for (Conv2d* c : {&b.mix_in, &b.mix_out, &b.lk.conv, &b.attn.conv, &b.refine}) visit(*c, f);
    }
    visit(tail_, f);
    if (dysample_) to_img_.visit_weights(f);
  }

 private:
  int64_t scale_;
  bool dysample_ = false;
  Conv2d stem_, tail_;
  std::vector<Block> blocks_;
  DySample to_img_;
};

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  for (const char* key : {"feats.0.weight", "feats.1.channel_mixer.0.weight", "feats.1.lk.conv.weight", "feats.1.refine.weight"})
    if (!dict.count(key)) return std::nullopt;
  const auto dim = dim_of(dict, "feats.0.weight", 4, 0), in = dim_of(dict, "feats.0.weight", 4, 1);
  const auto lk = dim_of(dict, "feats.1.lk.conv.weight", 4, 0), k = dim_of(dict, "feats.1.lk.conv.weight", 4, 2);
  if (!dim || !in || !lk || !k)
    throw Error(ErrorKind::Model, str(source, ": RealPLKSR layout: feats.0 or feats.1.lk.conv is not a convolution"));
  if (*in != 3) throw Error(ErrorKind::Model, str(source, ": RealPLKSR with ", *in, " input channels (upstream has 3)"));
  if (*k % 2 == 0) throw Error(ErrorKind::Model, str(source, ": RealPLKSR layout: feats.1.lk.conv has an even kernel (", *k, ")"));
  const bool layer_norm = dict.count("feats.1.layer_norm.bias") != 0;
  if (!layer_norm && *dim % kNormGroups)
    throw Error(ErrorKind::Model, str(source, ": RealPLKSR with ", *dim, " channels: its GroupNorm needs a multiple of ", kNormGroups));
  const int length = feats_length(dict);
  const auto up = dim_of(dict, str("feats.", length - 1, ".weight"), 4, 0);
  const std::optional<int> scale = up ? shuffle_factor(*up, 3) : std::nullopt;
  if (length < 4 || !scale)
    throw Error(ErrorKind::Model, str(source, ": RealPLKSR layout: the last layer, feats.", length - 1, ", is not a convolution to 3 * scale^2"));
  DetectedArch d;
  d.arch = "realplksr";
  d.scale = *scale;
  d.params = {{"dim", double(*dim)},
              {"n_blocks", double(length - 3)},
              {"kernel_size", double(*k)},
              {"lk_channels", double(*lk)},
              {"ea", dict.count("feats.1.attn.f.0.weight") ? 1.0 : 0},
              {"layer_norm", layer_norm ? 1.0 : 0},
              {"dysample", dict.count("to_img.init_pos") ? 1.0 : 0}};
  return d;
}

}  // namespace

Architecture realplksr_architecture() {
  return {"realplksr", detect,
          [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return std::make_unique<RealPlksr>(dict, d, source);
          }};
}

}  // namespace framelift::models
