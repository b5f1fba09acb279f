// FBCNN (Jiang et al. 2021, "Towards Flexible Blind JPEG Artifacts Removal"): a KAIR U-Net (the
// DRUNet layout with biases: a 3x3 head, three levels of nb residual blocks and a 2x2 stride-2
// convolution, nb encoder blocks at 1/8) whose bottom also predicts the image's JPEG quality:
// nb more blocks, a global mean, and an MLP to one sigmoid, qf in [0, 1] (quality factor / 100).
// An MLP embeds qf; per level up, linear maps of the embedding give gamma (sigmoid) and beta
// (tanh) for that level's blocks, x + gamma * res(x) + beta, after nb decoder blocks at the bottom
// and a 2x2 stride-2 transposed convolution. Skips are added before each up step and the tail.
//
// The prediction is kept (JpegQualityEstimator) and logged once; upstream returns it beside the
// image. It is a global mean, so a tiled frame predicts per tile and its tiles are conditioned on
// different qualities (docs/models.md has the measured cost), unless a quality is given
// (set_quality, upstream's qf_input, the denoise stage's quality=): then every tile uses that one.
//
// Upstream replicate-pads to 8 (right and bottom) itself and crops; run() does the same, so
// framelift's size multiple is 1 and the padding is upstream's, not framelift's reflection.
//
// State dict (jiaxi-jiang/FBCNN, the layout chaiNNer-org/spandrel reads): m_head, m_down{1,2,3}
// .{0..nb-1}.res.{0,2} and .nb, m_body_encoder, m_body_decoder, qf_pred.{0..nb-1}.res.{0,2} and
// .{nb+2, nb+4, nb+6} (linear), qf_embed.{0,2,4}, to_gamma_{3,2,1}.0, to_beta_{3,2,1}.0, m_up{3,2,1}
// .0 (transposed convolution) and .{1..nb}.res.{0,2}, m_tail. The MLPs are 512 wide in every
// published model; the width is read from the shapes.
#include <ATen/ATen.h>

#include <array>
#include <cmath>

#include "infer/fp32_islands.h"
#include "arch/declaration.h"
#include "models/builtin_architectures.h"
#include "models/jpeg_quality.h"
#include "models/kair_blocks.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr int64_t kPad = 8;  // three halvings

struct Linear {
  at::Tensor weight, bias;
  at::Tensor operator()(const at::Tensor& x) const { return at::linear(x, weight, bias); }
};

Linear read_linear(WeightReader& r, const std::string& p, int64_t in, int64_t out) {
  return {r.tensor(p + ".weight", {out, in}), r.tensor(p + ".bias", {out})};
}

void visit(Linear& l, const TensorVisitor& f) {
  f(l.weight);
  f(l.bias);
}

struct Level {
  std::vector<ResBlock> down_blocks, up_blocks;  // up_blocks: modulated by the level's gamma and beta
  Conv2d down;
  ConvTranspose2d up;  // from the level below to this one
  Linear to_gamma, to_beta;
};

class Fbcnn : public NativeModel, public JpegQualityEstimator {
 public:
  Fbcnn(const weights::StateDict& dict, const DetectedArch& d, const std::string& source) : NativeModel(declared_info(d), source) {
    WeightReader r(dict, source);
    const int nb = int(d.params.get("nb", 4));
    const int64_t hidden = int64_t(d.params.get("qf_hidden", 512));
    std::array<int64_t, 4> nc;
    for (int i = 0; i < 4; ++i) nc[size_t(i)] = int64_t(d.params.get(str("nc", i), 64 << i));
    head_ = read_conv(r, "m_head", d.in_channels, nc[0], 3);
    for (int i = 0; i < 3; ++i) {
      Level l;
      const std::string down = str("m_down", i + 1), up = str("m_up", i + 1);
      l.down_blocks = read_res_blocks(r, down, 0, nb, nc[size_t(i)], true);
      l.down = read_conv(r, str(down, ".", nb), nc[size_t(i)], nc[size_t(i) + 1], 2, 2, 0);
      l.up = read_deconv(r, up + ".0", nc[size_t(i) + 1], nc[size_t(i)], 2, 2, 0);
      l.up_blocks = read_res_blocks(r, up, 1, nb, nc[size_t(i)], true);
      l.to_gamma = read_linear(r, str("to_gamma_", i + 1, ".0"), hidden, nc[size_t(i)]);
      l.to_beta = read_linear(r, str("to_beta_", i + 1, ".0"), hidden, nc[size_t(i)]);
      levels_.push_back(std::move(l));
    }
    encoder_ = read_res_blocks(r, "m_body_encoder", 0, nb, nc[3], true);
    decoder_ = read_res_blocks(r, "m_body_decoder", 0, nb, nc[3], true);
    qf_blocks_ = read_res_blocks(r, "qf_pred", 0, nb, nc[3], true);
    qf_mlp_ = {read_linear(r, str("qf_pred.", nb + 2), nc[3], hidden), read_linear(r, str("qf_pred.", nb + 4), hidden, hidden),
               read_linear(r, str("qf_pred.", nb + 6), hidden, 1)};
    embed_ = {read_linear(r, "qf_embed.0", 1, hidden), read_linear(r, "qf_embed.2", hidden, hidden),
              read_linear(r, "qf_embed.4", hidden, hidden)};
    tail_ = read_conv(r, "m_tail", nc[0], d.out_channels, 3);
    r.expect_all_used();
  }

  std::optional<double> predicted_quality() const override { return quality_; }
  void set_quality(std::optional<double> quality) override { given_ = quality; }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    const int64_t h = input.size(2), w = input.size(3);
    const at::Tensor padded = infer::replicate_pad2d(input, {0, (kPad - w % kPad) % kPad, 0, (kPad - h % kPad) % kPad});
    std::vector<at::Tensor> skips{head_(padded)};  // each level's input, for the skip on the way up
    for (const Level& l : levels_) skips.push_back(l.down(run_blocks(l.down_blocks, skips.back())));
    const at::Tensor bottom = run_blocks(encoder_, skips.back());
    const at::Tensor qf = predict_quality(bottom);
    note_quality(qf);
    at::Tensor embedding = given_ ? at::full_like(qf, *given_ / 100.0) : qf;
    for (const Linear& l : embed_) embedding = at::relu(l(embedding));
    at::Tensor x = run_blocks(decoder_, bottom);
    for (int i = 2; i >= 0; --i) {
      const Level& l = levels_[size_t(i)];
      const at::Tensor gamma = at::sigmoid(l.to_gamma(embedding)).unsqueeze(-1).unsqueeze(-1);
      const at::Tensor beta = at::tanh(l.to_beta(embedding)).unsqueeze(-1).unsqueeze(-1);
      x = l.up(x + skips[size_t(i) + 1]);
      for (const ResBlock& b : l.up_blocks) x = x + gamma * b.second(at::relu(b.first(x))) + beta;
    }
    return tail_(x + skips[0]).slice(2, 0, h).slice(3, 0, w);
  }

  void visit_weights(const TensorVisitor& f) override {
    visit(head_, f);
    for (Level& l : levels_) {
      visit(l.down_blocks, f);
      visit(l.down, f);
      visit(l.up, f);
      visit(l.up_blocks, f);
      visit(l.to_gamma, f);
      visit(l.to_beta, f);
    }
    for (std::vector<ResBlock>* bs : {&encoder_, &decoder_, &qf_blocks_}) visit(*bs, f);
    for (Linear& l : qf_mlp_) visit(l, f);
    for (Linear& l : embed_) visit(l, f);
    visit(tail_, f);
  }

 private:
  // [N, 1] in [0, 1]: quality factor / 100.
  at::Tensor predict_quality(const at::Tensor& bottom) const {
    at::Tensor t = run_blocks(qf_blocks_, bottom).mean({2, 3});
    t = at::relu(qf_mlp_[0](t));
    t = at::relu(qf_mlp_[1](t));
    return at::sigmoid(qf_mlp_[2](t));
  }

  void note_quality(const at::Tensor& qf) {
    const bool first = !quality_;
    quality_ = 100.0 * qf[0][0].item<double>();
    if (first) log::info("FBCNN ", source_, ": predicted JPEG quality ", std::lround(*quality_), " (first tile or frame)");
    else log::debug("FBCNN ", source_, ": predicted JPEG quality ", *quality_);
  }

  Conv2d head_, tail_;
  std::vector<Level> levels_;  // full, 1/2 and 1/4 resolution
  std::vector<ResBlock> encoder_, decoder_, qf_blocks_;  // 1/8
  std::array<Linear, 3> qf_mlp_, embed_;
  std::optional<double> quality_, given_;  // predicted, and given by the user (0-100)
};

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  for (const char* key : {"m_head.weight", "m_down1.0.res.0.weight", "m_down2.0.res.0.weight", "m_body_encoder.0.res.0.weight",
                          "m_tail.weight", "qf_pred.0.res.0.weight"})
    if (!dict.count(key)) return std::nullopt;
  auto fail = [&](const std::string& why) { return Error(ErrorKind::Model, str(source, ": FBCNN layout: ", why)); };
  const int64_t nb = int64_t(key_indices(dict, "m_body_encoder.").size());
  if (!dict.count(str("m_down1.", nb, ".weight")))
    throw fail(str("no stride-2 convolution m_down1.", nb, ": a pooling downsampler, which only the published strideconv form replaces"));
  if (!dict.count("m_up3.0.weight") || dim_of(dict, "m_up3.0.weight", 4, 2) != 2)
    throw fail("m_up3.0 is not a 2x2 transposed convolution: an upconv or pixelshuffle upsampler, not the published convtranspose");
  const auto nc0 = dim_of(dict, "m_head.weight", 4, 0), in = dim_of(dict, "m_head.weight", 4, 1);
  const auto out = dim_of(dict, "m_tail.weight", 4, 0);
  const auto nc1 = dim_of(dict, "m_down2.0.res.0.weight", 4, 0), nc2 = dim_of(dict, "m_down3.0.res.0.weight", 4, 0);
  const auto nc3 = dim_of(dict, "m_body_encoder.0.res.0.weight", 4, 0);
  const auto hidden = dim_of(dict, "qf_embed.0.weight", 2, 0);
  if (!nc0 || !in || !out || !nc1 || !nc2 || !nc3) throw fail("m_head, m_tail or a level's first block is not a convolution");
  if (!hidden) throw fail("qf_embed.0 is not a linear layer");

  // Checked before they narrow to int: 2^32 + 3 channels would otherwise pass as 3.
  arch::check_shapes("fbcnn", {{"in_channels", double(*in)}, {"out_channels", double(*out)}}, source);
  DetectedArch d;
  d.arch = "fbcnn";
  d.scale = 1;
  d.in_channels = int(*in);
  d.out_channels = int(*out);
  d.params = {{"nc0", double(*nc0)}, {"nc1", double(*nc1)}, {"nc2", double(*nc2)},
              {"nc3", double(*nc3)}, {"nb", double(nb)},    {"qf_hidden", double(*hidden)}};
  return d;
}

}  // namespace

Architecture fbcnn_architecture() {
  return {"fbcnn", detect,
          [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return std::make_unique<Fbcnn>(dict, d, source);
          }};
}

}  // namespace framelift::models
