// SRFormer, network in src/models/srformer.cpp: SwinIR's frame (a conv, `layers` residual groups
// of `depth` blocks and a conv each, a conv after the body, SwinIR's reconstructions) whose blocks
// are permuted self-attention (q at C, k and v at C/4 each, stacked 2 x 2 into C-channel tokens:
// window_size^2 queries meet window_size^2 / 4 keys) and a ConvFFN (fc1, a depthwise 5x5 added
// back, fc2). Inputs are padded to the window.
#include "arch/builtin.h"

namespace framelift::arch {
namespace {

ArchCost walk(int scale, const ArchParams& p) {
  const double e = p.get("embed_dim", 180), hidden = p.get("mlp_hidden", 2 * e), feat = p.get("num_feat", 64);
  const int layers = int(p.get("layers", 6)), depth = int(p.get("depth", 6)), heads = int(p.get("heads", 6));
  const int window = int(p.get("window_size", 24)), upsampler = int(p.get("upsampler", 1));
  const bool three = p.get("three_conv", 0) != 0;
  const double keys = double(window) * window / 4;
  NetWalk w(3);
  w.pointwise();  // - mean
  w.conv(e, 3);
  w.keep();       // the first conv's features, added after the body
  w.pointwise();  // patch norm
  for (int g = 0; g < layers; ++g)
    residual(w, [&] {
      for (int j = 0; j < depth; ++j) {
        residual(w, [&] {
          w.pointwise();       // layer norm (and the roll of a shifted block)
          w.conv(1.5 * e, 1);  // q (C) and kv (C/2)
          // The attention reads q, k and v at C each once kv's quarters are stacked 2 x 2 (a
          // reshape), every query meeting a quarter of the window's tokens.
          w.set(3 * e, w.area());
          w.attention(keys, heads);
          w.conv(e, 1);
        });
        residual(w, [&] {
          w.pointwise();  // layer norm
          w.conv(hidden, 1);
          w.pointwise();  // gelu
          w.keep();
          w.depthwise(5);
          w.pointwise();  // gelu
          w.pointwise();  // + fc1's
          w.release(hidden, w.area());
          w.conv(e, 1);
        });
      }
      residual_conv(w, e, three);
    });
  w.pointwise();  // norm
  residual_conv(w, e, three);
  w.pointwise();  // + first
  w.release(e, w.area());
  swin_reconstruction(w, upsampler, feat, scale);
  // As SwinIR: 32 px of context with tiles on the window grid keep tiled output within 50 dB of
  // whole frames on the committed references (tests/models/arch_srformer_test.cpp).
  return w.finish("srformer", scale, 32, window);
}

}  // namespace

Declaration srformer_declaration() {
  return {.name = "srformer",
          .description = "SRFormer (permuted self-attention: classical, lightweight and real-world SR)",
          .scales = {1, 2, 3, 4},
          // spandrel kept SRFormer out of fp16 (supports_half=False); bf16 holds
          // (tests/models/arch_srformer_test.cpp).
          .precisions = {Precision::Fp32, Precision::Bf16},
          .walk = walk,
          .axes = swin_body_axes("attn.relative_position_bias_table", 1, "attn.aligned_relative_position_index"),
          .constraints = swin_body_constraints()};
}

}  // namespace framelift::arch
