// DDColor, network in src/models/ddcolor.cpp: a ConvNeXt encoder (4x4 stride-4 stem, blocks of a
// 7x7 depthwise convolution and a 4x MLP, 2x2 stride-2 steps), three U-Net blocks back to 1/4
// (1x1 to 4x, shuffle, 3x3 over it and the encoder's feature), a 4x shuffle to full size, a
// colour decoder whose queries attend to the three levels, and a 1x1 over the query maps. The
// attention is counted as the 1x1 convolutions it equals per pixel of a level (keys and values
// projected, each query scored against and weighted by each pixel); what the queries do among
// themselves does not grow with the frame and is left out. Whole frames at multiples of 32.
#include "arch/builtin.h"

namespace framelift::arch {
namespace {

void convnext_block(NetWalk& w, double c) {
  residual(w, [&] {
    w.depthwise(7);
    w.pointwise();  // LayerNorm
    w.conv(4 * c, 1);
    w.pointwise();  // GELU
    w.conv(c, 1);
    w.pointwise();  // layer scale
  });
}

ArchCost walk(int, const ArchParams& p) {
  double dims[4], depths[4];
  for (int i = 0; i < 4; ++i) {
    dims[i] = p.get("dim" + std::to_string(i), i == 0 ? 192 : dims[i - 1] * 2);
    depths[i] = p.get("depth" + std::to_string(i), i == 2 ? 27 : 3);
  }
  const double nf = p.get("nf", 512), queries = p.get("queries", 256), hidden = p.get("hidden", 256), color = p.get("color_dim", 256);
  const int layers = int(p.get("layers", 9));
  NetWalk w(3);
  w.pointwise();  // normalised by mean and std
  w.keep();
  double areas[4];
  for (int i = 0; i < 4; ++i) {
    if (i == 0) w.conv(dims[0], 4, 4);
    else w.conv(dims[i], 2, 2);
    w.pointwise();  // LayerNorm
    for (int b = 0; b < int(depths[i]); ++b) convnext_block(w, dims[i]);
    w.keep();       // the hook's normed copy, alive until its U-Net block
    areas[i] = w.area();
  }
  double level_area[3], level_channels[3];
  for (int i = 0; i < 3; ++i) {
    const double out = i == 2 ? nf / 2 : nf;
    w.conv(4 * out, 1);
    w.shuffle(2);
    w.pointwise();  // blur
    w.concat(out + dims[2 - i]);
    w.conv(out, 3);
    w.pointwise();  // BatchNorm
    w.release(dims[2 - i], areas[2 - i]);
    w.keep();
    level_area[i] = w.area();
    level_channels[i] = out;
  }
  w.conv(16 * (nf / 2), 1);
  w.shuffle(4);
  w.pointwise();  // blur
  const double full_channels = w.channels(), full_area = w.area();
  for (int l = 0; l < layers; ++l) {
    const int i = l % 3;
    w.set(level_channels[i], level_area[i]);
    w.conv(hidden, 1);       // the level's projection (once per level upstream; counted per layer as keys)
    w.conv(2 * hidden, 1);   // keys and values
    w.conv(2 * queries, 1);  // each query scored against each pixel, then weighted by it
  }
  w.set(full_channels, full_area);
  w.set(color, full_area);
  w.conv(queries, 1);        // the query maps: each embedding dotted with the image features
  w.concat(queries + 3);
  w.conv(2, 1);
  for (int i = 0; i < 3; ++i) w.release(level_channels[i], level_area[i]);
  w.release(dims[3], areas[3]);
  w.release(3, 1);
  return w.finish("ddcolor", 1, 0, 32, false);
}

}  // namespace

Declaration ddcolor_declaration() {
  return {.name = "ddcolor",
          .description = "DDColor colorization (ConvNeXt encoder, multi-scale colour decoder)",
          .scales = {1},
          .walk = walk,
          .axes = {{"dim0", "encoder.arch.stages.0.0.norm.weight", 0}, {"queries", "decoder.color_decoder.query_feat.weight", 0},
                   {"hidden", "decoder.color_decoder.query_feat.weight", 1}},
          .constraints = {positive("dim0"), positive("dim1"), positive("dim2"), positive("dim3"), positive("queries"),
                          multiple_of("hidden", 8), positive("nf"), multiple_of("nf", 2), in_range("layers", 1, 64)}};
}

}  // namespace framelift::arch
