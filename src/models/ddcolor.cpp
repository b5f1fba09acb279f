// DDColor (Kang et al. 2023, "DDColor: Towards Photo-Realistic Image Colorization via Dual
// Decoders"), the colorization network of the restoration guides, as spandrel loads piddnad's
// releases (ddcolor_paper, _modelscope, _artistic: ConvNeXt-L; ddcolor_paper_tiny: ConvNeXt-T).
// A ConvNeXt encoder whose four stages are read through extra LayerNorms (norm0..norm3, the
// "hooks"); a pixel decoder of three U-Net blocks (a 1x1 convolution, pixel shuffle 2 and a blur
// up, the encoder's feature beside it, a 3x3) from 1/32 to 1/4 of the input's size, and a 4x
// pixel shuffle from there to the input's size; a colour decoder of learned queries that attend (cross-attention, then self-
// attention, then an MLP, post-norm) to the three decoder scales in turn; each query's embedding
// dotted with the last decoder features makes a map, and a 1x1 convolution of the maps and the
// normalised input gives the output (ab chroma, 2 channels).
//
// Convolutions are spectrally normalised (weight_orig / sigma, sigma = u . W v from the stored
// u and v, as torch's spectral_norm computes it outside training), the last upsampler's is
// weight-normalised (g v / |v|) or spectral or batch-normalised; all is resolved to plain
// weights at load. Input [N, 3, H, W] in [0, 1] (the grey frame as RGB), H and W multiples of 32;
// output [N, 2, H, W]. Queries attend over the whole frame: untiled.
#include <ATen/ATen.h>

#include <cmath>

#include "arch/declaration.h"
#include "infer/fp32_islands.h"
#include "models/builtin_architectures.h"
#include "models/multihead_attention.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "models/token_layers.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr int64_t kHeads = 8;  // nn.MultiheadAttention(hidden, 8) upstream; not in the weights
constexpr int64_t kMaxWidth = 8192;

const std::string kEnc = "encoder.arch.", kDec = "decoder.", kColor = "decoder.color_decoder.";

// A spectrally normalised convolution as torch computes it in eval mode.
Conv2d read_spectral_conv(WeightReader& r, const std::string& p, int64_t in, int64_t out, int64_t k, bool bias) {
  Conv2d c;
  const at::Tensor w = r.tensor(p + ".weight_orig", {out, in, k, k});
  const at::Tensor u = r.tensor(p + ".weight_u", {out}), v = r.tensor(p + ".weight_v", {in * k * k});
  c.weight = w / at::dot(u, at::mv(w.reshape({out, -1}), v));
  if (bias) c.bias = r.tensor(p + ".bias", {out});
  c.padding = (k - 1) / 2;
  return c;
}

Conv2d folded(Conv2d c, const BatchNorm2d& bn) {
  c.weight = c.weight * bn.scale.view({-1, 1, 1, 1});
  c.bias = c.bias.defined() ? c.bias * bn.scale + bn.shift : bn.shift;
  return c;
}

// Pixel shuffle by `scale`, then fastai's blur: replicate one pixel left and top, 2x2 average.
at::Tensor shuffle_blur(const at::Tensor& x, int64_t scale) {
  const at::Tensor y = at::pixel_shuffle(x, scale);
  return at::avg_pool2d(infer::replicate_pad2d(y, {1, 0, 1, 0}), {2, 2}, {1, 1});
}

struct ConvNextBlock {
  Conv2d dw;  // 7x7 depthwise
  at::Tensor norm_w, norm_b, gamma;
  Linear fc1, fc2;
  at::Tensor operator()(const at::Tensor& x) const {
    at::Tensor y = depthwise(dw, x).permute({0, 2, 3, 1});
    y = infer::layer_norm(y, {norm_w.size(0)}, norm_w, norm_b, 1e-6);
    y = fc2(at::gelu(fc1(y))) * gamma;
    return x + y.permute({0, 3, 1, 2});
  }
};

struct UnetBlock {
  Conv2d up;        // 1x1 to 4 n_out, its BatchNorm folded, then ReLU, shuffle 2, blur
  BatchNorm2d skip_norm; // BatchNorm of the encoder's feature
  Conv2d conv;      // 3x3, then ReLU and a BatchNorm (after the ReLU: not folded)
  BatchNorm2d conv_norm;
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& skip) const {
    const at::Tensor u = shuffle_blur(at::relu(up(x)), 2);
    return conv_norm(at::relu(conv(at::relu(at::cat({u, skip_norm(skip)}, 1)))));
  }
};

using Attention = MultiheadAttention;

Attention read_attention(WeightReader& r, const std::string& p, int64_t c) { return read_multihead_attention(r, p, c, kHeads); }

struct DecoderLayer {
  Attention cross, self;
  LayerNorm cross_norm, self_norm, ffn_norm;
  Linear fc1, fc2;
};

// DETR's sine position embedding (normalised, 2 pi), [1, H W, 2 F] for F = hidden / 2: y's
// then x's, each sin on even and cos on odd features.
at::Tensor sine_positions(int64_t h, int64_t w, int64_t features, const at::TensorOptions& options) {
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  const at::Tensor y = (at::arange(1, h + 1, f32) / (double(h) + 1e-6) * (2 * M_PI)).view({h, 1, 1}).expand({h, w, 1});
  const at::Tensor x = (at::arange(1, w + 1, f32) / (double(w) + 1e-6) * (2 * M_PI)).view({1, w, 1}).expand({h, w, 1});
  const at::Tensor dim_t = at::pow(10000.0, 2 * at::floor_divide(at::arange(features, f32), 2) / double(features));
  const auto encode = [&](const at::Tensor& e) {
    const at::Tensor p = e / dim_t;  // [h, w, F]
    at::Tensor out = p.clone();
    out.slice(2, 0, features, 2).sin_();
    out.slice(2, 1, features, 2).cos_();
    return out;
  };
  return at::cat({encode(y), encode(x)}, 2).view({1, h * w, 2 * features}).to(options);
}

struct Shape {
  std::array<int64_t, 4> dims{}, depths{};
  int64_t nf = 512, queries = 256, hidden = 256, ffn = 2048, color = 256, out = 2;
  int scales = 3, layers = 9, last_norm = 0;  // 0 weight, 1 spectral, 2 batch
};

Shape shape_of(const DetectedArch& d) {
  Shape s;
  for (int i = 0; i < 4; ++i) {
    s.dims[size_t(i)] = int64_t(d.params.get(str("dim", i), 0));
    s.depths[size_t(i)] = int64_t(d.params.get(str("depth", i), 0));
  }
  s.nf = int64_t(d.params.get("nf", 512));
  s.queries = int64_t(d.params.get("queries", 256));
  s.hidden = int64_t(d.params.get("hidden", 256));
  s.ffn = int64_t(d.params.get("ffn", 2048));
  s.color = int64_t(d.params.get("color_dim", 256));
  s.scales = int(d.params.get("scales", 3));
  s.layers = int(d.params.get("layers", 9));
  s.last_norm = int(d.params.get("last_norm", 0));
  s.out = d.out_channels;
  return s;
}

class DDColor : public NativeModel {
 public:
  DDColor(const weights::StateDict& dict, const DetectedArch& d, const std::string& source)
      : NativeModel(declared_info(d), source), shape_(shape_of(d)) {
    WeightReader r(dict, source);
    const Shape& s = shape_;
    mean_ = r.tensor("mean", {1, 3, 1, 1});
    std_ = r.tensor("std", {1, 3, 1, 1});
    read_encoder(r);
    const std::array<int64_t, 3> skips{s.dims[2], s.dims[1], s.dims[0]};
    int64_t in = s.dims[3];
    for (int i = 0; i < 3; ++i) {
      const std::string p = str(kDec, "layers.", i, ".");
      const int64_t out = i == 2 ? s.nf / 2 : s.nf;
      UnetBlock b;
      b.up = folded(read_spectral_conv(r, p + "shuf.conv.0", in, 4 * out, 1, false), read_batch_norm(r, p + "shuf.conv.1", 4 * out));
      b.skip_norm = read_batch_norm(r, p + "bn", skips[size_t(i)]);
      b.conv = read_spectral_conv(r, p + "conv.0", out + skips[size_t(i)], out, 3, false);
      b.conv_norm = read_batch_norm(r, p + "conv.2", out);
      unet_.push_back(b);
      level_channels_.push_back(out);
      in = out;
    }
    read_last_shuffle(r);
    read_color_decoder(r);
    refine_ = read_spectral_conv(r, "refine_net.0.0", s.queries + 3, s.out, 1, true);
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    const at::Tensor x = (input - mean_.to(input.options())) / std_.to(input.options());
    std::array<at::Tensor, 4> hooks;
    at::Tensor y = x;
    for (size_t i = 0; i < 4; ++i) {
      y = i == 0 ? stem_norm_(stem_(y)) : down_[i - 1](down_norm_[i - 1](y));
      for (const ConvNextBlock& b : stages_[i]) y = b(y);
      hooks[i] = hook_norm_[i](y);
    }
    std::vector<at::Tensor> levels;
    at::Tensor f = hooks[3];
    for (size_t i = 0; i < 3; ++i) levels.push_back(f = unet_[i](f, hooks[2 - i]));
    const at::Tensor image_features = shuffle_blur(at::relu(last_(f)), 4);
    const at::Tensor maps = color_maps(levels, image_features);
    return refine_(at::cat({maps, x}, 1));
  }

  void visit_weights(const TensorVisitor& f) override {
    const auto norm = [&](ChannelNorm& n) { n.visit_weights(f); };
    const auto affine = [&](BatchNorm2d& a) {
      f(a.scale);
      f(a.shift);
    };
    f(mean_);
    f(std_);
    visit(stem_, f);
    norm(stem_norm_);
    for (Conv2d& c : down_) visit(c, f);
    for (ChannelNorm& n : down_norm_) norm(n);
    for (ChannelNorm& n : hook_norm_) norm(n);
    for (auto& stage : stages_)
      for (ConvNextBlock& b : stage) {
        visit(b.dw, f);
        for (at::Tensor* t : {&b.norm_w, &b.norm_b, &b.gamma}) f(*t);
        b.fc1.visit_weights(f);
        b.fc2.visit_weights(f);
      }
    for (UnetBlock& b : unet_) {
      visit(b.up, f);
      visit(b.conv, f);
      affine(b.skip_norm);
      affine(b.conv_norm);
    }
    visit(last_, f);
    for (Conv2d& c : input_proj_) visit(c, f);
    for (at::Tensor* t : {&level_embed_, &query_feat_, &query_embed_}) f(*t);
    for (DecoderLayer& l : layers_) {
      for (Attention* a : {&l.cross, &l.self}) a->visit_weights(f);
      for (LayerNorm* n : {&l.cross_norm, &l.self_norm, &l.ffn_norm}) n->visit_weights(f);
      l.fc1.visit_weights(f);
      l.fc2.visit_weights(f);
    }
    decoder_norm_.visit_weights(f);
    for (Linear& l : color_embed_) l.visit_weights(f);
    visit(refine_, f);
  }

 private:
  void read_encoder(WeightReader& r) {
    const Shape& s = shape_;
    stem_ = read_conv(r, kEnc + "downsample_layers.0.0", 3, s.dims[0], 4, 4, 0);
    stem_norm_ = read_channel_norm(r, kEnc + "downsample_layers.0.1", s.dims[0]);
    for (int i = 1; i < 4; ++i) {
      const std::string p = str(kEnc, "downsample_layers.", i);
      down_norm_.push_back(read_channel_norm(r, p + ".0", s.dims[size_t(i - 1)]));
      down_.push_back(read_conv(r, p + ".1", s.dims[size_t(i - 1)], s.dims[size_t(i)], 2, 2, 0));
    }
    for (int i = 0; i < 4; ++i) {
      const int64_t c = s.dims[size_t(i)];
      std::vector<ConvNextBlock> stage;
      for (int j = 0; j < s.depths[size_t(i)]; ++j) {
        const std::string p = str(kEnc, "stages.", i, ".", j, ".");
        ConvNextBlock b;
        b.dw.weight = r.tensor(p + "dwconv.weight", {c, 1, 7, 7});
        b.dw.bias = r.tensor(p + "dwconv.bias", {c});
        b.dw.padding = 3;
        b.norm_w = r.tensor(p + "norm.weight", {c});
        b.norm_b = r.tensor(p + "norm.bias", {c});
        b.fc1 = read_linear(r, p + "pwconv1", c, 4 * c);
        b.fc2 = read_linear(r, p + "pwconv2", 4 * c, c);
        b.gamma = r.tensor(p + "gamma", {c});
        stage.push_back(b);
      }
      stages_[size_t(i)] = std::move(stage);
      hook_norm_.push_back(read_channel_norm(r, str(kEnc, "norm", i), c));
    }
    // The classifier's pooled LayerNorm (upstream computes it and throws it away) and the head
    // some checkpoints still hold (spandrel drops it): not the colorizer's.
    for (const char* unused : {"norm.weight", "norm.bias"})
      if (r.has(kEnc + unused)) r.recomputed(kEnc + unused, {s.dims[3]});
    if (r.has(kEnc + "head_cls.weight")) r.recomputed(kEnc + "head_cls.weight", {-1, s.dims[3]});
    if (r.has(kEnc + "head_cls.bias")) r.recomputed(kEnc + "head_cls.bias", {-1});
  }

  void read_last_shuffle(WeightReader& r) {
    const int64_t c = shape_.nf / 2, p = 16 * c;  // scale 4: 16 channels a pixel
    const std::string k = kDec + "last_shuf.conv.0";
    if (shape_.last_norm == 0) {
      const at::Tensor g = r.tensor(k + ".weight_g", {p, 1, 1, 1}), v = r.tensor(k + ".weight_v", {p, c, 1, 1});
      last_.weight = g * v / v.pow(2).sum({1, 2, 3}, true).sqrt();
      last_.bias = r.tensor(k + ".bias", {p});
    } else if (shape_.last_norm == 1) {
      last_ = read_spectral_conv(r, k, c, p, 1, true);
    } else {
      last_ = folded(read_conv(r, k, c, p, 1, 1, 0, false), read_batch_norm(r, kDec + "last_shuf.conv.1", p));
    }
  }

  void read_color_decoder(WeightReader& r) {
    const Shape& s = shape_;
    const int64_t h = s.hidden;
    for (int i = 0; i < s.scales; ++i)
      input_proj_.push_back(read_conv(r, str(kColor, "input_proj.", i), level_channels_[size_t(i)], h, 1, 1, 0));
    level_embed_ = r.tensor(kColor + "level_embed.weight", {s.scales, h});
    query_feat_ = r.tensor(kColor + "query_feat.weight", {s.queries, h});
    query_embed_ = r.tensor(kColor + "query_embed.weight", {s.queries, h});
    for (int i = 0; i < s.layers; ++i) {
      DecoderLayer l;
      const std::string cross = str(kColor, "transformer_cross_attention_layers.", i), self = str(kColor, "transformer_self_attention_layers.", i),
                        ffn = str(kColor, "transformer_ffn_layers.", i);
      l.cross = read_attention(r, cross + ".multihead_attn", h);
      l.cross_norm = read_layer_norm(r, cross + ".norm", h);
      l.self = read_attention(r, self + ".self_attn", h);
      l.self_norm = read_layer_norm(r, self + ".norm", h);
      l.fc1 = read_linear(r, ffn + ".linear1", h, s.ffn);
      l.fc2 = read_linear(r, ffn + ".linear2", s.ffn, h);
      l.ffn_norm = read_layer_norm(r, ffn + ".norm", h);
      layers_.push_back(l);
    }
    decoder_norm_ = read_layer_norm(r, kColor + "decoder_norm", h);
    color_embed_ = {read_linear(r, kColor + "color_embed.layers.0", h, h), read_linear(r, kColor + "color_embed.layers.1", h, h),
                    read_linear(r, kColor + "color_embed.layers.2", h, s.color)};
  }

  // The colour decoder: queries attend to the three levels in turn; each query's embedding dotted
  // with the image features is one map [N, queries, H, W].
  at::Tensor color_maps(const std::vector<at::Tensor>& levels, const at::Tensor& image) const {
    const int64_t n = image.size(0), h = shape_.hidden;
    std::vector<at::Tensor> src, pos;
    for (size_t i = 0; i < levels.size(); ++i) {
      const at::Tensor& l = levels[i];
      pos.push_back(sine_positions(l.size(2), l.size(3), h / 2, l.options()));
      src.push_back(input_proj_[i](l).flatten(2).transpose(1, 2) + level_embed_[int64_t(i)].view({1, 1, h}));
    }
    const at::Tensor query_pos = query_embed_.unsqueeze(0).expand({n, -1, -1});
    at::Tensor out = query_feat_.unsqueeze(0).expand({n, -1, -1});
    for (size_t i = 0; i < layers_.size(); ++i) {
      const DecoderLayer& l = layers_[i];
      const size_t level = i % levels.size();
      out = l.cross_norm(out + l.cross(out + query_pos, src[level] + pos[level], src[level]));
      const at::Tensor qk = out + query_pos;
      out = l.self_norm(out + l.self(qk, qk, out));
      out = l.ffn_norm(out + l.fc2(at::relu(l.fc1(out))));
    }
    at::Tensor embed = decoder_norm_(out);
    embed = color_embed_[2](at::relu(color_embed_[1](at::relu(color_embed_[0](embed)))));
    const at::Tensor maps = at::matmul(embed, image.flatten(2));
    return maps.view({n, shape_.queries, image.size(2), image.size(3)});
  }

  Shape shape_;
  at::Tensor mean_, std_;
  Conv2d stem_;
  ChannelNorm stem_norm_;
  std::vector<Conv2d> down_;
  std::vector<ChannelNorm> down_norm_, hook_norm_;
  std::array<std::vector<ConvNextBlock>, 4> stages_;
  std::vector<UnetBlock> unet_;
  std::vector<int64_t> level_channels_;
  Conv2d last_;
  std::vector<Conv2d> input_proj_;
  at::Tensor level_embed_, query_feat_, query_embed_;
  std::vector<DecoderLayer> layers_;
  LayerNorm decoder_norm_;
  std::vector<Linear> color_embed_;
  Conv2d refine_;
};

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  if (!has_keys(dict, {"mean", "std", "refine_net.0.0.weight_orig", kEnc + "downsample_layers.0.0.weight", kEnc + "stages.3.0.dwconv.weight"}))
    return std::nullopt;
  const auto fail = [&](const std::string& what) { return Error(ErrorKind::Model, str(source, ": DDColor layout: ", what)); };
  if (!dict.count(kColor + "query_feat.weight"))
    throw fail("the single-scale colour decoder (no decoder.color_decoder.query_feat) is not supported; the released models use the multi-scale one");
  DetectedArch d;
  d.arch = "ddcolor";
  d.scale = 1;
  for (int i = 0; i < 4; ++i) {
    const auto dim = dim_of(dict, str(kEnc, "stages.", i, ".0.norm.weight"), 1, 0);
    const int depth = int(key_indices(dict, str(kEnc, "stages.", i, ".")).size());
    if (!dim || *dim < 1 || *dim > kMaxWidth) throw fail(str("encoder stage ", i, " has no usable width"));
    if (depth < 1 || depth > 64) throw fail(str("encoder stage ", i, " has ", depth, " blocks (1 to 64)"));
    d.params[str("dim", i)] = double(*dim);
    d.params[str("depth", i)] = double(depth);
  }
  const auto refine_out = dim_of(dict, "refine_net.0.0.weight_orig", 4, 0), refine_in = dim_of(dict, "refine_net.0.0.weight_orig", 4, 1);
  const auto hidden = dim_of(dict, kColor + "query_feat.weight", 2, 1), queries = dim_of(dict, kColor + "query_feat.weight", 2, 0);
  const auto scales = dim_of(dict, kColor + "level_embed.weight", 2, 0), color = dim_of(dict, kColor + "color_embed.layers.2.weight", 2, 0);
  const auto ffn = dim_of(dict, kColor + "transformer_ffn_layers.0.linear1.weight", 2, 0);
  const auto nf = dim_of(dict, kDec + "layers.0.conv.0.weight_orig", 4, 0);
  if (!refine_out || !refine_in || !hidden || !queries || !scales || !color || !ffn || !nf) throw fail("a decoder tensor is missing or not of its rank");
  if (*refine_in != *queries + 3) throw fail(str("refine_net takes ", *refine_in, " channels, expected the ", *queries, " queries + 3"));
  if (*scales != 3) throw fail(str(*scales, " decoder scales (the pixel decoder makes 3)"));
  if (*hidden % kHeads || *hidden / 2 % 2) throw fail(str("a hidden width of ", *hidden, " (8 heads, sine features in pairs)"));
  d.params["nf"] = double(*nf);
  d.params["queries"] = double(*queries);
  d.params["hidden"] = double(*hidden);
  d.params["ffn"] = double(*ffn);
  d.params["color_dim"] = double(*color);
  d.params["scales"] = double(*scales);
  d.params["layers"] = double(key_indices(dict, kColor + "transformer_self_attention_layers.").size());
  const std::string last = kDec + "last_shuf.conv.";
  d.params["last_norm"] = dict.count(last + "0.weight_g") ? 0 : dict.count(last + "0.weight_orig") ? 1 : 2;
  if (d.params.get("last_norm", 0) == 2 && !dict.count(last + "1.weight")) throw fail("decoder.last_shuf has no weight-, spectral- or batch-normalised convolution");
  d.in_channels = 3;
  d.out_channels = int(*refine_out);
  const double encoder_l = d.params.get("dim0", 0) == 192 ? 1 : 0, encoder_t = d.params.get("depth2", 0) == 9 ? 1 : 0;
  d.variant = encoder_l ? "ConvNeXt-L" : encoder_t ? "ConvNeXt-T" : "";
  return d;
}

}  // namespace

Architecture ddcolor_architecture() {
  return {"ddcolor", detect, [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return std::make_unique<DDColor>(dict, d, source);
          }};
}

}  // namespace framelift::models
