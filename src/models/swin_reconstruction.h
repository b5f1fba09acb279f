#pragma once
// The four reconstructions SwinIR and Swin2SR have after their transformer bodies (HAT and DAT
// have the first two; the residual convolution and pixel-shuffle steps are swin_convs.h's):
//   pixelshuffle        classical SR: conv + LeakyReLU(0.01) to num_feat, (conv, shuffle 2)^n or
//                       (conv, shuffle 3), conv
//   pixelshuffledirect  lightweight SR: one conv to out * scale^2 and a shuffle
//   nearest+conv        real-world SR: conv + LeakyReLU(0.01), then per x2 a nearest resize, conv
//                       and LeakyReLU(0.2), conv + LeakyReLU(0.2), conv
//   none                denoising and JPEG (scale 1): the input plus a conv of the features
// Key names are upstream's (JingyunLiang/SwinIR, mv-lab/swin2sr): conv_before_upsample.0,
// upsample.{0,2,..}, conv_up{1,2,..}, conv_hr, conv_last.
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "models/native_model.h"
#include "models/swin_convs.h"

namespace framelift::models {

enum class SwinUpsampler { None = 0, PixelShuffle = 1, PixelShuffleDirect = 2, NearestConv = 3 };

// Which reconstruction a state dict holds, from its keys.
SwinUpsampler swin_upsampler_of(const weights::StateDict& dict);
// Its scale, from its convolutions' shapes; `out` is the output channels. Throws Error(Model)
// "<source>: <arch> layout: ..." for shapes no upstream reconstruction has.
int64_t swin_reconstruction_scale(const weights::StateDict& dict, SwinUpsampler u, int64_t out, const std::string& source,
                                  const std::string& arch);
// num_feat: conv_before_upsample.0's outputs (64 in every published model).
int64_t swin_reconstruction_features(const weights::StateDict& dict);

class SwinReconstruction {
 public:
  SwinReconstruction() = default;
  SwinReconstruction(WeightReader& r, SwinUpsampler u, int64_t embed, int64_t feat, int64_t out, int64_t scale);
  // body: the features after conv_after_body plus conv_first's; input: the normalised network
  // input, which "none" adds back.
  at::Tensor operator()(const at::Tensor& body, const at::Tensor& input) const;
  void visit_weights(const TensorVisitor& f);

 private:
  SwinUpsampler u_ = SwinUpsampler::None;
  int64_t scale_ = 1;
  Conv2d before_upsample_, hr_, last_;
  PixelShuffleUpsampler shuffle_;  // pixelshuffle
  std::vector<Conv2d> upsample_;   // pixelshuffledirect's one conv, nearest+conv's conv_up*
};

}  // namespace framelift::models
