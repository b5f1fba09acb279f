// NAFNet (Chen et al. 2022, "Simple Baselines for Image Restoration"; SIDD denoising, GoPro/REDS
// deblurring): a U-Net of NAF blocks with no nonlinear activation. A 3x3 intro, per level some
// blocks and a 2x2 stride-2 convolution doubling the width, middle blocks, per level up a 1x1
// doubling the width and a pixel shuffle halving it (plus the level's skip) and some blocks, a
// 3x3 ending, plus the input. A NAF block:
//   y = x + beta * conv3(sca(gate(dw3x3(conv1(norm1(x))))))
//   out = y + gamma * conv5(gate(conv4(norm2(y))))
// with gate(t) = t's first half times its second, sca(t) = t * conv1x1(mean of t over the whole
// image), and norm a LayerNorm over channels at each pixel (eps 1e-6).
//
// Upstream zero-pads to 2^levels itself (right and bottom) and crops; the channel attention
// averages over the padded image, zeros included, so run() pads the same way rather than leaving
// it to framelift's reflect padding. That global mean is also why tiles cannot match whole frames
// exactly: each tile attends with its own mean (docs/models.md has the measured cost).
//
// State dict (megvii-research/NAFNet, the layout chaiNNer-org/spandrel reads): intro, encoders.I.J,
// downs.I, middle_blks.J, ups.I.0, decoders.I.J, ending; a block's norm{1,2}, conv{1..5},
// sca.1, beta, gamma.
#include <ATen/ATen.h>

#include "arch/declaration.h"
#include "infer/conv_layout.h"
#include "models/builtin_architectures.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "models/token_layers.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr double kNormEps = 1e-6;  // LayerNorm2d's

// Upstream's LayerNorm2d (mean and biased variance over the channels, eps inside the root) is
// nn.LayerNorm over the channels-last view, one fused op (token_layers.h) where spelling it out
// took five broadcasting ones, the most of this network's time on the CPU in bf16.
ChannelNorm read_norm(WeightReader& r, const std::string& p, int64_t c) { return read_channel_norm(r, p, c, kNormEps); }

at::Tensor gate(const at::Tensor& x) {
  const auto halves = x.chunk(2, 1);
  return halves[0] * halves[1];
}

class NafBlock {
 public:
  NafBlock(WeightReader& r, const std::string& p, int64_t c)
      : norm1_(read_norm(r, p + ".norm1", c)),
        norm2_(read_norm(r, p + ".norm2", c)),
        conv1_(read_conv(r, p + ".conv1", c, 2 * c, 1)),
        dw_weight_(r.tensor(p + ".conv2.weight", {2 * c, 1, 3, 3})),
        dw_bias_(r.tensor(p + ".conv2.bias", {2 * c})),
        sca_(read_conv(r, p + ".sca.1", c, c, 1)),
        conv3_(read_conv(r, p + ".conv3", c, c, 1)),
        conv4_(read_conv(r, p + ".conv4", c, 2 * c, 1)),
        conv5_(read_conv(r, p + ".conv5", c, c, 1)),
        beta_(r.tensor(p + ".beta", {1, c, 1, 1})),
        gamma_(r.tensor(p + ".gamma", {1, c, 1, 1})) {}

  at::Tensor operator()(const at::Tensor& x) const {
    at::Tensor t = conv1_(norm1_(x));
    t = gate(infer::conv2d(t, dw_weight_, dw_bias_, 1, 1, 1, t.size(1)));
    t = t * sca_(t.mean({2, 3}, true));
    const at::Tensor y = x + conv3_(t) * beta_;
    return y + conv5_(gate(conv4_(norm2_(y)))) * gamma_;
  }

  void visit_weights(const TensorVisitor& f) {
    norm1_.visit_weights(f);
    norm2_.visit_weights(f);
    for (Conv2d* c : {&conv1_, &sca_, &conv3_, &conv4_, &conv5_}) visit(*c, f);
    for (at::Tensor* t : {&dw_weight_, &dw_bias_, &beta_, &gamma_}) f(*t);
  }

 private:
  ChannelNorm norm1_, norm2_;
  Conv2d conv1_;
  at::Tensor dw_weight_, dw_bias_;  // depthwise 3x3 over 2c channels
  Conv2d sca_, conv3_, conv4_, conv5_;
  at::Tensor beta_, gamma_;
};

using Blocks = std::vector<NafBlock>;

Blocks read_blocks(WeightReader& r, const std::string& prefix, int64_t count, int64_t c) {
  Blocks blocks;
  for (int64_t j = 0; j < count; ++j) blocks.emplace_back(r, str(prefix, ".", j), c);
  return blocks;
}

at::Tensor run_blocks(const Blocks& blocks, at::Tensor x) {
  for (const NafBlock& b : blocks) x = b(x);
  return x;
}

struct Level {
  Blocks encoder, decoder;
  Conv2d down, up;  // up: the 1x1 before the pixel shuffle, from the level below
};

class NafNet : public NativeModel {
 public:
  NafNet(const weights::StateDict& dict, const DetectedArch& d, const std::string& source)
      : NativeModel(declared_info(d), source) {
    WeightReader r(dict, source);
    const auto& p = d.params;
    int64_t c = int64_t(p.get("width", 32));
    const int levels = int(p.get("levels", 4));
    intro_ = read_conv(r, "intro", d.in_channels, c, 3);
    for (int i = 0; i < levels; ++i, c *= 2) {
      Level l;
      l.encoder = read_blocks(r, str("encoders.", i), int64_t(p.get(str("enc", i), 1)), c);
      l.down = read_conv(r, str("downs.", i), c, 2 * c, 2, 2, 0);
      levels_.push_back(std::move(l));
    }
    middle_ = read_blocks(r, "middle_blks", int64_t(p.get("middle", 1)), c);
    // Decoder i serves the level levels - 1 - i: upstream zips the decoders with the reversed skips.
    for (int i = 0; i < levels; ++i, c /= 2) {
      Level& l = levels_[size_t(levels - 1 - i)];
      l.up = read_conv(r, str("ups.", i, ".0"), c, 2 * c, 1, 1, 0, false);
      l.decoder = read_blocks(r, str("decoders.", i), int64_t(p.get(str("dec", i), 1)), c / 2);
    }
    ending_ = read_conv(r, "ending", c, d.out_channels, 3);
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    const int64_t h = input.size(2), w = input.size(3), m = int64_t(1) << levels_.size();
    const at::Tensor padded = at::constant_pad_nd(input, {0, (m - w % m) % m, 0, (m - h % m) % m}, 0);
    at::Tensor x = intro_(padded);
    std::vector<at::Tensor> skips;
    for (const Level& l : levels_) {
      skips.push_back(run_blocks(l.encoder, x));
      x = l.down(skips.back());
    }
    x = run_blocks(middle_, x);
    for (size_t i = levels_.size(); i-- > 0;) {
      const Level& l = levels_[i];
      x = run_blocks(l.decoder, at::pixel_shuffle(l.up(x), 2) + skips[i]);
    }
    return (ending_(x) + padded).slice(2, 0, h).slice(3, 0, w);
  }

  void visit_weights(const TensorVisitor& f) override {
    visit(intro_, f);
    for (Level& l : levels_) {
      for (Blocks* bs : {&l.encoder, &l.decoder})
        for (NafBlock& b : *bs) b.visit_weights(f);
      visit(l.down, f);
      visit(l.up, f);
    }
    for (NafBlock& b : middle_) b.visit_weights(f);
    visit(ending_, f);
  }

 private:
  Conv2d intro_, ending_;
  std::vector<Level> levels_;  // from full resolution down
  Blocks middle_;
};

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  for (const char* key : {"intro.weight", "ending.weight", "ups.0.0.weight", "downs.0.weight", "middle_blks.0.beta",
                          "middle_blks.0.sca.1.weight", "middle_blks.0.norm1.weight"})
    if (!dict.count(key)) return std::nullopt;
  auto fail = [&](const std::string& why) { return Error(ErrorKind::Model, str(source, ": NAFNet layout: ", why)); };
  const auto width = dim_of(dict, "intro.weight", 4, 0), in = dim_of(dict, "intro.weight", 4, 1);
  const auto out = dim_of(dict, "ending.weight", 4, 0);
  if (!width || !in || !out) throw fail("intro or ending is not a convolution");
  const int levels = int(key_indices(dict, "downs.").size()), ups = int(key_indices(dict, "ups.").size());
  if (levels != ups) throw fail(str(levels, " downsamplers but ", ups, " upsamplers; upstream pairs them level by level"));

  // Checked before they narrow to int: 2^32 + 3 channels would otherwise pass as 3.
  arch::check_shapes("nafnet", {{"in_channels", double(*in)}, {"out_channels", double(*out)}, {"levels", double(levels)}}, source);
  DetectedArch d;
  d.arch = "nafnet";
  d.scale = 1;
  d.in_channels = int(*in);
  d.out_channels = int(*out);
  d.params = {{"width", double(*width)}, {"levels", double(levels)}};
  for (int i = 0; i < levels; ++i) d.params[str("enc", i)] = double(key_indices(dict, str("encoders.", i, ".")).size());
  d.params["middle"] = double(key_indices(dict, "middle_blks.").size());
  for (int i = 0; i < levels; ++i) d.params[str("dec", i)] = double(key_indices(dict, str("decoders.", i, ".")).size());
  return d;
}

}  // namespace

Architecture nafnet_architecture() {
  return {"nafnet", detect,
          [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return std::make_unique<NafNet>(dict, d, source);
          }};
}

}  // namespace framelift::models
