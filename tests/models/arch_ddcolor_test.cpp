// DDColor against the upstream implementation (spandrel_extra_arches' DDColor classes run on
// Debian's python3-torch by tests/data/arch/make_references.py at narrow widths: ConvNeXt dims
// 8/16/24/32, nf 32, a colour decoder of 16 queries at hidden 32 with 8 heads and 3 layers;
// seeded weights and BatchNorm statistics, spectral norms' u and v converged as training leaves
// them, the colour embedding scaled so that a and b reach tens as a trained one's do): the
// committed checkpoint is detected from its keys and shapes and, on a real 64x64 crop,
// gives upstream's chroma within 50 dB in fp32; bf16 stays within its measured sensitivity.
// The released layouts (ConvNeXt-L and -T, 9 layers, 256 or 100 queries) are detected; the
// single-scale decoder and broken tensors are refused by name.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <iostream>

#include "infer/threads.h"
#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "weights/load_weights.h"

namespace fs = std::filesystem;
namespace fm = framelift::models;
namespace ft = framelift::test;
using framelift::weights::StateDict;

namespace {

const char* kReference = "ddcolor-narrow";

fs::path reference_pth() { return ft::arch_reference_dir() / (std::string(kReference) + ".pth"); }

struct Widths {
  std::array<int64_t, 4> dims{192, 384, 768, 1536}, depths{3, 3, 27, 3};
  int64_t nf = 512, queries = 256, hidden = 256, ffn = 2048;
  int layers = 9;
};

// Zeros in upstream's layout (spectral norms' u and v ones, so that sigma is not 0); with `lazy`,
// uninitialised storage that is never touched (detection reads shapes: ConvNeXt-L's 200M
// weights need no memory then).
StateDict ddcolor_shapes(const Widths& w, bool lazy = false) {
  StateDict d;
  const auto t = [&](const std::string& k, std::vector<int64_t> shape) { d[k] = lazy ? at::empty(shape) : at::zeros(shape); };
  const auto ln = [&](const std::string& p, int64_t c) {
    t(p + ".weight", {c});
    t(p + ".bias", {c});
  };
  const auto bn = [&](const std::string& p, int64_t c) {
    ln(p, c);
    d[p + ".running_mean"] = at::zeros({c});
    d[p + ".running_var"] = at::ones({c});
  };
  const auto spectral = [&](const std::string& p, int64_t in, int64_t out, int64_t k) {
    d[p + ".weight_orig"] = lazy ? at::empty({out, in, k, k}) : at::ones({out, in, k, k});
    d[p + ".weight_u"] = at::ones({out});
    d[p + ".weight_v"] = at::ones({in * k * k});
  };
  const auto linear = [&](const std::string& p, int64_t in, int64_t out) {
    t(p + ".weight", {out, in});
    t(p + ".bias", {out});
  };
  t("mean", {1, 3, 1, 1});
  d["std"] = at::ones({1, 3, 1, 1});
  const std::string e = "encoder.arch.";
  t(e + "downsample_layers.0.0.weight", {w.dims[0], 3, 4, 4});
  t(e + "downsample_layers.0.0.bias", {w.dims[0]});
  ln(e + "downsample_layers.0.1", w.dims[0]);
  for (int i = 1; i < 4; ++i) {
    const std::string p = e + "downsample_layers." + std::to_string(i);
    ln(p + ".0", w.dims[size_t(i - 1)]);
    t(p + ".1.weight", {w.dims[size_t(i)], w.dims[size_t(i - 1)], 2, 2});
    t(p + ".1.bias", {w.dims[size_t(i)]});
  }
  for (int i = 0; i < 4; ++i) {
    const int64_t c = w.dims[size_t(i)];
    for (int j = 0; j < w.depths[size_t(i)]; ++j) {
      const std::string p = e + "stages." + std::to_string(i) + "." + std::to_string(j) + ".";
      t(p + "dwconv.weight", {c, 1, 7, 7});
      t(p + "dwconv.bias", {c});
      ln(p + "norm", c);
      linear(p + "pwconv1", c, 4 * c);
      linear(p + "pwconv2", 4 * c, c);
      t(p + "gamma", {c});
    }
    ln(e + "norm" + std::to_string(i), c);
  }
  ln(e + "norm", w.dims[3]);
  int64_t in = w.dims[3];
  for (int i = 0; i < 3; ++i) {
    const std::string p = "decoder.layers." + std::to_string(i) + ".";
    const int64_t out = i == 2 ? w.nf / 2 : w.nf, skip = w.dims[size_t(2 - i)];
    spectral(p + "shuf.conv.0", in, 4 * out, 1);
    bn(p + "shuf.conv.1", 4 * out);
    bn(p + "bn", skip);
    spectral(p + "conv.0", out + skip, out, 3);
    bn(p + "conv.2", out);
    in = out;
  }
  t("decoder.last_shuf.conv.0.weight_g", {w.nf * 8, 1, 1, 1});
  d["decoder.last_shuf.conv.0.weight_v"] = lazy ? at::empty({w.nf * 8, w.nf / 2, 1, 1}) : at::ones({w.nf * 8, w.nf / 2, 1, 1});
  t("decoder.last_shuf.conv.0.bias", {w.nf * 8});
  const std::string c = "decoder.color_decoder.";
  const std::array<int64_t, 3> levels{w.nf, w.nf, w.nf / 2};
  for (int i = 0; i < 3; ++i) {
    t(c + "input_proj." + std::to_string(i) + ".weight", {w.hidden, levels[size_t(i)], 1, 1});
    t(c + "input_proj." + std::to_string(i) + ".bias", {w.hidden});
  }
  t(c + "level_embed.weight", {3, w.hidden});
  t(c + "query_feat.weight", {w.queries, w.hidden});
  t(c + "query_embed.weight", {w.queries, w.hidden});
  for (int i = 0; i < w.layers; ++i) {
    const std::string n = std::to_string(i);
    for (const std::string& a : {c + "transformer_self_attention_layers." + n + ".self_attn",
                                 c + "transformer_cross_attention_layers." + n + ".multihead_attn"}) {
      t(a + ".in_proj_weight", {3 * w.hidden, w.hidden});
      t(a + ".in_proj_bias", {3 * w.hidden});
      linear(a + ".out_proj", w.hidden, w.hidden);
    }
    ln(c + "transformer_self_attention_layers." + n + ".norm", w.hidden);
    ln(c + "transformer_cross_attention_layers." + n + ".norm", w.hidden);
    linear(c + "transformer_ffn_layers." + n + ".linear1", w.hidden, w.ffn);
    linear(c + "transformer_ffn_layers." + n + ".linear2", w.ffn, w.hidden);
    ln(c + "transformer_ffn_layers." + n + ".norm", w.hidden);
  }
  ln(c + "decoder_norm", w.hidden);
  linear(c + "color_embed.layers.0", w.hidden, w.hidden);
  linear(c + "color_embed.layers.1", w.hidden, w.hidden);
  linear(c + "color_embed.layers.2", w.hidden, w.nf / 2);
  spectral("refine_net.0.0", w.queries + 3, 2, 1);
  t("refine_net.0.0.bias", {2});
  return d;
}

}  // namespace

TEST(ArchDdcolor, MatchesTheUpstreamImplementationOnARealCrop) {
  framelift::infer::configure_cpu_threads(0);
  const StateDict io = framelift::weights::load_weights(ft::arch_reference_dir() / (std::string(kReference) + ".ref.safetensors"));
  const auto d = fm::detect(framelift::weights::load_weights(reference_pth()), reference_pth().string());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->arch, "ddcolor");
  EXPECT_EQ(d->out_channels, 2);
  EXPECT_EQ(d->params.get("dim3", 0), 32.0);
  EXPECT_EQ(d->params.get("depth2", 0), 2.0);
  EXPECT_EQ(d->params.get("nf", 0), 32.0);
  EXPECT_EQ(d->params.get("queries", 0), 16.0);
  EXPECT_EQ(d->params.get("hidden", 0), 32.0);
  EXPECT_EQ(d->params.get("layers", 0), 3.0);
  EXPECT_EQ(d->params.get("last_norm", -1), 0.0);

  auto model = fm::load_model(reference_pth());
  EXPECT_FALSE(model->info().tiled);
  EXPECT_EQ(model->info().size_multiple, 32);
  const at::Tensor& want = io.at("output");
  const at::Tensor got = model->forward(io.at("input"));
  ASSERT_EQ(got.sizes(), want.sizes());
  const double db = ft::psnr_in_range(got, want);
  model->to(c10::kCPU, at::kBFloat16);
  const double bf16_db = ft::psnr_in_range(model->forward(io.at("input").to(at::kBFloat16)).to(at::kFloat), want);
  std::cout << kReference << ": fp32 vs upstream " << db << " dB, bf16 " << bf16_db << " dB\n";
  EXPECT_GE(db, 50.0);
  EXPECT_GE(bf16_db, 45.0);  // measured 57.6 dB (Zen 5)
}

TEST(ArchDdcolor, TheReleasedLayoutsAreDetected) {
  // ddcolor_paper / _modelscope / _artistic: ConvNeXt-L, 256 queries; ddcolor_paper_tiny: ConvNeXt-T, 100.
  const auto large = fm::detect(ddcolor_shapes({}, true), "ddcolor_modelscope.pth");
  ASSERT_TRUE(large);
  EXPECT_EQ(large->variant, "ConvNeXt-L");
  EXPECT_EQ(large->params.get("depth2", 0), 27.0);
  EXPECT_EQ(large->params.get("queries", 0), 256.0);
  Widths tiny;
  tiny.dims = {96, 192, 384, 768};
  tiny.depths = {3, 3, 9, 3};
  tiny.queries = 100;
  const auto t = fm::detect(ddcolor_shapes(tiny, true), "ddcolor_paper_tiny.pth");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->variant, "ConvNeXt-T");
  EXPECT_EQ(t->params.get("dim0", 0), 96.0);
}

TEST(ArchDdcolor, TheSingleScaleDecoderAndBrokenTensorsAreRefusedByName) {
  Widths w;
  w.dims = {8, 16, 24, 32};
  w.depths = {1, 1, 1, 1};
  w.nf = 32;
  w.queries = 4;
  w.hidden = 16;
  w.ffn = 32;
  w.layers = 3;
  EXPECT_NO_THROW(fm::build_model(ddcolor_shapes(w), "small.pth"));
  StateDict d = ddcolor_shapes(w);
  d.erase("decoder.color_decoder.query_feat.weight");
  ft::expect_refused(d, "single-scale colour decoder");
  d = ddcolor_shapes(w);
  d["decoder.layers.1.conv.0.weight_orig"] = at::ones({32, 47, 3, 3});
  ft::expect_refused(d, "decoder.layers.1.conv.0.weight_orig");
  d = ddcolor_shapes(w);
  d.erase("decoder.color_decoder.transformer_ffn_layers.2.norm.bias");
  ft::expect_refused(d, "transformer_ffn_layers.2.norm.bias");
  d = ddcolor_shapes(w);
  d["refine_net.0.0.weight_orig"] = at::ones({2, 9, 1, 1});
  ft::expect_refused(d, "refine_net takes 9 channels");
}
