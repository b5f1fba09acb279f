// OmniSR (Omni Aggregation Networks), network in src/models/omnisr.cpp: an input conv, res_num
// OSAG groups of block_num OSA blocks (MBConv, window attention, channel attention, grid
// attention, grid channel attention, each followed by a gated depthwise feed-forward; all
// residual), a 1x1 conv and an ESA gate per group, then output conv, input skip, conv + pixel
// shuffle. Attention is inside window_size^2 tokens with 4 heads, so its scores, not the
// features, are the largest tensors. Inputs are padded to the window; tiles need wide context
// because the grid attention spans the whole tile (48 px measured in src/models/omnisr.cpp).
#include <algorithm>

#include "arch/builtin.h"

namespace framelift::arch {
namespace {

constexpr int kHeads = 4;

void feed_forward(NetWalk& w, double c) {
  residual(w, [&] {
    w.pointwise();  // layer norm
    w.conv(2 * c, 1);
    w.depthwise(3);
    w.pointwise();  // gelu(first half) * second half
    w.set(c, w.area());
    w.conv(c, 1);
  });
}

void window_attention(NetWalk& w, double c, double tokens) {
  residual(w, [&] {
    w.pointwise();  // layer norm (and the window partition)
    w.conv(3 * c, 1);
    w.attention(tokens, kHeads);
    w.conv(c, 1);
  });
}

void channel_attention(NetWalk& w, double c) {
  residual(w, [&] {
    w.pointwise();  // layer norm
    w.conv(3 * c, 1);
    w.depthwise(3);
    w.channel_attention(kHeads);
    w.conv(c, 1);
  });
}

void osa_block(NetWalk& w, double c, double tokens) {
  residual(w, [&] {  // MBConv
    w.conv(c, 1);
    w.pointwise();  // gelu
    w.depthwise(3);
    w.pointwise();  // gelu
    w.pointwise();  // squeeze-excitation gate
    w.conv(c, 1);
  });
  window_attention(w, c, tokens);
  feed_forward(w, c);
  channel_attention(w, c);
  feed_forward(w, c);
  window_attention(w, c, tokens);  // grid
  feed_forward(w, c);
  channel_attention(w, c);  // grid
  feed_forward(w, c);
}

// Enhanced spatial attention: 1x1 down to f, stride-2 conv, 7x7/3 max pool, conv, bilinear back,
// plus conv_f of the first 1x1, 1x1 up to C, sigmoid, times x.
void esa(NetWalk& w, double c) {
  const double f = std::max(c / 4, 16.0);
  w.keep();  // x
  w.conv(f, 1);
  w.keep();  // c1
  w.conv(f, 3, 2);
  w.resize(1.0 / 3);
  w.conv(f, 3);
  w.resize(6);
  w.set(f, 1);
  w.conv(f, 1);   // conv_f(c1)
  w.pointwise();  // + the coarse view
  w.release(f, 1);
  w.conv(c, 1);
  w.pointwise();  // sigmoid
  w.pointwise();  // x * gate
  w.release(c, 1);
}

ArchCost walk(int scale, const ArchParams& p) {
  const double c = p.get("num_feat", 64), groups = p.get("res_num", 5), blocks = p.get("block_num", 1);
  const int window = static_cast<int>(p.get("window_size", 8));
  NetWalk w(3);
  w.conv(c, 3);
  w.keep();  // the shallow features, added back before the upsampler
  for (int g = 0; g < groups; ++g) {
    w.keep();  // the group's input
    for (int b = 0; b < blocks; ++b) osa_block(w, c, double(window) * window);
    w.conv(c, 1);
    w.pointwise();  // + the group's input
    w.release(c, 1);
    esa(w, c);
  }
  w.conv(c, 3);
  w.pointwise();  // + shallow
  w.release(c, 1);
  w.conv(3.0 * scale * scale, 3);
  w.shuffle(scale);
  return w.finish("omnisr", scale, 48, window);
}

}  // namespace

Declaration omnisr_declaration() {
  return {.name = "omnisr",
          .description = "OmniSR (Omni Aggregation Network)",
          .scales = {1, 2, 3, 4},
          .walk = walk,
          .axes = {{"num_feat", "input.weight", 0},
                   {"in_channels", "input.weight", 1},
                   {"scale", "up.0.weight", 0},  // out_channels * scale^2
                   // (2 window_size - 1)^2 rows; absent with pe = 0 (window 8 then)
                   {"window_size", "residual_layer.0.residual_layer.0.layer.2.fn.rel_pos_bias.weight", 0}},
          // Every attention splits num_feat into 4 heads (channel attention and windows: c / 4),
          // the SE gates reduce to num_feat / 4; windows divide the (padded) frame.
          .constraints = {positive("num_feat"), multiple_of("num_feat", 4), positive("res_num"), at_most("res_num", kMaxBlocks),
                          positive("block_num"), at_most("block_num", kMaxBlocks), positive("window_size"),
                          at_most("window_size", 128)}};
}

}  // namespace framelift::arch
