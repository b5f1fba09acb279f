// RestoreFormer (Wang et al., CVPR 2022) and RestoreFormer++ (TPAMI 2023), face restorers of
// wzhouxiff/RestoreFormerPlusPlus, whose VQVAEGANMultiHeadTransformer builds both: a VQGAN
// encoder (levels of GroupNorm/swish residual blocks, a stride-2 convolution between levels,
// multi-head self-attention at the 16x16 level and in the middle blocks), a codebook looked up by
// nearest code, and a decoder whose attention blocks are cross-attention: queries from the
// degraded face's encoder features, keys and values from the decoder's (codebook-born) ones. The
// two differ in where the decoder attends (RestoreFormer at 16x16, RestoreFormer++ also at 32x32)
// and in head count, which no shape holds: upstream's inference (RestoreFormer/RestoreFormer.py)
// builds RestoreFormer with head_size 8 and RestoreFormer++ with 4, so the detected variant says.
//
// Layout: the keys of VQVAEGANMultiHeadTransformer ("encoder.down.0.block.0.norm1.weight"), plain
// (the original repository's RestoreFormer.pth, spandrel's layout) or as the released .ckpt files
// hold them, "vqvae."-prefixed in a Lightning state_dict beside the training losses' modules,
// which are not the network's (upstream loads them non-strictly). The face size is not stored
// either: the encoder attends at 16x16 (attn_resolutions [16] in every released config), so the
// level it attends at says it (512 for the releases).
//
// Input [N, 3, S, S] in [0, 1], output (y + 1) / 2 of the [-1, 1] image (models/face_restorer.h).
// The code lookup is an argmin over distances: it runs in fp32 whatever the model's precision.
#include <ATen/ATen.h>

#include <cmath>
#include <set>

#include "arch/declaration.h"
#include "infer/fp32_islands.h"
#include "models/builtin_architectures.h"
#include "models/face_restorer.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "models/vqgan_blocks.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr int64_t kAttnResolution = 16;
constexpr int kMaxLevels = 8;
const std::string kLightning = "vqvae.";

// The released .ckpt's network keys without their prefix; a plain dict as it is.
weights::StateDict network_keys(const weights::StateDict& dict) {
  if (!dict.count(kLightning + "quantize.embedding.weight")) return dict;
  weights::StateDict out;
  for (const auto& [key, t] : dict)
    if (key.rfind(kLightning, 0) == 0) out[key.substr(kLightning.size())] = t;
  return out;
}

using GroupNorm = VqganGroupNorm;
using ResBlock = VqganResBlock;

GroupNorm read_group_norm(WeightReader& r, const std::string& p, int64_t c) { return read_vqgan_group_norm(r, p, c); }

ResBlock read_res_block(WeightReader& r, const std::string& p, int64_t in, int64_t out) {
  return read_vqgan_res_block(r, p, in, out, "nin_shortcut");
}

// Heads are groups of c / heads consecutive channels. With `y`, queries come from norm2(y) and
// keys and values from norm1(x); without, all three from norm1(x), and norm2 is unused (upstream
// builds it in every block).
struct AttnBlock {
  GroupNorm norm1, norm2;
  Conv2d q, k, v, proj;
  int64_t heads = 1;
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& y = {}) const {
    const at::Tensor h = norm1(x), src = y.defined() ? norm2(y) : h;
    const int64_t n = x.size(0), c = x.size(1), t = x.size(2) * x.size(3), d = c / heads;
    const auto split = [&](const at::Tensor& f) { return f.reshape({n, heads, d, t}); };  // [N, heads, d, HW]
    const at::Tensor qh = split(q(src)).transpose(2, 3) * std::pow(double(d), -0.5);
    const at::Tensor a = at::softmax(at::matmul(qh, split(k(h))), -1);
    const at::Tensor o = at::matmul(a, split(v(h)).transpose(2, 3));  // [N, heads, HW, d]
    return x + proj(o.transpose(2, 3).reshape(x.sizes()));
  }
};

AttnBlock read_attn(WeightReader& r, const std::string& p, int64_t c, int64_t heads) {
  AttnBlock a;
  a.norm1 = read_group_norm(r, p + ".norm1", c);
  a.norm2 = read_group_norm(r, p + ".norm2", c);
  a.q = read_conv(r, p + ".q", c, c, 1);
  a.k = read_conv(r, p + ".k", c, c, 1);
  a.v = read_conv(r, p + ".v", c, c, 1);
  a.proj = read_conv(r, p + ".proj_out", c, c, 1);
  a.heads = heads;
  return a;
}

struct Level {
  std::vector<ResBlock> blocks;
  std::vector<AttnBlock> attn;  // one after each block, or none
  Conv2d resample;              // to the next level (undefined at the last)
};

struct Middle {
  ResBlock block1, block2;
  AttnBlock attn;
};

struct Shape {
  int64_t ch = 64, z = 256, embed = 256, codes = 1024, heads = 4, face = 512;
  std::vector<int64_t> widths;
  int blocks = 2, attn_level = 5;
  std::set<int> decoder_attn;  // the decoder's attending levels
};

Shape shape_of(const DetectedArch& d) {
  Shape s;
  s.ch = int64_t(d.params.get("ch", 64));
  for (int i = 0; i < int(d.params.get("levels", 6)); ++i) s.widths.push_back(s.ch * int64_t(d.params.get(str("mult", i), 1)));
  s.blocks = int(d.params.get("blocks", 2));
  s.z = int64_t(d.params.get("z_channels", 256));
  s.embed = int64_t(d.params.get("embed_dim", 256));
  s.codes = int64_t(d.params.get("n_embed", 1024));
  s.heads = int64_t(d.params.get("heads", 4));
  s.face = int64_t(d.params.get("face_size", 512));
  s.attn_level = int(std::log2(double(s.face / kAttnResolution)));
  for (int i = 0; i < int(d.params.get("decoder_attn_levels", 2)); ++i) s.decoder_attn.insert(s.attn_level - i);
  return s;
}

class RestoreFormer : public NativeModel {
 public:
  RestoreFormer(const weights::StateDict& dict, const DetectedArch& d, const std::string& source)
      : NativeModel(declared_info(d), source), shape_(shape_of(d)) {
    WeightReader r(dict, source);
    read_encoder(r);
    codebook_ = r.tensor("quantize.embedding.weight", {shape_.codes, shape_.embed});
    quant_ = read_conv(r, "quant_conv", shape_.z, shape_.embed, 1);
    post_quant_ = read_conv(r, "post_quant_conv", shape_.embed, shape_.z, 1);
    read_decoder(r);
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    const int last = int(shape_.widths.size()) - 1;
    // The encoder's features the decoder's attention takes its queries from: each level's
    // output (before its downsampling), the lowest level's after the first middle block
    // (upstream's hs["block_L_atten"]), and the middle's output for the decoder's middle.
    std::vector<at::Tensor> skips(size_t(last + 1));
    at::Tensor h = enc_in_(input * 2 - 1);
    for (int i = 0; i <= last; ++i) {
      h = run_level(enc_[size_t(i)], h, {});
      if (i < last) {
        skips[size_t(i)] = h;
        h = enc_[size_t(i)].resample(at::constant_pad_nd(h, {0, 1, 0, 1}, 0));
      }
    }
    h = enc_mid_.block1(h);
    skips[size_t(last)] = h;
    const at::Tensor mid = enc_mid_.block2(enc_mid_.attn(h));
    h = enc_out_(at::silu(enc_norm_(mid)));

    h = dec_in_(post_quant_(quantized(quant_(h))));
    h = dec_mid_.block2(dec_mid_.attn(dec_mid_.block1(h), mid));
    for (int i = last; i >= 0; --i) {
      h = run_level(dec_[size_t(i)], h, skips[size_t(i)]);
      skips[size_t(i)].reset();
      if (i > 0) h = dec_[size_t(i)].resample(upsample_nearest(h, 2));
    }
    return (dec_out_(at::silu(dec_norm_(h))) + 1) / 2;
  }

  void visit_weights(const TensorVisitor& f) override {
    const auto norm = [&](GroupNorm& g) {
      f(g.weight);
      f(g.bias);
    };
    const auto block = [&](ResBlock& b) { b.visit_weights(f); };
    const auto attn = [&](AttnBlock& a) {
      norm(a.norm1);
      norm(a.norm2);
      for (Conv2d* c : {&a.q, &a.k, &a.v, &a.proj}) visit(*c, f);
    };
    for (auto* levels : {&enc_, &dec_})
      for (Level& l : *levels) {
        for (ResBlock& b : l.blocks) block(b);
        for (AttnBlock& a : l.attn) attn(a);
        if (l.resample.weight.defined()) visit(l.resample, f);
      }
    for (Middle* m : {&enc_mid_, &dec_mid_}) {
      block(m->block1);
      block(m->block2);
      attn(m->attn);
    }
    for (Conv2d* c : {&enc_in_, &enc_out_, &quant_, &post_quant_, &dec_in_, &dec_out_}) visit(*c, f);
    norm(enc_norm_);
    norm(dec_norm_);
    // The codebook follows the model to its device but stays fp32: a bf16 latent's distances to
    // bf16 codes would pick other codes where two are near (each pick changes a whole patch).
    at::Tensor moved = codebook_;
    f(moved);
    codebook_ = codebook_.to(moved.device());
  }

 private:
  static at::Tensor run_level(const Level& l, at::Tensor h, const at::Tensor& queries) {
    for (size_t b = 0; b < l.blocks.size(); ++b) {
      h = l.blocks[b](h);
      if (!l.attn.empty()) h = l.attn[b](h, queries);
    }
    return h;
  }

  // Each latent pixel replaced by its nearest code, as upstream's VectorQuantizer computes the
  // distances (|z|^2 + |e|^2 - 2 z.e) and its straight-through output (z + (e - z)).
  at::Tensor quantized(const at::Tensor& latent) const {
    const at::Tensor z = latent.to(at::kFloat).permute({0, 2, 3, 1});
    const at::Tensor flat = z.reshape({-1, shape_.embed});
    const at::Tensor d = flat.pow(2).sum(1, true) + codebook_.pow(2).sum(1) - 2 * at::matmul(flat, codebook_.t());
    const at::Tensor codes = codebook_.index_select(0, std::get<1>(d.min(1))).view(z.sizes());
    return (z + (codes - z)).permute({0, 3, 1, 2}).to(latent.scalar_type());
  }

  Middle read_middle(WeightReader& r, const std::string& p) {
    const int64_t c = shape_.widths.back();
    return {read_res_block(r, p + "block_1", c, c), read_res_block(r, p + "block_2", c, c), read_attn(r, p + "attn_1", c, shape_.heads)};
  }

  void read_encoder(WeightReader& r) {
    const Shape& s = shape_;
    const int levels = int(s.widths.size());
    enc_in_ = read_conv(r, "encoder.conv_in", 3, s.ch, 3);
    int64_t in = s.ch;
    for (int i = 0; i < levels; ++i) {
      const std::string p = str("encoder.down.", i, ".");
      const int64_t out = s.widths[size_t(i)];
      Level l;
      for (int b = 0; b < s.blocks; ++b) {
        l.blocks.push_back(read_res_block(r, str(p, "block.", b), in, out));
        in = out;
        if (i == s.attn_level) l.attn.push_back(read_attn(r, str(p, "attn.", b), out, s.heads));
      }
      if (i < levels - 1) l.resample = read_conv(r, p + "downsample.conv", out, out, 3, 2, 0);
      enc_.push_back(std::move(l));
    }
    enc_mid_ = read_middle(r, "encoder.mid.");
    enc_norm_ = read_group_norm(r, "encoder.norm_out", in);
    enc_out_ = read_conv(r, "encoder.conv_out", in, s.z, 3);
  }

  void read_decoder(WeightReader& r) {
    const Shape& s = shape_;
    const int levels = int(s.widths.size());
    int64_t in = s.widths.back();
    dec_in_ = read_conv(r, "decoder.conv_in", s.z, in, 3);
    dec_mid_ = read_middle(r, "decoder.mid.");
    dec_.resize(size_t(levels));
    for (int i = levels - 1; i >= 0; --i) {
      const std::string p = str("decoder.up.", i, ".");
      const int64_t out = s.widths[size_t(i)];
      Level& l = dec_[size_t(i)];
      for (int b = 0; b <= s.blocks; ++b) {
        l.blocks.push_back(read_res_block(r, str(p, "block.", b), in, out));
        in = out;
        if (s.decoder_attn.count(i)) l.attn.push_back(read_attn(r, str(p, "attn.", b), out, s.heads));
      }
      if (i > 0) l.resample = read_conv(r, p + "upsample.conv", out, out, 3);
    }
    dec_norm_ = read_group_norm(r, "decoder.norm_out", in);
    dec_out_ = read_conv(r, "decoder.conv_out", in, 3, 3);
  }

  Shape shape_;
  Conv2d enc_in_, enc_out_, quant_, post_quant_, dec_in_, dec_out_;
  std::vector<Level> enc_, dec_;
  Middle enc_mid_, dec_mid_;
  GroupNorm enc_norm_, dec_norm_;
  at::Tensor codebook_;  // [codes, embed], fp32
};

// Levels (by index) whose "<prefix>N.attn.0.norm1.weight" exists.
std::set<int> attending_levels(const weights::StateDict& dict, const std::string& prefix, int levels) {
  std::set<int> out;
  for (int i = 0; i < levels; ++i)
    if (dict.count(str(prefix, i, ".attn.0.norm1.weight"))) out.insert(i);
  return out;
}

std::optional<DetectedArch> detect(const weights::StateDict& raw, const std::string& source) {
  const weights::StateDict dict = network_keys(raw);
  if (!has_keys(dict, {"quantize.embedding.weight", "quant_conv.weight", "post_quant_conv.weight", "encoder.conv_in.weight",
                       "encoder.down.0.block.0.norm1.weight", "decoder.up.0.block.0.norm1.weight", "decoder.conv_out.weight"}))
    return std::nullopt;
  const auto fail = [&](const std::string& what) { return Error(ErrorKind::Model, str(source, ": RestoreFormer layout: ", what)); };
  if (!dict.count("encoder.mid.block_1.norm1.weight") || !dict.count("decoder.mid.attn_1.q.weight"))
    throw fail("no middle blocks (enable_mid false): upstream's decoder cannot run without the encoder's middle features");
  const auto ch = dim_of(dict, "encoder.conv_in.weight", 4, 0), in = dim_of(dict, "encoder.conv_in.weight", 4, 1);
  const auto codes = dim_of(dict, "quantize.embedding.weight", 2, 0), embed = dim_of(dict, "quantize.embedding.weight", 2, 1);
  const auto z = dim_of(dict, "quant_conv.weight", 4, 1), out = dim_of(dict, "decoder.conv_out.weight", 4, 0);
  const auto enc_out = dim_of(dict, "encoder.conv_out.weight", 4, 0);
  if (!ch || !in || !codes || !embed || !z || !out || !enc_out) throw fail("a stem, codebook or output tensor is missing or not of its rank");
  if (*in != 3 || *out != 3) throw fail(str(*in, " channels in and ", *out, " out (RGB faces take 3 and give 3)"));
  if (*enc_out != *z) throw fail(str("the encoder gives ", *enc_out, " channels to a quant_conv of ", *z, " (double_z is not supported)"));
  const int levels = int(key_indices(dict, "encoder.down.").size());
  if (levels < 1 || levels > kMaxLevels) throw fail(str(levels, " encoder levels (1 to ", kMaxLevels, ")"));
  DetectedArch d;
  d.arch = "restoreformer";
  d.params["ch"] = double(*ch);
  d.params["levels"] = levels;
  for (int i = 0; i < levels; ++i) {
    const auto w = dim_of(dict, str("encoder.down.", i, ".block.0.conv2.weight"), 4, 0);
    if (!w || *ch < 1 || *w < *ch || *w % *ch) throw fail(str("encoder level ", i, " has no width that is a multiple of ch ", *ch));
    d.params[str("mult", i)] = double(*w / *ch);
  }
  d.params["blocks"] = double(key_indices(dict, "encoder.down.0.block.").size());
  d.params["z_channels"] = double(*z);
  d.params["embed_dim"] = double(*embed);
  d.params["n_embed"] = double(*codes);
  const std::set<int> enc_attn = attending_levels(dict, "encoder.down.", levels), dec_attn = attending_levels(dict, "decoder.up.", levels);
  if (enc_attn.size() != 1)
    throw fail(str("the encoder attends at ", enc_attn.size(), " levels; the face size is read off the one it attends at (16x16)"));
  const int k = *enc_attn.begin();
  d.params["face_size"] = double(kAttnResolution << k);
  const bool plus = dec_attn == std::set<int>{k, k - 1};
  if (dec_attn != std::set<int>{k} && !plus)
    throw fail(str("the decoder attends at levels other than the encoder's (", k, ") or it and the next larger (RestoreFormer++)"));
  d.params["decoder_attn_levels"] = plus ? 2 : 1;
  d.params["heads"] = plus ? 4 : 8;  // upstream's inference; not in the weights
  d.variant = plus ? "RestoreFormer++" : "RestoreFormer";
  arch::check_shapes(d.arch, d.params, source);
  return d;
}

}  // namespace

Architecture restoreformer_architecture() {
  return {"restoreformer", detect, [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return face_crops_only(std::make_unique<RestoreFormer>(network_keys(dict), d, source), source);
          }};
}

}  // namespace framelift::models
