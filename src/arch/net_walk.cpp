#include <algorithm>
#include <cmath>

#include "arch/cost.h"

namespace framelift::arch {

double ArchCost::effective_flops(double pixels) const {
  return pixels <= 0 ? 0 : flops_per_px() * (pixels + call_overhead_px);
}

// The input and the output of a layer are both alive while it runs, on top of every kept skip.
// Counting a just-kept tensor again as the next layer's input overstates the peak slightly; the
// planner would rather pick a smaller tile than run out of memory.
void NetWalk::step(double out_channels, double out_area) {
  const double in = ch_ * area_, out = out_channels * out_area;
  peak_ = std::max(peak_, kept_ + in + out + extra_);
  traffic_ += in + out;
  extra_ = 0;
  ch_ = out_channels;
  area_ = out_area;
}

void NetWalk::conv(double out, int k, int stride) {
  const double out_area = area_ / (stride * stride);
  macs_ += ch_ * out * k * k * out_area;
  params_ += ch_ * out * k * k + out;
  step(out, out_area);
}

void NetWalk::reused_conv(double out, int k, int stride) {
  const double out_area = area_ / (stride * stride);
  macs_ += ch_ * out * k * k * out_area;
  step(out, out_area);
}

void NetWalk::depthwise(int k) {
  macs_ += ch_ * k * k * area_;
  params_ += ch_ * k * k + ch_;
  step(ch_, area_);
}

void NetWalk::deconv(double out, int k, int stride) {
  // Each input pixel scatters a k x k x out patch.
  macs_ += ch_ * out * k * k * area_;
  params_ += ch_ * out * k * k + out;
  step(out, area_ * stride * stride);
}

void NetWalk::resize(double factor) { step(ch_, area_ * factor * factor); }

void NetWalk::shuffle(int factor) {
  const double f = factor > 0 ? factor : 1.0 / -factor;
  step(ch_ / (f * f), area_ * f * f);
}

void NetWalk::pointwise() { step(ch_, area_); }

void NetWalk::concat(double channels) {
  // The parts are kept tensors; the concatenation is a fresh copy of all of them.
  peak_ = std::max(peak_, kept_ + channels * area_ + extra_);
  traffic_ += 2 * channels * area_;
  ch_ = channels;
}

void NetWalk::attention(double tokens, int heads) {
  // q k^T and attn v: each token meets every token of its group over C = ch / 3 channels.
  const double c = ch_ / 3;
  macs_ += 2 * tokens * c * area_;
  extra(2 * heads * tokens * area_);  // the scores and their softmax
  step(c, area_);
}

void NetWalk::channel_attention(int heads) {
  // Per head a d x d matrix over the group's pixels, d = C / heads: q k^T and attn v.
  const double c = ch_ / 3, d = c / heads;
  macs_ += 2 * heads * d * d * area_;
  step(c, area_);
}

void NetWalk::keep() { kept_ += ch_ * area_; }
void NetWalk::release(double channels, double area) { kept_ = std::max(0.0, kept_ - channels * area); }
void NetWalk::extra(double elems) { extra_ += elems; }

ArchCost NetWalk::finish(std::string arch, int scale, int tile_overlap, int size_multiple, bool tiled) const {
  ArchCost c;
  c.arch = std::move(arch);
  c.scale = scale;
  c.macs_per_px = macs_;
  c.peak_elems_per_px = peak_;
  c.traffic_elems_per_px = traffic_;
  c.params = params_;
  c.tile_overlap = tile_overlap;
  c.size_multiple = size_multiple;
  c.tiled = tiled;
  return c;
}

}  // namespace framelift::arch
