// SCUNet (Zhang et al. 2023, "Practical Blind Denoising via Swin-Conv-UNet and Data Synthesis"):
// the real-footage blind denoiser. A bias-free 3x3 head to dim channels; three levels down, each
// a stack of Swin-Conv blocks and a bias-free 2x2 stride-2 convolution doubling the width; a body
// stack at 1/8; three levels up, each a bias-free 2x2 stride-2 transposed convolution halving the
// width (of the path plus the level's skip) and a stack; a bias-free 3x3 tail (of the path plus
// the head's output). No input residual: the network outputs the clean image.
//
// A Swin-Conv block on a 2c-channel map: a 1x1 split into two c-channel halves; the first through
// x + conv3x3(relu(conv3x3(x))) (bias-free), the second through a Swin layer (x + window attention
// of LayerNorm(x), then x + MLP(LayerNorm(x)), hidden 4c, exact GELU) in 8 x 8 windows, every
// second block of a stack on windows shifted by 4; the halves concatenated through a 1x1, plus the
// block's input. Heads are c / head_dim (32 in every published model).
//
// Upstream (spandrel) reflect-pads to a multiple of 64 on the right and bottom and crops: the
// size multiple here is 64, and framelift's callers pad the same way. Upstream masks the shifted
// windows' wrapped pairs with -inf where Swin adds -100; both leave them out of the softmax.
//
// State dict (cszn/SCUNet, the layout chaiNNer-org/spandrel reads): m_head.0, m_down{1,2,3}.J
// (blocks) and .N (the stride convolution), m_body.J, m_up{3,2,1}.0 (the transposed convolution)
// and .{1..N} (blocks), m_tail.0; a block's conv1_1, conv1_2, conv_block.{0,2}, trans_block.{ln1,
// ln2, msa.embedding_layer, msa.linear, msa.relative_position_params [heads, 15, 15], mlp.{0,2}}.
#include <ATen/ATen.h>

#include <array>

#include "arch/declaration.h"
#include "infer/layout_ops.h"
#include "models/builtin_architectures.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "models/swin_windows.h"
#include "models/token_layers.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr int64_t kWindow = 8;
// The stacks in upstream's order (config[0..6]), the key prefix of each.
constexpr std::array<const char*, 7> kStacks = {"m_down1", "m_down2", "m_down3", "m_body", "m_up3", "m_up2", "m_up1"};

class SwinLayer {
 public:
  SwinLayer(WeightReader& r, const std::string& p, int64_t c, int64_t heads, bool shifted)
      : heads_(heads),
        shift_(shifted ? kWindow / 2 : 0),
        norm1_(read_layer_norm(r, p + ".ln1", c)),
        qkv_(read_linear(r, p + ".msa.embedding_layer", c, 3 * c)),
        proj_(read_linear(r, p + ".msa.linear", c, c)),
        norm2_(read_layer_norm(r, p + ".ln2", c)),
        fc1_(read_linear(r, p + ".mlp.0", c, 4 * c)),
        fc2_(read_linear(r, p + ".mlp.2", 4 * c, c)) {
    const int64_t span = 2 * kWindow - 1;
    // Upstream keeps the table as [heads, dy, dx]; as Swin's [(dy, dx), heads] it gathers alike.
    const at::Tensor table = r.tensor(p + ".msa.relative_position_params", {heads, span, span}).reshape({heads, span * span}).t();
    bias_ = gathered_bias(table, relative_position_index(kWindow));
  }

  // x [B, H, W, C]; mask: the shift mask for H x W.
  at::Tensor operator()(const at::Tensor& x, ShiftMasks& masks) const {
    const at::Tensor& mask = shift_ ? masks.for_map(x) : at::Tensor();
    const at::Tensor z = x + in_windows(norm1_(x), kWindow, shift_, [&](const at::Tensor& t) {
                           const std::vector<at::Tensor> qkv = qkv_(t).chunk(3, -1);
                           return proj_(biased_attention(qkv[0], qkv[1], qkv[2], heads_, bias_, mask));
                         });
    return z + fc2_(infer::gelu(fc1_(norm2_(z))));
  }

  void visit_weights(const TensorVisitor& f) {
    for (LayerNorm* n : {&norm1_, &norm2_}) n->visit_weights(f);
    for (Linear* l : {&qkv_, &proj_, &fc1_, &fc2_}) l->visit_weights(f);
    f(bias_);
  }

 private:
  int64_t heads_, shift_;
  LayerNorm norm1_;
  Linear qkv_, proj_;
  LayerNorm norm2_;
  Linear fc1_, fc2_;
  at::Tensor bias_;  // [heads, 64, 64]
};

class SwinConvBlock {
 public:
  SwinConvBlock(WeightReader& r, const std::string& p, int64_t c, int64_t head_dim, bool shifted)
      : c_(c),
        split_(read_conv(r, p + ".conv1_1", 2 * c, 2 * c, 1)),
        merge_(read_conv(r, p + ".conv1_2", 2 * c, 2 * c, 1)),
        conv_a_(read_conv(r, p + ".conv_block.0", c, c, 3, 1, 1, false)),
        conv_b_(read_conv(r, p + ".conv_block.2", c, c, 3, 1, 1, false)),
        swin_(r, p + ".trans_block", c, c / head_dim, shifted) {}

  at::Tensor operator()(const at::Tensor& x, ShiftMasks& masks) const {
    const std::vector<at::Tensor> halves = split_(x).split(c_, 1);
    const at::Tensor conv = conv_b_(at::relu(conv_a_(halves[0]))) + halves[0];
    const at::Tensor trans = swin_(halves[1].permute({0, 2, 3, 1}), masks).permute({0, 3, 1, 2});
    return x + merge_(at::cat({conv, trans}, 1));
  }

  void visit_weights(const TensorVisitor& f) {
    for (Conv2d* c : {&split_, &merge_, &conv_a_, &conv_b_}) visit(*c, f);
    swin_.visit_weights(f);
  }

 private:
  int64_t c_;
  Conv2d split_, merge_, conv_a_, conv_b_;
  SwinLayer swin_;
};

using Stack = std::vector<SwinConvBlock>;

// Blocks "<prefix>.<first + j>" for j < count, on 2c channels; upstream shifts the odd j.
Stack read_stack(WeightReader& r, const std::string& prefix, int first, int count, int64_t c, int64_t head_dim) {
  Stack s;
  for (int j = 0; j < count; ++j) s.emplace_back(r, str(prefix, ".", first + j), c, head_dim, j % 2 == 1);
  return s;
}

class Scunet : public NativeModel {
 public:
  Scunet(const weights::StateDict& dict, const DetectedArch& d, const std::string& source)
      : NativeModel(declared_info(d), source) {
    WeightReader r(dict, source);
    const int64_t dim = int64_t(d.params.get("dim", 64)), head_dim = int64_t(d.params.get("head_dim", 32));
    auto blocks = [&](int i) { return int(d.params.get(kStacks[size_t(i)], 4)); };
    head_ = read_conv(r, "m_head.0", d.in_channels, dim, 3, 1, 1, false);
    for (int i = 0; i < 3; ++i) {
      const int64_t c = dim << i;  // the level's width; each half of a block is c / 2
      const std::string down = kStacks[size_t(i)], up = kStacks[size_t(6 - i)];
      down_[size_t(i)] = read_stack(r, down, 0, blocks(i), c / 2, head_dim);
      downsample_[size_t(i)] = read_conv(r, str(down, ".", blocks(i)), c, 2 * c, 2, 2, 0, false);
      upsample_[size_t(i)] = read_deconv(r, up + ".0", 2 * c, c, 2, 2, 0, false);
      up_[size_t(i)] = read_stack(r, up, 1, blocks(6 - i), c / 2, head_dim);
    }
    body_ = read_stack(r, "m_body", 0, blocks(3), 4 * dim, head_dim);
    tail_ = read_conv(r, "m_tail.0", dim, d.out_channels, 3, 1, 1, false);
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    // Each level's input, the skip into the same level on the way up.
    std::array<at::Tensor, 4> skips;
    skips[0] = head_(input);
    for (size_t i = 0; i < 3; ++i) skips[i + 1] = downsample_[i](stack(down_[i], skips[i]));
    at::Tensor x = stack(body_, skips[3]);
    for (int i = 2; i >= 0; --i) x = stack(up_[size_t(i)], upsample_[size_t(i)](x + skips[size_t(i) + 1]));
    return tail_(x + skips[0]);
  }

  void visit_weights(const TensorVisitor& f) override {
    visit(head_, f);
    visit(tail_, f);
    for (size_t i = 0; i < 3; ++i) {
      visit(downsample_[i], f);
      visit(upsample_[i], f);
      for (Stack* s : {&down_[i], &up_[i]})
        for (SwinConvBlock& b : *s) b.visit_weights(f);
    }
    for (SwinConvBlock& b : body_) b.visit_weights(f);
    masks_.clear();  // rebuilt in the new device and precision
  }

 private:
  at::Tensor stack(const Stack& s, at::Tensor x) {
    for (const SwinConvBlock& b : s) x = b(x, masks_);
    return x;
  }

  Conv2d head_, tail_;
  std::array<Stack, 3> down_, up_;  // full, 1/2 and 1/4 resolution
  std::array<Conv2d, 3> downsample_;
  std::array<ConvTranspose2d, 3> upsample_;  // from the level below into level i
  Stack body_;                               // 1/8
  ShiftMasks masks_{kWindow, kWindow / 2};   // per map size: one per level
};

// Blocks of a stack: its indices less the stride or transposed convolution among them.
int64_t blocks_in(const weights::StateDict& dict, const std::string& stack) {
  const int64_t n = int64_t(key_indices(dict, stack + ".").size());
  return stack == "m_body" ? n : n - 1;
}

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  const std::string table = "m_body.0.trans_block.msa.relative_position_params";
  for (const std::string& key : {std::string("m_head.0.weight"), std::string("m_tail.0.weight"), table})
    if (!dict.count(key)) return std::nullopt;
  auto fail = [&](const std::string& why) { return Error(ErrorKind::Model, str(source, ": SCUNet layout: ", why)); };
  const auto dim = dim_of(dict, "m_head.0.weight", 4, 0), in = dim_of(dict, "m_head.0.weight", 4, 1);
  const auto out = dim_of(dict, "m_tail.0.weight", 4, 0);
  const auto heads = dim_of(dict, table, 3, 0), span = dim_of(dict, table, 3, 1);
  if (!dim || !in || !out || !heads || !span) throw fail("m_head.0, m_tail.0 or m_body.0's position table has unexpected ranks");
  if (*span != 2 * kWindow - 1)
    throw fail(str("the position table spans ", *span, " offsets: a window of ", (*span + 1) / 2, ", not upstream's 8"));
  // m_body's blocks carry 4 dim transformer channels in `heads` heads: the declared constraints
  // (src/arch/scunet.cpp) hold before head_dim divides them, and head_dim then splits every level.
  arch::check_shapes("scunet", {{"dim", double(*dim)}, {"heads", double(*heads)}, {"in_channels", double(*in)},
                                {"out_channels", double(*out)}},
                     source);
  arch::check_shapes("scunet", {{"dim", double(*dim)}, {"head_dim", double(4 * *dim / *heads)}}, source);

  DetectedArch d;
  d.arch = "scunet";
  d.scale = 1;
  d.in_channels = int(*in);
  d.out_channels = int(*out);
  d.params = {{"dim", double(*dim)}, {"head_dim", double(4 * *dim / *heads)}, {"window_size", double(kWindow)}};
  for (const char* stack : kStacks) d.params[stack] = double(blocks_in(dict, stack));
  return d;
}

}  // namespace

Architecture scunet_architecture() {
  return {"scunet", detect,
          [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return std::make_unique<Scunet>(dict, d, source);
          }};
}

}  // namespace framelift::models
