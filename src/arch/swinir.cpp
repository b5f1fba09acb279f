// SwinIR, network in src/models/swinir.cpp: a conv, `layers` residual groups of `depth` Swin
// layers (window attention with `heads` heads over window_size^2 tokens, then an MLP; both
// pre-normalised and residual) and a conv each, a conv after the body, and the reconstruction.
// Inputs are padded to the window (times an unshuffle, where there is one). Swin2SR (swin2sr.cpp)
// walks the same network with a 1x1 patch embedding before the body and after each group's conv.
#include <cmath>
#include <string>

#include "arch/builtin.h"

namespace framelift::arch {
ArchCost swinir_walk(const std::string& arch, int scale, const ArchParams& p, bool patch_embeddings) {
  const double e = p.get("embed_dim", 180), hidden = p.get("mlp_hidden", 2 * e), feat = p.get("num_feat", 64);
  const int layers = int(p.get("layers", 6)), depth = int(p.get("depth", 6)), heads = int(p.get("heads", 6));
  const int window = int(p.get("window_size", 8)), unshuffle = int(p.get("unshuffle", 1));
  const bool three = p.get("three_conv", 0) != 0;
  const int upsampler = int(p.get("upsampler", 1));
  const double tokens = double(window) * window;
  NetWalk w(3);
  w.pointwise();  // (x - mean) * range
  if (unshuffle > 1) w.shuffle(-unshuffle);
  w.conv(e, 3);
  w.keep();  // the first conv's features, added after the body
  if (patch_embeddings) w.conv(e, 1);
  w.pointwise();  // patch norm
  for (int g = 0; g < layers; ++g)
    residual(w, [&] {
      for (int j = 0; j < depth; ++j) {
        residual(w, [&] {
          w.pointwise();  // layer norm (and the roll of a shifted layer)
          w.conv(3 * e, 1);
          w.attention(tokens, heads);
          w.conv(e, 1);
        });
        residual(w, [&] {
          w.pointwise();  // layer norm
          w.conv(hidden, 1);
          w.pointwise();  // gelu
          w.conv(e, 1);
        });
      }
      residual_conv(w, e, three);
      if (patch_embeddings) w.conv(e, 1);
    });
  w.pointwise();  // norm
  residual_conv(w, e, three);
  w.pointwise();  // + first
  w.release(e, w.area());
  const int s = scale * unshuffle;  // of the reconstruction, at the unshuffled resolution
  swin_reconstruction(w, upsampler, feat, s);
  // Attention reaches a window's width through each pair of layers, so a deep SwinIR has a large
  // receptive field; 32 px of context (tiles aligned to the window grid, util/tile_spans.h) keep
  // tiled output within 50 dB of whole frames on the committed references
  // (tests/models/arch_swinir_test.cpp). Upstream (spandrel) discourages tiling SwinIR at all.
  return w.finish(arch, scale, 32, window * unshuffle);
}

std::vector<Axis> swin_body_axes(const std::string& heads_tensor, int heads_axis, const std::string& window_tensor) {
  const std::string block = "layers.0.residual_group.blocks.0.";
  return {{"embed_dim", "conv_first.weight", 0},
          {"heads", block + heads_tensor, heads_axis},
          {"window_tokens", block + window_tensor, 0},
          {"mlp_hidden", block + "mlp.fc1.bias", 0}};
}

std::vector<Constraint> swin_body_constraints() {
  // 128: twice the widest window published (SRFormer's 24, HAT's 16); a window's tables grow as its fourth power.
  return {positive("embed_dim"), positive("heads"), divides("heads", "embed_dim"), positive("window_size"),
          at_most("window_size", 128), positive("mlp_hidden"), positive("layers"), positive("depth"),
          at_most("layers", kMaxBlocks), at_most("depth", kMaxBlocks),
          positive("num_feat")};
}

Declaration swinir_declaration() {
  return {.name = "swinir",
          .description = "SwinIR (Swin Transformer image restoration: classical, lightweight and real-world SR, denoising, JPEG)",
          .scales = {1, 2, 3, 4, 8},
          .walk = [](int scale, const ArchParams& p) { return swinir_walk("swinir", scale, p, false); },
          .axes = swin_body_axes("attn.relative_position_bias_table", 1, "attn.relative_position_index"),
          .constraints = swin_body_constraints()};
}

}  // namespace framelift::arch
