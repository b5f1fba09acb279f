#include "models/swin_reconstruction.h"

#include <ATen/ATen.h>

#include <cmath>

#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {

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
      const UpsamplerScale s = pixel_shuffle_scale(dict, "upsample");
      return s.error.empty() ? s.scale : fail(s.error);
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
      shuffle_ = read_pixel_shuffle_upsampler(r, "upsample", f, scale);
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
      return last_(shuffle_(at::leaky_relu(before_upsample_(body), 0.01)));
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
  shuffle_.visit_weights(f);
}

}  // namespace framelift::models
