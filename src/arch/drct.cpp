// DRCT, network in src/models/drct.cpp: SwinIR's frame whose groups are residual dense groups:
// five Swin layers (window attention, then an MLP), layer k on the concatenation of the group's
// input and the 1x1-fused outputs (growth channels each) of the layers before it, the last fusion
// back to embed channels and added at 0.2. Pixel-shuffle reconstruction; inputs padded to the
// window.
#include "arch/builtin.h"

namespace framelift::arch {
namespace {

ArchCost walk(int scale, const ArchParams& p) {
  const double e = p.get("embed_dim", 180), hidden = p.get("mlp_hidden", 2 * e), gc = p.get("growth", 32);
  const double feat = p.get("num_feat", 64);
  const int layers = int(p.get("layers", 6)), heads = int(p.get("heads", 6)), window = int(p.get("window_size", 16));
  const double tokens = double(window) * window;
  NetWalk w(3);
  w.pointwise();  // - mean
  w.conv(e, 3);
  w.keep();       // the first conv's features, added after the body
  w.pointwise();  // patch norm
  for (int g = 0; g < layers; ++g) {
    w.keep();  // the group's input: the first dense feature and the residual
    for (int k = 0; k < 5; ++k) {
      const double c = e + k * gc, h = k >= 3 ? c : c * hidden / e;
      if (k) w.concat(c);
      residual(w, [&] {
        w.pointwise();  // layer norm (and the roll of a shifted layer)
        w.conv(3 * c, 1);
        w.attention(tokens, int(heads - int(c) % heads));
        w.conv(c, 1);
      });
      residual(w, [&] {
        w.pointwise();  // layer norm
        w.conv(h, 1);
        w.pointwise();  // gelu
        w.conv(c, 1);
      });
      w.conv(k < 4 ? gc : e, 1);  // adjust
      if (k < 4) {
        w.pointwise();  // leaky relu
        w.keep();       // a dense feature
      }
    }
    w.pointwise();  // x + 0.2 x5
    w.release(e + 4 * gc, 1);
  }
  w.pointwise();  // norm
  if (p.get("conv_after_body", 1) != 0) w.conv(e, 3);
  w.pointwise();  // + first
  w.release(e, 1);
  w.conv(feat, 3);
  pixel_shuffle_upsampler(w, feat, scale);
  w.conv(3, 3);
  // As SwinIR and HAT: attention spreads context over windows layer by layer; 32 px of context on
  // the window grid keep tiles within 50 dB of whole frames (tests/models/arch_drct_test.cpp).
  return w.finish("drct", scale, 32, window);
}

}  // namespace

Declaration drct_declaration() {
  // No fp16: spandrel marks DRCT as not supporting half precision, and framelift has measured only
  // bf16 against fp32 (tests/models/arch_drct_test.cpp).
  return {.name = "drct", .description = "DRCT (Dense-residual-connected Swin transformer: DRCT, DRCT-L)",
          .scales = {1, 2, 3, 4}, .precisions = {Precision::Fp32, Precision::Bf16}, .walk = walk,
          .axes = {{"embed_dim", "conv_first.weight", 0},
                   {"heads", "layers.0.swin1.attn.relative_position_bias_table", 1},
                   {"window_size", "layers.0.swin1.attn.relative_position_bias_table", 0},
                   {"mlp_hidden", "layers.0.swin1.mlp.fc1.weight", 0},
                   {"growth", "layers.0.adjust1.weight", 0},
                   {"num_feat", "conv_last.weight", 1}},
          // Dense layer k attends over embed_dim + k growth channels with heads - (that % heads)
          // heads: positive heads keep that modulo defined; detection checks each layer's split.
          .constraints = {positive("embed_dim"), positive("heads"), positive("window_size"), at_most("window_size", 128),
                          positive("mlp_hidden"), positive("growth"), positive("layers"), at_most("layers", kMaxBlocks), positive("num_feat")}};
}

}  // namespace framelift::arch
