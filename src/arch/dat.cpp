// DAT, network in src/models/dat.cpp: SwinIR's frame whose groups alternate spatial blocks (half
// the channels in s0 x s1 windows, half in s1 x s0 ones) and channel blocks (per head a d x d
// attention over the whole map), each joined with a depthwise conv of v through two gates, and a
// spatial-gate FFN. The network zero-pads itself to the larger split size.
#include <algorithm>

#include "arch/builtin.h"

namespace framelift::arch {

namespace {

// The depthwise conv of v, the spatial gate's 1x1s (C -> C/16 -> 1) and the gated sum; the
// channel gate's 1x1s run on one pooled pixel (nothing per pixel). Enters and leaves at C.
void interaction(NetWalk& w, double e) {
  w.keep();  // the attention's output
  w.depthwise(3);
  w.pointwise();  // gelu
  w.keep();       // the conv branch
  w.conv(e / 16, 1);
  w.pointwise();  // gelu
  w.conv(1, 1);
  w.set(e, 1);
  w.pointwise();  // both gated and summed
  w.release(2 * e, 1);
}

void sgfn(NetWalk& w, double e, double hidden) {
  residual(w, [&] {
    w.pointwise();  // layer norm
    w.conv(hidden, 1);
    w.pointwise();  // gelu
    w.set(hidden / 2, 1);
    w.pointwise();  // the gate half's layer norm
    w.depthwise(3);
    w.pointwise();  // times the other half
    w.conv(e, 1);
  });
}

ArchCost walk(int scale, const ArchParams& p) {
  const double e = p.get("embed_dim", 180), hidden = p.get("ffn_hidden", 4 * e), feat = p.get("num_feat", 64);
  const int layers = int(p.get("layers", 6)), depth = int(p.get("depth", 6)), heads = int(p.get("heads", 6));
  const int split_h = int(p.get("split_height", 8)), split_w = int(p.get("split_width", 32));
  const bool three = p.get("three_conv", 0) != 0, direct = p.get("upsampler", 1) == 2;
  NetWalk w(3);
  w.pointwise();  // - mean
  w.conv(e, 3);
  w.keep();       // the first conv's features, added after the body
  w.pointwise();  // norm before the groups
  for (int g = 0; g < layers; ++g)
    residual(w, [&] {
      for (int j = 0; j < depth; ++j) {
        residual(w, [&] {
          w.pointwise();  // layer norm
          w.conv(3 * e, 1);
          // Both branches' q k^T and attn v over s0 s1 tokens (heads / 2 each, one branch at a
          // time), or the channel attention; the map's zero padding is not counted.
          if (j % 2 == 0) w.attention(double(split_h) * split_w, heads / 2);
          else w.channel_attention(heads);
          interaction(w, e);
          w.conv(e, 1);
        });
        sgfn(w, e, hidden);
      }
      residual_conv(w, e, three);
    });
  w.pointwise();  // norm
  residual_conv(w, e, three);
  w.pointwise();  // + first
  w.release(e, 1);
  if (direct) {
    w.conv(3.0 * scale * scale, 3);
    w.shuffle(scale);
  } else {
    w.conv(feat, 3);
    pixel_shuffle_upsampler(w, feat, scale);
    w.conv(3, 3);
  }
  // Tiles start on the padding grid of the larger split size, so that every tile partitions and
  // pads its windows as the whole frame does; 32 px of context as SwinIR and HAT
  // (tests/models/arch_dat_test.cpp). The channel blocks attend over the whole map: a tile sees
  // only its own.
  const int grid = std::max(split_h, split_w);
  ArchCost cost = w.finish("dat", scale, std::max(32, grid), 1);
  cost.tile_grid = grid;
  return cost;
}

}  // namespace

Declaration dat_declaration() {
  return {.name = "dat", .description = "DAT (Dual Aggregation Transformer: split-window spatial and channel attention)",
          .scales = {2, 3, 4},
          // spandrel keeps DAT out of fp16 (supports_half=False); bf16 holds (tests/models/arch_dat_test.cpp).
          .precisions = {Precision::Fp32, Precision::Bf16},
          .walk = walk,
          .axes = {{"embed_dim", "conv_first.weight", 0},
                   {"heads", "layers.0.blocks.1.attn.temperature", 0},
                   {"split_height", "layers.0.blocks.0.attn.attns.0.relative_position_index", 0},
                   {"ffn_hidden", "layers.0.blocks.0.ffn.fc1.weight", 0},
                   {"num_feat", "conv_last.weight", 1}},
          // Heads are split between the spatial and the channel branch, and the gate halves the FFN.
          .constraints = {positive("embed_dim"), positive("heads"), multiple_of("heads", 2), divides("heads", "embed_dim"),
                          positive("split_height"), at_most("split_height", 128), positive("split_width"),
                          at_most("split_width", 128), positive("ffn_hidden"), multiple_of("ffn_hidden", 2),
                          positive("layers"), positive("depth"), at_most("layers", kMaxBlocks), at_most("depth", kMaxBlocks),
                          positive("num_feat")}};
}

}  // namespace framelift::arch
