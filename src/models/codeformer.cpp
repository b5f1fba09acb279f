// CodeFormer (Zhou et al. 2022, "Towards Robust Blind Face Restoration with Codebook Lookup
// Transformer"), sczhou's face restorer as spandrel_extra_arches loads codeformer.pth: a VQGAN
// encoder (GroupNorm-swish residual blocks, a 3x3 stride-2 step between levels, self-attention
// at the smallest), a pre-norm transformer that predicts, for each latent pixel, the index of a
// code in a learned codebook, the code looked up and given the encoder latent's per-channel
// mean and spread (AdaIN), and the VQGAN generator back to the face; on the way up, controllable
// feature transformation blocks add w (dec * scale + shift) from the encoder's feature at the
// same size, w the fidelity weight (models::FidelityWeighted; 0 skips them, as upstream does).
//
// Every size is read off the state dict: the face size S from the latent (position_emb's rows,
// a square) and the number of levels, the widths and levels with attention from the encoder's
// blocks, the fused sizes from fuse_convs_dict. The heads are not in the weights: 8, as upstream.
// Input [N, 3, S, S] RGB in [0, 1], output (y + 1) / 2 of the network's [-1, 1] image, not
// clamped (models/face_restorer.h). Untiled: the transformer sees the whole latent.
#include <ATen/ATen.h>

#include <cmath>

#include "arch/declaration.h"
#include "infer/fp32_islands.h"
#include "models/builtin_architectures.h"
#include "models/face_restorer.h"
#include "models/multihead_attention.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "models/token_layers.h"
#include "models/vqgan_blocks.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr int64_t kHeads = 8;    // upstream's n_head; the weights do not say it
constexpr int kMaxLevels = 8;
constexpr double kDefaultFidelity = 0.5;  // inference_codeformer.py's --fidelity_weight

const std::string kEnc = "encoder.blocks.", kGen = "generator.blocks.", kFuse = "fuse_convs_dict.";

using GroupNorm = VqganGroupNorm;
using ResBlock = VqganResBlock;

GroupNorm read_group_norm(WeightReader& r, const std::string& p, int64_t c) { return read_vqgan_group_norm(r, p, c); }

// p ends with its dot, as the block lists' keys are built here.
ResBlock read_res_block(WeightReader& r, const std::string& p, int64_t in, int64_t out) {
  return read_vqgan_res_block(r, p.substr(0, p.size() - 1), in, out, "conv_out");
}

// Single-head attention over all pixels of the map, scores scaled by 1 / sqrt(C).
struct AttnBlock {
  GroupNorm norm;
  Conv2d q, k, v, proj;
  at::Tensor operator()(const at::Tensor& x) const {
    const at::Tensor h = norm(x);
    const int64_t n = x.size(0), c = x.size(1), hw = x.size(2) * x.size(3);
    const at::Tensor qt = q(h).reshape({n, c, hw}).transpose(1, 2), kt = k(h).reshape({n, c, hw}), vt = v(h).reshape({n, c, hw});
    const at::Tensor a = at::softmax(at::bmm(qt, kt) * (1.0 / std::sqrt(double(c))), 2);
    return x + proj(at::bmm(vt, a.transpose(1, 2)).reshape({n, c, x.size(2), x.size(3)}));
  }
  void visit_weights(const TensorVisitor& f) {
    f(norm.weight);
    f(norm.bias);
    for (Conv2d* c : {&q, &k, &v, &proj}) visit(*c, f);
  }
};

AttnBlock read_attn_block(WeightReader& r, const std::string& p, int64_t c) {
  return {read_group_norm(r, p + "norm", c), read_conv(r, p + "q", c, c, 1), read_conv(r, p + "k", c, c, 1),
          read_conv(r, p + "v", c, c, 1), read_conv(r, p + "proj_out", c, c, 1)};
}

// One block of the encoder's or the generator's list, as upstream numbers them.
struct Block {
  enum Kind { Res, Attn, Down, Up } kind = Res;
  ResBlock res;
  AttnBlock attn;
  Conv2d conv;  // Down: 3x3 stride 2 after a pad right and bottom; Up: 3x3 after a nearest 2x
  at::Tensor operator()(const at::Tensor& x) const {
    switch (kind) {
      case Res: return res(x);
      case Attn: return attn(x);
      case Down: return conv(at::constant_pad_nd(x, {0, 1, 0, 1}, 0));
      case Up: return conv(upsample_nearest(x, 2));
    }
    return x;
  }
  void visit_weights(const TensorVisitor& f) {
    if (kind == Res) res.visit_weights(f);
    else if (kind == Attn) attn.visit_weights(f);
    else visit(conv, f);
  }
};

// Controllable feature transformation: the encoder's feature and the generator's, through a
// residual block, give a scale and a shift; the generator's feature gains w (dec scale + shift).
struct FuseBlock {
  ResBlock encode;
  Conv2d scale1, scale2, shift1, shift2;
  at::Tensor operator()(const at::Tensor& enc, const at::Tensor& dec, double w) const {
    const at::Tensor e = encode(at::cat({enc, dec}, 1));
    const at::Tensor scale = scale2(at::leaky_relu(scale1(e), 0.2)), shift = shift2(at::leaky_relu(shift1(e), 0.2));
    return dec + w * (dec * scale + shift);
  }
  void visit_weights(const TensorVisitor& f) {
    encode.visit_weights(f);
    for (Conv2d* c : {&scale1, &scale2, &shift1, &shift2}) visit(*c, f);
  }
};

struct TransformerLayer {  // pre-norm: self-attention with the position added to q and k, GELU MLP
  LayerNorm norm1, norm2;
  MultiheadAttention attn;  // sequence-first upstream, batch-first here
  Linear fc1, fc2;
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& pos) const {
    const at::Tensor h = norm1(x);
    const at::Tensor qk = h + pos;
    const at::Tensor y = x + attn(qk, qk, h);
    return y + fc2(at::gelu(fc1(norm2(y))));
  }
  void visit_weights(const TensorVisitor& f) {
    norm1.visit_weights(f);
    norm2.visit_weights(f);
    attn.visit_weights(f);
    fc1.visit_weights(f);
    fc2.visit_weights(f);
  }
};

// What detection reads: level 0 is the face's size, level L-1 the latent's.
struct Shape {
  int64_t face = 512, nf = 64, emb = 256, codebook = 1024, dim = 512, mlp = 1024;
  int levels = 6, res_blocks = 2, layers = 9;
  std::vector<int64_t> widths;
  std::vector<bool> attn, fused;
  int64_t size_at(int level) const { return face >> level; }
};

Shape shape_of(const DetectedArch& d) {
  Shape s;
  const auto get = [&](const std::string& k) { return int64_t(d.params.get(k, 0)); };
  s.face = get("face_size");
  s.nf = get("nf");
  s.emb = get("emb_dim");
  s.codebook = get("codebook");
  s.dim = get("dim_embd");
  s.mlp = get("mlp");
  s.levels = int(get("levels"));
  s.res_blocks = int(get("res_blocks"));
  s.layers = int(get("layers"));
  for (int l = 0; l < s.levels; ++l) {
    s.widths.push_back(get(str("width", l)));
    s.attn.push_back(get(str("attn", l)) != 0);
    s.fused.push_back(get(str("fuse", s.size_at(l))) != 0);
  }
  return s;
}

class CodeFormer : public NativeModel, public FidelityWeighted {
 public:
  CodeFormer(const weights::StateDict& dict, const DetectedArch& d, const std::string& source)
      : NativeModel(declared_info(d), source), shape_(shape_of(d)) {
    WeightReader r(dict, source);
    read_encoder(r);
    read_transformer(r);
    read_generator(r);
    r.expect_all_used();
  }

  void set_fidelity(double w) override {
    if (!(w >= 0 && w <= 1)) throw Error(ErrorKind::Usage, str(source_, ": codeformer: fidelity w=", w, " is not in [0, 1]"));
    fidelity_ = w;
  }
  double fidelity() const override { return fidelity_; }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    std::vector<at::Tensor> skips(size_t(shape_.levels));
    at::Tensor x = encoder_in_((input - 0.5) / 0.5);
    for (size_t i = 0; i < encoder_.size(); ++i) {
      x = encoder_[i](x);
      if (encoder_taps_[i] >= 0) skips[size_t(encoder_taps_[i])] = x;
    }
    const at::Tensor latent = encoder_out_(encoder_norm_(x));
    x = generator_in_(adain(codes(latent), latent));
    for (size_t i = 0; i < generator_.size(); ++i) {
      x = generator_[i](x);
      const int level = generator_taps_[i];
      if (level >= 0 && fidelity_ > 0) x = fuse_[size_t(level)](skips[size_t(level)], x, fidelity_);
    }
    return (generator_out_(generator_norm_(x)) + 1) * 0.5;
  }

  void visit_weights(const TensorVisitor& f) override {
    for (Conv2d* c : {&encoder_in_, &encoder_out_, &generator_in_, &generator_out_}) visit(*c, f);
    for (GroupNorm* n : {&encoder_norm_, &generator_norm_}) {
      f(n->weight);
      f(n->bias);
    }
    for (Block& b : encoder_) b.visit_weights(f);
    for (Block& b : generator_) b.visit_weights(f);
    for (FuseBlock& b : fuse_)
      if (b.scale1.weight.defined()) b.visit_weights(f);
    for (at::Tensor* t : {&position_, &codebook_, &idx_weight_}) f(*t);
    feat_emb_.visit_weights(f);
    for (TransformerLayer& l : layers_) l.visit_weights(f);
    idx_norm_.visit_weights(f);
  }

 private:
  // The codes the transformer picks for the latent, looked up: [N, emb, h, w]. The pick is an
  // argmax over the codebook, taken in fp32 (the softmax first, as upstream ranks them).
  at::Tensor codes(const at::Tensor& latent) const {
    const int64_t n = latent.size(0), h = latent.size(2), w = latent.size(3);
    at::Tensor t = feat_emb_(latent.flatten(2).transpose(1, 2));  // [N, hw, dim]
    for (const TransformerLayer& l : layers_) t = l(t, position_);
    const at::Tensor logits = at::linear(idx_norm_(t), idx_weight_);
    const at::Tensor index = at::softmax(logits.to(at::kFloat), -1).argmax(-1).flatten();
    return codebook_.index_select(0, index).view({n, h, w, shape_.emb}).permute({0, 3, 1, 2}).contiguous();
  }

  // The codes given the latent's per-channel mean and standard deviation (unbiased, eps 1e-5 on
  // the variance), as upstream's adaptive_instance_normalization.
  static at::Tensor adain(const at::Tensor& content, const at::Tensor& style) {
    const auto stats = [](const at::Tensor& t) {
      const at::Tensor flat = t.flatten(2);
      return std::pair{flat.mean(2).view({t.size(0), t.size(1), 1, 1}), (flat.var(2) + 1e-5).sqrt().view({t.size(0), t.size(1), 1, 1})};
    };
    const auto [cm, cs] = stats(content);
    const auto [sm, ss] = stats(style);
    return (content - cm) / cs * ss + sm;
  }

  void read_encoder(WeightReader& r) {
    const Shape& s = shape_;
    encoder_in_ = read_conv(r, kEnc + "0", 3, s.nf, 3);
    int i = 1;
    int64_t c = s.nf;
    for (int l = 0; l < s.levels; ++l) {
      for (int b = 0; b < s.res_blocks; ++b) {
        add_res(r, kEnc, encoder_, encoder_taps_, i++, c, s.widths[size_t(l)]);
        c = s.widths[size_t(l)];
        // The level's feature, after its last residual block: kept only where the generator fuses it.
        if (b == s.res_blocks - 1 && s.fused[size_t(l)]) encoder_taps_.back() = l;
        if (s.attn[size_t(l)]) add_attn(r, kEnc, encoder_, encoder_taps_, i++, c);
      }
      if (l != s.levels - 1) add_resample(r, kEnc, encoder_, encoder_taps_, i++, c, Block::Down);
    }
    add_res(r, kEnc, encoder_, encoder_taps_, i++, c, c);
    add_attn(r, kEnc, encoder_, encoder_taps_, i++, c);
    add_res(r, kEnc, encoder_, encoder_taps_, i++, c, c);
    encoder_norm_ = read_group_norm(r, str(kEnc, i++), c);
    encoder_out_ = read_conv(r, str(kEnc, i), c, s.emb, 3);
  }

  void read_generator(WeightReader& r) {
    const Shape& s = shape_;
    int64_t c = s.widths.back();
    generator_in_ = read_conv(r, kGen + "0", s.emb, c, 3);
    int i = 1;
    add_res(r, kGen, generator_, generator_taps_, i++, c, c);
    add_attn(r, kGen, generator_, generator_taps_, i++, c);
    add_res(r, kGen, generator_, generator_taps_, i++, c, c);
    fuse_.resize(size_t(s.levels));
    for (int l = s.levels - 1; l >= 0; --l) {
      for (int b = 0; b < s.res_blocks; ++b) {
        add_res(r, kGen, generator_, generator_taps_, i++, c, s.widths[size_t(l)]);
        c = s.widths[size_t(l)];
        // Fused after the level's first residual block; at the latent's size after its last
        // (upstream's fuse_generator_block table at the released sizes).
        const bool tap = l == s.levels - 1 ? b == s.res_blocks - 1 : b == 0;
        if (tap && s.fused[size_t(l)]) {
          generator_taps_.back() = l;
          fuse_[size_t(l)] = read_fuse(r, str(kFuse, s.size_at(l), "."), c);
        }
        if (s.attn[size_t(l)]) add_attn(r, kGen, generator_, generator_taps_, i++, c);
      }
      if (l != 0) add_resample(r, kGen, generator_, generator_taps_, i++, c, Block::Up);
    }
    generator_norm_ = read_group_norm(r, str(kGen, i++), c);
    generator_out_ = read_conv(r, str(kGen, i), c, 3, 3);
  }

  void read_transformer(WeightReader& r) {
    const Shape& s = shape_;
    const int64_t side = s.size_at(s.levels - 1);
    position_ = r.tensor("position_emb", {side * side, s.dim});
    feat_emb_ = read_linear(r, "feat_emb", s.emb, s.dim);
    for (int l = 0; l < s.layers; ++l) {
      const std::string p = str("ft_layers.", l, ".");
      TransformerLayer t;
      t.attn = read_multihead_attention(r, p + "self_attn", s.dim, kHeads);
      t.fc1 = read_linear(r, p + "linear1", s.dim, s.mlp);
      t.fc2 = read_linear(r, p + "linear2", s.mlp, s.dim);
      t.norm1 = read_layer_norm(r, p + "norm1", s.dim);
      t.norm2 = read_layer_norm(r, p + "norm2", s.dim);
      layers_.push_back(t);
    }
    idx_norm_ = read_layer_norm(r, "idx_pred_layer.0", s.dim);
    idx_weight_ = r.tensor("idx_pred_layer.1.weight", {s.codebook, s.dim});
    codebook_ = r.tensor("quantize.embedding.weight", {s.codebook, s.emb});
  }

  static void add_res(WeightReader& r, const std::string& list, std::vector<Block>& blocks, std::vector<int>& taps, int i, int64_t in,
                      int64_t out) {
    Block b;
    b.res = read_res_block(r, str(list, i, "."), in, out);
    blocks.push_back(b);
    taps.push_back(-1);
  }
  static void add_attn(WeightReader& r, const std::string& list, std::vector<Block>& blocks, std::vector<int>& taps, int i, int64_t c) {
    Block b;
    b.kind = Block::Attn;
    b.attn = read_attn_block(r, str(list, i, "."), c);
    blocks.push_back(b);
    taps.push_back(-1);
  }
  static void add_resample(WeightReader& r, const std::string& list, std::vector<Block>& blocks, std::vector<int>& taps, int i, int64_t c,
                           Block::Kind kind) {
    Block b;
    b.kind = kind;
    b.conv = read_conv(r, str(list, i, ".conv"), c, c, 3, kind == Block::Down ? 2 : 1, kind == Block::Down ? 0 : 1);
    blocks.push_back(b);
    taps.push_back(-1);
  }

  static FuseBlock read_fuse(WeightReader& r, const std::string& p, int64_t c) {
    FuseBlock f;
    f.encode = read_res_block(r, p + "encode_enc.", 2 * c, c);
    f.scale1 = read_conv(r, p + "scale.0", c, c, 3);
    f.scale2 = read_conv(r, p + "scale.2", c, c, 3);
    f.shift1 = read_conv(r, p + "shift.0", c, c, 3);
    f.shift2 = read_conv(r, p + "shift.2", c, c, 3);
    return f;
  }

  Shape shape_;
  double fidelity_ = kDefaultFidelity;
  Conv2d encoder_in_, encoder_out_, generator_in_, generator_out_;
  GroupNorm encoder_norm_, generator_norm_;
  std::vector<Block> encoder_, generator_;
  // Per block: the level whose feature is taken after it (encoder) or fused after it (generator); -1 none.
  std::vector<int> encoder_taps_, generator_taps_;
  std::vector<FuseBlock> fuse_;  // by level; empty where that size is not fused
  at::Tensor position_, codebook_, idx_weight_;
  Linear feat_emb_;
  std::vector<TransformerLayer> layers_;
  LayerNorm idx_norm_;
};

// The encoder's block list, read off its keys: R a residual block (its output width), A an
// attention block, D a downsampling step, N the closing GroupNorm.
struct EncoderBlock {
  char kind;
  int64_t width = 0;
};

std::vector<EncoderBlock> encoder_blocks(const weights::StateDict& dict) {
  std::vector<EncoderBlock> out;
  for (int i = 1;; ++i) {
    const std::string p = str(kEnc, i, ".");
    if (const auto w = dim_of(dict, p + "conv1.weight", 4, 0)) out.push_back({'R', *w});
    else if (dict.count(p + "q.weight")) out.push_back({'A'});
    else if (dict.count(p + "conv.weight")) out.push_back({'D'});
    else {
      if (dim_of(dict, p + "weight", 1, 0)) out.push_back({'N'});
      return out;
    }
  }
}

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  if (!has_keys(dict, {"position_emb", "idx_pred_layer.1.weight", "quantize.embedding.weight", "ft_layers.0.self_attn.in_proj_weight",
                       kEnc + "0.weight"}))
    return std::nullopt;
  const auto fail = [&](const std::string& what) { return Error(ErrorKind::Model, str(source, ": CodeFormer layout: ", what)); };
  const auto nf = dim_of(dict, kEnc + "0.weight", 4, 0), in = dim_of(dict, kEnc + "0.weight", 4, 1);
  const auto latent = dim_of(dict, "position_emb", 2, 0), dim = dim_of(dict, "position_emb", 2, 1);
  const auto codebook = dim_of(dict, "quantize.embedding.weight", 2, 0), emb = dim_of(dict, "quantize.embedding.weight", 2, 1);
  const auto mlp = dim_of(dict, "ft_layers.0.linear1.weight", 2, 0);
  if (!nf || !in || !latent || !dim || !codebook || !emb || !mlp) throw fail("a tensor it is sized by is missing or not of its rank");
  if (*in != 3) throw fail(str("encoder.blocks.0 takes ", *in, " channels, not RGB"));
  DetectedArch d;
  d.arch = "codeformer";
  d.params["nf"] = double(*nf);
  d.params["emb_dim"] = double(*emb);
  d.params["codebook"] = double(*codebook);
  d.params["dim_embd"] = double(*dim);
  d.params["mlp"] = double(*mlp);
  d.params["layers"] = double(key_indices(dict, "ft_layers.").size());
  d.params["latent"] = double(*latent);
  arch::check_shapes("codeformer", d.params, source);

  // Levels: residual blocks (each followed by attention, or none is), a downsampling step between
  // them; then the middle residual, attention, residual blocks and the closing norm.
  std::vector<EncoderBlock> blocks = encoder_blocks(dict);
  const auto is = [&](size_t from, const char* kinds) {
    for (size_t j = 0; kinds[j]; ++j)
      if (from + j >= blocks.size() || blocks[from + j].kind != kinds[j]) return false;
    return true;
  };
  if (blocks.size() < 4 || !is(blocks.size() - 4, "RARN")) throw fail("the encoder does not end in residual, attention, residual blocks and a GroupNorm");
  blocks.resize(blocks.size() - 4);
  std::vector<int64_t> widths;
  std::vector<bool> attn;
  int res_blocks = 0;
  for (size_t j = 0;;) {
    const size_t start = j;
    int count = 0;
    bool with_attn = false;
    for (; j < blocks.size() && blocks[j].kind == 'R'; ++count) {
      if (blocks[j].width != blocks[start].width) throw fail(str("encoder level ", widths.size(), " changes width inside"));
      const bool a = ++j < blocks.size() && blocks[j].kind == 'A';
      if (count && a != with_attn) throw fail(str("encoder level ", widths.size(), " has attention after some residual blocks only"));
      with_attn = a;
      if (a) ++j;
    }
    if (!count) throw fail(str("encoder level ", widths.size(), " has no residual block (block ", start + 1, ")"));
    if (res_blocks && count != res_blocks) throw fail(str("encoder level ", widths.size(), " has ", count, " residual blocks, level 0 ", res_blocks));
    res_blocks = count;
    widths.push_back(blocks[start].width);
    attn.push_back(with_attn);
    if (j == blocks.size()) break;
    if (blocks[j].kind != 'D') throw fail(str("encoder block ", j + 1, " is not a downsampling step between levels"));
    if (widths.size() == kMaxLevels) throw fail(str("more than ", kMaxLevels, " encoder levels"));
    ++j;
  }
  const auto side = int64_t(std::llround(std::sqrt(double(*latent))));
  if (side * side != *latent) throw fail(str("position_emb has ", *latent, " rows, not a square latent"));
  const int levels = int(widths.size());
  d.params["levels"] = levels;
  d.params["res_blocks"] = res_blocks;
  d.params["face_size"] = double(side << (levels - 1));
  for (int l = 0; l < levels; ++l) {
    d.params[str("width", l)] = double(widths[size_t(l)]);
    d.params[str("attn", l)] = attn[size_t(l)] ? 1 : 0;
  }
  for (int l = 0; l < levels; ++l) {
    const int64_t size = side << (levels - 1 - l);
    if (dict.count(str(kFuse, size, ".scale.0.weight"))) d.params[str("fuse", size)] = 1;
  }
  arch::check_shapes("codeformer", d.params, source);
  d.scale = 1;
  d.in_channels = 3;
  d.out_channels = 3;
  return d;
}

}  // namespace

Architecture codeformer_architecture() {
  return {"codeformer", detect, [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return face_crops_only(std::make_unique<CodeFormer>(dict, d, source), source);
          }};
}

}  // namespace framelift::models
