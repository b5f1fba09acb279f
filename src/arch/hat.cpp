// HAT, network in src/models/hat.cpp: SwinIR's frame with a channel-attention conv block beside
// every window attention and an overlapping cross-attention closing every group; a pixel-shuffle
// reconstruction. Inputs are padded to the window.
#include "arch/builtin.h"

namespace framelift::arch {
namespace {

void mlp(NetWalk& w, double c, double hidden) {
  residual(w, [&] {
    w.pointwise();  // layer norm
    w.conv(hidden, 1);
    w.pointwise();  // gelu
    w.conv(c, 1);
  });
}

ArchCost walk(int scale, const ArchParams& p) {
  const double e = p.get("embed_dim", 180), hidden = p.get("mlp_hidden", 2 * e), feat = p.get("num_feat", 64);
  const double cab = p.get("cab_channels", e / 3), squeeze = p.get("squeeze_channels", e / 30);
  const int layers = int(p.get("layers", 6)), depth = int(p.get("depth", 6)), heads = int(p.get("heads", 6));
  const int window = int(p.get("window_size", 16));
  const double overlap = p.get("overlap_window", 1.5 * window), tokens = double(window) * window;
  NetWalk w(3);
  w.pointwise();  // - mean
  w.conv(e, 3);
  w.keep();  // the first conv's features, added after the body
  w.pointwise();  // patch norm
  for (int g = 0; g < layers; ++g)
    residual(w, [&] {
      for (int j = 0; j < depth; ++j) {
        residual(w, [&] {
          w.pointwise();  // layer norm (and a shifted layer's roll)
          w.keep();       // the normed map feeds the conv block too
          w.conv(cab, 3);
          w.pointwise();  // gelu
          w.conv(e, 3);
          w.conv(squeeze, 1);  // the gate's 1x1s run on one pooled pixel: counted at full size, an upper bound
          w.conv(e, 1);
          w.set(e, 1);
          w.conv(3 * e, 1);
          w.attention(tokens, heads);
          w.conv(e, 1);
          w.release(e, 1);
        });
        mlp(w, e, hidden);
      }
      residual(w, [&] {  // OCAB: queries against the overlapping windows' keys and values
        w.pointwise();   // layer norm
        w.conv(3 * e, 1);
        w.extra(2 * e * overlap * overlap / tokens);  // the unfolded keys and values
        w.attention(overlap * overlap, heads);
        w.conv(e, 1);
      });
      mlp(w, e, hidden);
      w.conv(e, 3);
    });
  w.pointwise();  // norm
  if (p.get("conv_after_body", 1) != 0) w.conv(e, 3);
  w.pointwise();  // + first
  w.release(e, 1);
  w.conv(feat, 3);
  pixel_shuffle_upsampler(w, feat, scale);
  w.conv(3, 3);
  // As SwinIR: attention spreads context over many windows; 32 px of context on the window grid
  // (tests/models/arch_hat_test.cpp). Upstream discourages tiling HAT.
  return w.finish("hat", scale, 32, window);
}

}  // namespace

Declaration hat_declaration() {
  return {.name = "hat", .description = "HAT (Hybrid Attention Transformer: window, channel and overlapping cross-attention)",
          .scales = {2, 3, 4}, .walk = walk,
          .axes = {{"embed_dim", "conv_first.weight", 0},
                   {"heads", "layers.0.residual_group.overlap_attn.relative_position_bias_table", 1},
                   {"window_size", "relative_position_index_SA", 0},
                   {"overlap_window", "relative_position_index_OCA", 1},
                   {"mlp_hidden", "layers.0.residual_group.blocks.0.mlp.fc1.weight", 0},
                   {"cab_channels", "layers.0.residual_group.blocks.0.conv_block.cab.0.weight", 0},
                   {"squeeze_channels", "layers.0.residual_group.blocks.0.conv_block.cab.3.attention.1.weight", 0},
                   {"num_feat", "conv_last.weight", 1}},
          .constraints = {positive("embed_dim"), positive("heads"), divides("heads", "embed_dim"), positive("window_size"),
                          at_most("window_size", 128), positive("overlap_window"), at_most("overlap_window", 192),
                          positive("mlp_hidden"), positive("cab_channels"), positive("squeeze_channels"),
                          positive("layers"), positive("depth"), at_most("layers", kMaxBlocks), at_most("depth", kMaxBlocks),
                          positive("num_feat")}};
}

}  // namespace framelift::arch
