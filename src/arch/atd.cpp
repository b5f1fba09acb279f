// ATD, network in src/models/atd.cpp: SwinIR's frame whose layers add to the window attention a
// cross-attention to a small learned token dictionary and a category attention (tokens sorted by
// their dictionary token, attending in groups of category_size), a conv feed-forward, and a
// refinement of the dictionary from the whole map. The network pads itself to the window.
#include <algorithm>

#include "arch/builtin.h"

namespace framelift::arch {
namespace {

ArchCost walk(int scale, const ArchParams& p) {
  const double e = p.get("embed_dim", 210), hidden = p.get("mlp_hidden", 2 * e), feat = p.get("num_feat", 64);
  const double m = p.get("num_tokens", 128), reduced = p.get("reducted_dim", 20), category = p.get("category_size", 256);
  const int layers = int(p.get("layers", 6)), depth = int(p.get("depth", 6)), heads = int(p.get("heads", 6));
  const int window = int(p.get("window_size", 16)), kernel = int(p.get("convffn_kernel", 5)), upsampler = int(p.get("upsampler", 1));
  const bool three = p.get("three_conv", 0) != 0;
  NetWalk w(3);
  w.pointwise();  // - mean (and the mirror padding)
  w.conv(e, 3);
  w.keep();       // the first conv's features, added after the body
  w.pointwise();  // patch norm
  for (int g = 0; g < layers; ++g)
    residual(w, [&] {
      for (int j = 0; j < depth; ++j) {
        residual(w, [&] {
          w.pointwise();  // layer norm
          w.keep();       // the normed map feeds the dictionary attention too
          w.conv(3 * e, 1);
          w.keep();  // qkv feeds both the window and the category attention
          w.attention(double(window) * window, heads);
          w.conv(e, 1);
          w.set(3 * e, 1);
          w.extra(3 * e);  // the sorted (and mirror-filled) qkv
          w.attention(category, heads);
          w.conv(e, 1);
          w.release(3 * e, 1);
          w.set(e, 1);
          w.conv(reduced, 1);  // dictionary attention: q, cosine scores against m tokens, softmax
          w.extra(2 * m);
          w.conv(m, 1);
          w.conv(e, 1);  // scores times the dictionary's values
          w.release(e, 1);
        });
        residual(w, [&] {
          w.pointwise();  // layer norm
          w.conv(hidden, 1);
          w.pointwise();  // gelu
          w.keep();
          w.depthwise(kernel);
          w.pointwise();  // gelu, + itself
          w.release(hidden, 1);
          w.conv(e, 1);
        });
        if (j + 1 < depth) w.extra(2 * m);  // the refinement's normalised similarity, m per token
      }
      residual_conv(w, e, three);
    });
  w.pointwise();  // norm
  residual_conv(w, e, three);
  w.pointwise();  // + first
  w.release(e, 1);
  swin_reconstruction(w, upsampler, feat, scale);
  // Tiles start on the window grid (the network pads itself). The category attention (an unstable
  // sort of the whole map's categories) and the dictionary refinement see the whole frame, so no
  // context makes a tile exact: on the test frame 64 px tiles are 24.3 dB from the whole frame
  // without context, 27.6 with 32 px, 30.1 with 64, 30.7 with 96 (tests/models/arch_atd_test.cpp),
  // upstream's own sensitivity to any change of its input. 64 px is the knee; run ATD on whole
  // frames where memory allows.
  ArchCost cost = w.finish("atd", scale, std::max(64, 4 * window), 1);
  cost.tile_grid = window;
  return cost;
}

}  // namespace

Declaration atd_declaration() {
  return {.name = "atd", .description = "ATD (Adaptive Token Dictionary: window, dictionary and category attention)",
          .scales = {1, 2, 3, 4},
          // fp32 only. spandrel keeps ATD out of fp16 (supports_half=False), and bf16 does not hold:
          // 32 dB from fp32 on the test frame, under the 40 dB reduced precision must keep, as its
          // category sort regroups tokens frame-wide on any rounding (upstream's own fp32 is 30 dB
          // from itself on a bf16-rounded input; tests/models/arch_atd_test.cpp). So the CPU
          // default stays fp32 for ATD and --precision bf16 is refused by name.
          .precisions = {Precision::Fp32},
          .walk = walk,
          .axes = {{"embed_dim", "conv_first.weight", 0},
                   {"heads", "layers.0.residual_group.layers.0.attn_win.relative_position_bias_table", 1},
                   {"window_size", "relative_position_index_SA", 0},
                   {"num_tokens", "layers.0.residual_group.layers.0.attn_atd.scale", 0},
                   {"reducted_dim", "layers.0.residual_group.layers.0.attn_atd.wq.weight", 0},
                   {"convffn_kernel", "layers.0.residual_group.layers.0.convffn.dwconv.depthwise_conv.0.weight", 2},
                   {"mlp_hidden", "layers.0.residual_group.layers.0.convffn.fc1.weight", 0}},
          .constraints = {positive("embed_dim"), positive("heads"), divides("heads", "embed_dim"), positive("window_size"),
                          at_most("window_size", 128), multiple_of("window_size", 2), positive("num_tokens"),
                          positive("reducted_dim"), positive("convffn_kernel"), at_most("convffn_kernel", 63),
                          positive("mlp_hidden"), positive("layers"), positive("depth"), at_most("layers", kMaxBlocks), at_most("depth", kMaxBlocks),
                          positive("num_feat")}};
}

}  // namespace framelift::arch
