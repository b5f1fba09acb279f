#pragma once
// What one network costs per input pixel: multiply-accumulates, the largest set of activations
// alive at once, and activation traffic. Derived layer by layer from framelift's own networks
// (src/models/*.cpp; waifu2x from its ncnn graphs) by each architecture's declaration
// (declaration.h), not measured; docs/planner.md shows the walk and the numbers, and the
// planner's calibration corrects what the walk cannot see. Torch-free.
#include <numeric>
#include <string>

namespace framelift::arch {

struct ArchCost {
  std::string arch;               // the architecture's name: srvgg_compact, rrdbnet, rife, ...
  int scale = 1;                  // output size / input size (1 for RIFE: it makes frames, not pixels)
  double macs_per_px = 0;         // multiply-accumulates per input pixel (per new frame for RIFE)
  double peak_elems_per_px = 0;   // live activation elements per input pixel at the worst point
  double traffic_elems_per_px = 0;// activation elements written and read back, summed over layers
  double params = 0;              // weights and biases
  int tile_overlap = 0;           // input pixels of context a tile needs on each side
  int size_multiple = 1;          // inputs are padded up to a multiple of this
  // Tile windows start on multiples of this (and of size_multiple): the downsampling steps of a
  // U-Net that pads itself (size_multiple 1), whose strided layers would otherwise see a tile on
  // another phase of their grid than the whole frame.
  int tile_grid = 1;
  bool tiled = true;              // false: the whole frame goes through at once (RIFE)
  // A call's fixed cost, in input pixels of work: time ~ pixels + call_overhead_px. Convolution
  // nets at full resolution have none worth counting (0). RIFE does: its dozens of layers at 1/4
  // to 1/16 of the frame cost per call what a larger frame hardly adds to. Set between the CPUs
  // measured (bf16, 480x352 to 960x704 grew 2.8x to 4.4x), where a power law fitted on one
  // machine was 25% off on another (docs/planner.md).
  double call_overhead_px = 0;

  double flops_per_px() const { return 2 * macs_per_px; }
  int tile_alignment() const { return std::lcm(size_multiple, tile_grid); }
  // FLOPs of one call on `pixels`, its fixed cost counted as that much more input.
  double effective_flops(double pixels) const;
};

// Layer-by-layer accounting, in units of "elements per input pixel": a tensor of C channels at
// area A (its pixels / the input's pixels) counts C * A. What the declarations' walks use.
class NetWalk {
 public:
  explicit NetWalk(double channels) : ch_(channels) {}

  void conv(double out, int k, int stride = 1);    // k x k convolution
  // A k x k convolution whose weights an earlier conv() counted (one shared across levels or frames).
  void reused_conv(double out, int k, int stride = 1);
  void depthwise(int k);                           // k x k depthwise convolution (one filter per channel)
  void deconv(double out, int k, int stride);      // transposed convolution, output area * stride^2
  void resize(double factor);                      // interpolation into a new tensor
  void shuffle(int factor);                        // pixel (un)shuffle by factor (<0: unshuffle)
  void pointwise();                                // out-of-place elementwise op (add, prelu, warp)
  void concat(double channels);                    // a concatenation of kept tensors: a new tensor
  // Self-attention of the current q, k, v (channels 3C) inside groups of `tokens` pixels with
  // `heads` heads: the [heads, tokens, tokens] scores and their softmax are alive together.
  void attention(double tokens, int heads);
  // Channel ("transposed") attention of the current q, k, v (3C): a (C/heads)^2 matrix per head.
  void channel_attention(int heads);
  void keep();                                     // the current tensor stays alive (a skip)
  void release(double channels, double area);      // a kept tensor dies
  void extra(double elems);                        // a temporary alive at the next step only
  void set(double channels, double area) { ch_ = channels; area_ = area; }

  double channels() const { return ch_; }
  double area() const { return area_; }
  double macs() const { return macs_; }
  double peak() const { return peak_; }
  double traffic() const { return traffic_; }
  double params() const { return params_; }

  // The walk so far as the cost of architecture `arch`, with its tile geometry.
  ArchCost finish(std::string arch, int scale, int tile_overlap, int size_multiple, bool tiled = true) const;

 private:
  void step(double out_channels, double out_area);

  double ch_, area_ = 1, macs_ = 0, peak_ = 0, traffic_ = 0, params_ = 0, kept_ = 0, extra_ = 0;
};

// x + f(x) as a walk: the input stays alive while `branch` walks f, then the sum.
template <class Branch>
void residual(NetWalk& w, Branch branch) {
  const double c = w.channels(), a = w.area();
  w.keep();
  branch();
  w.pointwise();  // + x
  w.release(c, a);
}

// The SwinIR-lineage pixel-shuffle upsampler at `feat` channels: (3x3 to 4 feat, shuffle 2) per
// factor of 2, or one (3x3 to 9 feat, shuffle 3) for x3.
inline void pixel_shuffle_upsampler(NetWalk& w, double feat, int scale) {
  if (scale == 3) {
    w.conv(9 * feat, 3);
    w.shuffle(3);
    return;
  }
  for (int k = 1; k < scale; k *= 2) {
    w.conv(4 * feat, 3);
    w.shuffle(2);
  }
}

// The SwinIR lineage's residual convolution: "1conv" one 3x3 at c, "3conv" 3x3 to c / 4, 1x1, 3x3 back.
inline void residual_conv(NetWalk& w, double c, bool three) {
  if (!three) return w.conv(c, 3);
  w.conv(c / 4, 3);
  w.conv(c / 4, 1);
  w.conv(c, 3);
}

// The SwinIR lineage's four reconstructions after the body, `upsampler` as detection numbers them:
// 1 pixelshuffle (3x3 to feat, the upsampler, 3x3 to RGB), 2 pixelshuffledirect (one 3x3 to
// 3 scale^2, shuffle), 3 nearest+conv (3x3, a nearest x2 and 3x3 per factor of 2, two 3x3s),
// anything else none (a 3x3 to RGB added to the input).
inline void swin_reconstruction(NetWalk& w, int upsampler, double feat, int scale) {
  switch (upsampler) {
    case 1:
      w.conv(feat, 3);
      pixel_shuffle_upsampler(w, feat, scale);
      w.conv(3, 3);
      break;
    case 2:
      w.conv(3.0 * scale * scale, 3);
      w.shuffle(scale);
      break;
    case 3:
      w.conv(feat, 3);
      for (int k = 1; k < scale; k *= 2) {
        w.resize(2);
        w.conv(feat, 3);
      }
      w.conv(feat, 3);
      w.conv(3, 3);
      break;
    default:
      w.conv(3, 3);
      w.pointwise();
  }
}

}  // namespace framelift::arch
