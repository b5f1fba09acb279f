// MoSR ("Mamba Out Super-Resolution", community architecture by umzi2, after MambaOut): a 3x3,
// n_block gated CNN blocks, a conv tail (3x3 to 2 dim, Mish, 3x3 back, Mish, 1x1), plus a conv
// shortcut of the input (two 3x3 with Mish beside a 1x1) minus 0.5, then one of three upsamplers:
//   ps   a 3x3 to out * scale^2 and a pixel shuffle
//   gps  "geo ensemble": a 3x3 to 8 * out * scale^2, the mean of the 8 groups, a pixel shuffle
//   dys  DySample (models/dysample.h), 4 groups
// A gated block: LN (channels-first, eps 1e-6), a 3x3 to 2 * hidden split into a gate g, an
// identity part i and a part c through a k x k depthwise conv; Mish(fc2(Mish(g) * [i, c])), plus
// the block's input minus 0.5 (upstream's offset).
//
// State dict (spandrel's MoSR): gblocks.0, gblocks.1..n.{norm, fc1, conv, fc2}, gblocks.n+1,
// n+3, n+5, shortcut.{block.0, block.2, conv11}, upsampler.{0 | in_to_k | offset, scope,
// init_pos, end_conv}.
#include <ATen/ATen.h>

#include <set>

#include "infer/fp32_islands.h"
#include "arch/declaration.h"
#include "models/builtin_architectures.h"
#include "models/dysample.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "models/token_layers.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

enum class Upsampler { PixelShuffle = 0, GeoEnsemble = 1, DySample = 2 };
constexpr int kEnsemble = 8;  // the geo-ensemble's groups
constexpr int64_t kDySampleGroups = 4;

struct GatedBlock {
  ChannelNorm norm;
  Conv2d fc1, conv, fc2;
  int64_t hidden = 0, conv_channels = 0;

  at::Tensor operator()(const at::Tensor& x) const {
    const std::vector<at::Tensor> parts = fc1(norm(x)).split_with_sizes({hidden, hidden - conv_channels, conv_channels}, 1);
    const at::Tensor mixed = infer::mish(parts[0]) * at::cat({parts[1], depthwise(conv, parts[2])}, 1);
    return infer::mish(fc2(mixed)) + (x - 0.5);
  }
  void visit_weights(const TensorVisitor& f) {
    norm.visit_weights(f);
    for (Conv2d* c : {&fc1, &conv, &fc2}) visit(*c, f);
  }
};

class Mosr : public NativeModel {
 public:
  Mosr(const weights::StateDict& dict, const DetectedArch& d, const std::string& source)
      : NativeModel(declared_info(d), source), scale_(d.scale), upsampler_(Upsampler(int(d.params.get("upsampler", 0)))) {
    WeightReader r(dict, source);
    const int64_t in = d.in_channels, out = d.out_channels, dim = int64_t(d.params.get("dim", 64));
    const int64_t n = int64_t(d.params.get("n_block", 24)), hidden = int64_t(d.params.get("hidden", 96));
    const int64_t conv_channels = int64_t(d.params.get("conv_channels", dim)), k = int64_t(d.params.get("kernel_size", 7));
    first_ = read_conv(r, "gblocks.0", in, dim, 3);
    for (int64_t i = 1; i <= n; ++i) {
      const std::string p = str("gblocks.", i);
      GatedBlock b{read_channel_norm(r, p + ".norm", dim), read_conv(r, p + ".fc1", dim, 2 * hidden, 3), {}, read_conv(r, p + ".fc2", hidden, dim, 3),
                   hidden, conv_channels};
      b.conv.weight = r.tensor(p + ".conv.weight", {conv_channels, 1, k, k});
      b.conv.bias = r.tensor(p + ".conv.bias", {conv_channels});
      b.conv.padding = k / 2;
      blocks_.push_back(std::move(b));
    }
    tail_ = {read_conv(r, str("gblocks.", n + 1), dim, 2 * dim, 3), read_conv(r, str("gblocks.", n + 3), 2 * dim, dim, 3),
             read_conv(r, str("gblocks.", n + 5), dim, dim, 1, 1, 0)};
    shortcut_ = {read_conv(r, "shortcut.block.0", in, dim, 3), read_conv(r, "shortcut.block.2", dim, dim, 3),
                 read_conv(r, "shortcut.conv11", in, dim, 1, 1, 0)};
    const int64_t s2 = int64_t(d.scale) * d.scale;
    switch (upsampler_) {
      case Upsampler::PixelShuffle: up_ = read_conv(r, "upsampler.0", dim, out * s2, 3); break;
      case Upsampler::GeoEnsemble: up_ = read_conv(r, "upsampler.in_to_k", dim, kEnsemble * out * s2, 3); break;
      case Upsampler::DySample: dysample_ = DySample(r, "upsampler", dim, out, d.scale, kDySampleGroups); break;
    }
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    at::Tensor y = first_(input);
    for (const GatedBlock& b : blocks_) y = b(y);
    y = tail_[2](infer::mish(tail_[1](infer::mish(tail_[0](y)))));
    const at::Tensor shortcut = infer::mish(shortcut_[1](infer::mish(shortcut_[0](input)))) + shortcut_[2](input);
    y = y + (shortcut - 0.5);
    switch (upsampler_) {
      case Upsampler::PixelShuffle: return at::pixel_shuffle(up_(y), scale_);
      case Upsampler::GeoEnsemble: {
        const at::Tensor k = up_(y);
        return at::pixel_shuffle(k.reshape({k.size(0), kEnsemble, -1, k.size(2), k.size(3)}).mean(1), scale_);
      }
      case Upsampler::DySample: return dysample_(y);
    }
    return y;
  }

  void visit_weights(const TensorVisitor& f) override {
    visit(first_, f);
    for (GatedBlock& b : blocks_) b.visit_weights(f);
    for (Conv2d& c : tail_) visit(c, f);
    for (Conv2d& c : shortcut_) visit(c, f);
    if (upsampler_ == Upsampler::DySample) dysample_.visit_weights(f);
    else visit(up_, f);
  }

 private:
  int64_t scale_;
  Upsampler upsampler_;
  Conv2d first_, up_;
  std::vector<GatedBlock> blocks_;
  std::vector<Conv2d> tail_, shortcut_;
  DySample dysample_;
};

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  for (const char* key : {"gblocks.0.weight", "gblocks.1.norm.weight", "gblocks.1.fc1.weight", "gblocks.1.conv.weight",
                          "shortcut.block.0.weight", "shortcut.conv11.weight"})
    if (!dict.count(key)) return std::nullopt;
  auto fail = [&](const std::string& why) { return Error(ErrorKind::Model, str(source, ": MoSR layout: ", why)); };
  auto dim_at = [&](const std::string& key, int64_t axis) {
    const auto v = dim_of(dict, key, 4, axis);
    if (!v) throw fail(str("tensor ", key, " is not a convolution"));
    return *v;
  };
  const int64_t dim = dim_at("gblocks.0.weight", 0), in = dim_at("gblocks.0.weight", 1);
  // The tail's two Mish modules hold no weights: the last index, not the count of indices, says n.
  const std::set<int> indices = key_indices(dict, "gblocks.");
  const int64_t n = int64_t(*indices.rbegin()) + 1 - 6;
  if (n < 1) throw fail("fewer than one gated block");
  const int64_t hidden = dim_at("gblocks.1.fc1.weight", 0) / 2, conv_channels = dim_at("gblocks.1.conv.weight", 0);
  // Checked before they narrow to int: 2^32 + 3 channels would otherwise pass as 3.
  arch::check_shapes("mosr", {{"in_channels", double(in)}}, source);
  DetectedArch d;
  d.arch = "mosr";
  d.in_channels = int(in);
  d.out_channels = int(in);
  Upsampler u = Upsampler::PixelShuffle;
  std::optional<int> scale;
  if (dict.count("upsampler.init_pos")) {
    u = Upsampler::DySample;
    arch::check_shapes("mosr", {{"dim", double(dim)}, {"out_channels", double(dim_at("upsampler.end_conv.weight", 0))}}, source);
    d.out_channels = int(dim_at("upsampler.end_conv.weight", 0));
    // DySample samples in 4 groups of dim / 4 channels (a reshape; upstream asserts it too).
    if (dim % kDySampleGroups) throw fail(str(dim, " features (gblocks.0.weight, axis 0) do not split into the DySample's ", kDySampleGroups, " groups"));
    // MoSR builds its DySample with the default 4 groups: offset has 2 * 4 * scale^2 outputs.
    const int64_t offsets = dim_at("upsampler.offset.weight", 0);
    if (offsets % (2 * kDySampleGroups) == 0) scale = shuffle_factor(offsets / (2 * kDySampleGroups), 1);
  } else if (dict.count("upsampler.in_to_k.weight")) {
    u = Upsampler::GeoEnsemble;
    scale = shuffle_factor(dim_at("upsampler.in_to_k.weight", 0), kEnsemble * in);
  } else if (dict.count("upsampler.0.weight")) {
    scale = shuffle_factor(dim_at("upsampler.0.weight", 0), in);
  }
  if (!scale) throw fail("no upsampler of a whole scale (upsampler.0, upsampler.in_to_k or a DySample)");
  d.scale = *scale;
  d.params = {{"dim", double(dim)},
              {"n_block", double(n)},
              {"hidden", double(hidden)},
              {"conv_channels", double(conv_channels)},
              {"kernel_size", double(dim_at("gblocks.1.conv.weight", 2))},
              {"upsampler", double(int(u))}};
  return d;
}

}  // namespace

Architecture mosr_architecture() {
  return {"mosr", detect,
          [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return std::make_unique<Mosr>(dict, d, source);
          }};
}

}  // namespace framelift::models
