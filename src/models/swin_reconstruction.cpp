#include "models/swin_reconstruction.h"

#include <ATen/ATen.h>

#include <cmath>

#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {

at::Tensor ResidualConv::operator()(const at::Tensor& x) const {
  at::Tensor y = convs[0](x);
  for (size_t i = 1; i < convs.size(); ++i) y = convs[i](at::leaky_relu(y, 0.2));
  return y;
}

void ResidualConv::visit_weights(const TensorVisitor& f) {
  for (Conv2d& c : convs) visit(c, f);
}

ResidualConv read_residual_conv(WeightReader& r, const std::string& p, int64_t c, bool three) {
  if (!three) return {{read_conv(r, p, c, c, 3)}};
  return {{read_conv(r, p + ".0", c, c / 4, 3), read_conv(r, p + ".2", c / 4, c / 4, 1), read_conv(r, p + ".4", c / 4, c, 3)}};
}

SwinUpsampler swin_upsampler_of(const weights::StateDict& dict) {
  if (dict.count("conv_before_upsample.0.weight"))
    return dict.count("conv_up1.weight") ? SwinUpsampler::NearestConv : SwinUpsampler::PixelShuffle;
  return dict.count("upsample.0.weight") ? SwinUpsampler::PixelShuffleDirect : SwinUpsampler::None;
}

int64_t swin_reconstruction_scale(const weights::StateDict& dict, SwinUpsampler u, int64_t out, const std::string& source,
                                  const std::string& arch) {
  auto fail = [&](const std::string& why) -> int64_t { throw Error(ErrorKind::Model, str(source, ": ", arch, " layout: ", why)); };
  switch (u) {
    case SwinUpsampler::NearestConv: {
      int64_t scale = 1;
      for (int i = 1; dict.count(str("conv_up", i, ".weight")); ++i) scale *= 2;
      return scale;
    }
    case SwinUpsampler::PixelShuffle: {
      int64_t scale = 1;
      for (int i = 0; dict.count(str("upsample.", i, ".weight")); i += 2) {
        const auto o = dim_of(dict, str("upsample.", i, ".weight"), 4, 0), f = dim_of(dict, str("upsample.", i, ".weight"), 4, 1);
        const std::optional<int> step = o && f ? shuffle_factor(*o, *f) : std::nullopt;
        if (!step || (*step != 2 && *step != 3)) return fail(str("upsample.", i, " is not a x2 or x3 pixel-shuffle convolution"));
        scale *= *step;
      }
      return scale;
    }
    case SwinUpsampler::PixelShuffleDirect: {
      const auto o = dim_of(dict, "upsample.0.weight", 4, 0);
      const std::optional<int> scale = o ? shuffle_factor(*o, out) : std::nullopt;
      return scale ? *scale : fail("upsample.0 does not make output channels times a square scale");
    }
    case SwinUpsampler::None: return 1;
  }
  return 1;
}

int64_t swin_reconstruction_features(const weights::StateDict& dict) {
  return dict.count("conv_before_upsample.0.weight") ? dim_of(dict, "conv_before_upsample.0.weight", 4, 0).value_or(64) : 64;
}

SwinReconstruction::SwinReconstruction(WeightReader& r, SwinUpsampler u, int64_t e, int64_t f, int64_t out, int64_t scale)
    : u_(u), scale_(scale) {
  switch (u) {
    case SwinUpsampler::PixelShuffle: {
      before_upsample_ = read_conv(r, "conv_before_upsample.0", e, f, 3);
      const bool three = scale == 3;
      const int steps = three ? 1 : int(std::lround(std::log2(double(scale))));
      for (int i = 0; i < steps; ++i) {
        upsample_.push_back(read_conv(r, str("upsample.", 2 * i), f, (three ? 9 : 4) * f, 3));
        shuffle_.push_back(three ? 3 : 2);
      }
      last_ = read_conv(r, "conv_last", f, out, 3);
      break;
    }
    case SwinUpsampler::PixelShuffleDirect:
      upsample_.push_back(read_conv(r, "upsample.0", e, out * scale * scale, 3));
      break;
    case SwinUpsampler::NearestConv: {
      before_upsample_ = read_conv(r, "conv_before_upsample.0", e, f, 3);
      for (int i = 1; (1 << i) <= scale; ++i) upsample_.push_back(read_conv(r, str("conv_up", i), f, f, 3));
      hr_ = read_conv(r, "conv_hr", f, f, 3);
      last_ = read_conv(r, "conv_last", f, out, 3);
      break;
    }
    case SwinUpsampler::None: last_ = read_conv(r, "conv_last", e, out, 3); break;
  }
}

at::Tensor SwinReconstruction::operator()(const at::Tensor& body, const at::Tensor& input) const {
  switch (u_) {
    case SwinUpsampler::PixelShuffle: {
      at::Tensor y = at::leaky_relu(before_upsample_(body), 0.01);
      for (size_t i = 0; i < upsample_.size(); ++i) y = at::pixel_shuffle(upsample_[i](y), shuffle_[i]);
      return last_(y);
    }
    case SwinUpsampler::PixelShuffleDirect: return at::pixel_shuffle(upsample_[0](body), scale_);
    case SwinUpsampler::NearestConv: {
      at::Tensor y = at::leaky_relu(before_upsample_(body), 0.01);
      for (const Conv2d& up : upsample_) y = at::leaky_relu(up(upsample_nearest(y, 2)), 0.2);
      return last_(at::leaky_relu(hr_(y), 0.2));
    }
    case SwinUpsampler::None: break;
  }
  return input + last_(body);
}

void SwinReconstruction::visit_weights(const TensorVisitor& f) {
  for (Conv2d* c : {&before_upsample_, &hr_, &last_})
    if (c->weight.defined()) visit(*c, f);
  for (Conv2d& c : upsample_) visit(c, f);
}

}  // namespace framelift::models
