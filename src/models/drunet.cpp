// DRUNet (Zhang et al. 2021, "Plug-and-Play Image Restoration with Deep Denoiser Prior", the DPIR
// denoiser): a U-Net of four levels without biases. A 3x3 head, then per level nb residual blocks
// and a 2x2 stride-2 convolution down; nb blocks at the bottom; per level up a 2x2 stride-2
// transposed convolution and nb blocks, each level's input the sum of the path and the skip; a
// 3x3 tail. The input carries one more channel than the image: a plane of the noise level
// sigma / 255, which is what makes one network denoise any strength (15 by default, upstream's
// and spandrel's; set_noise_level, the denoise stage's sigma=).
//
// Inputs must be multiples of 8 (three halvings); DRUNet does not pad itself, and framelift's
// callers reflect-pad on the right and bottom, as spandrel does for its multiple_of=8.
//
// State dict (cszn/DPIR, the layout chaiNNer-org/spandrel reads): m_head, m_down{1,2,3}.{0..nb-1}
// .res.{0,2} and .nb (the stride convolution), m_body.{0..nb-1}.res.{0,2}, m_up{3,2,1}.0 (the
// transposed convolution) and .{1..nb}.res.{0,2}, m_tail. Only the published modes are read
// (strideconv down, convtranspose up); pooling and upconv variants are refused by name.
#include <ATen/ATen.h>

#include <array>

#include "arch/declaration.h"
#include "models/builtin_architectures.h"
#include "models/kair_blocks.h"
#include "models/native_model.h"
#include "models/noise_level.h"
#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr double kDefaultSigma = 15;

struct Level {
  std::vector<ResBlock> down_blocks, up_blocks;
  Conv2d down;
  ConvTranspose2d up;  // from the level below to this one
};

class Drunet : public NativeModel, public NoiseLevelInput {
 public:
  Drunet(const weights::StateDict& dict, const DetectedArch& d, const std::string& source)
      : NativeModel(declared_info(d), source), sigma_(d.params.get("noise_level", kDefaultSigma)) {
    WeightReader r(dict, source);
    const int nb = int(d.params.get("nb", 4));
    std::array<int64_t, 4> nc;
    for (int i = 0; i < 4; ++i) nc[i] = int64_t(d.params.get(str("nc", i), 64 << i));
    head_ = read_conv(r, "m_head", d.in_channels + 1, nc[0], 3, 1, 1, false);
    for (int i = 0; i < 3; ++i) {
      Level l;
      const std::string down = str("m_down", i + 1), up = str("m_up", i + 1);
      l.down_blocks = read_res_blocks(r, down, 0, nb, nc[i], false);
      l.down = read_conv(r, str(down, ".", nb), nc[i], nc[i + 1], 2, 2, 0, false);
      l.up = read_deconv(r, up + ".0", nc[i + 1], nc[i], 2, 2, 0, false);
      l.up_blocks = read_res_blocks(r, up, 1, nb, nc[i], false);
      levels_.push_back(std::move(l));
    }
    body_ = read_res_blocks(r, "m_body", 0, nb, nc[3], false);
    tail_ = read_conv(r, "m_tail", nc[0], d.out_channels, 3, 1, 1, false);
    r.expect_all_used();
  }

  void set_noise_level(double sigma) override { sigma_ = sigma; }
  double noise_level() const override { return sigma_; }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    const at::Tensor plane = at::full({input.size(0), 1, input.size(2), input.size(3)}, sigma_ / 255.0, input.options());
    // Each level's input, kept for the skip into the same level on the way up.
    std::vector<at::Tensor> skips{head_(at::cat({input, plane}, 1))};
    for (const Level& l : levels_) skips.push_back(l.down(run_blocks(l.down_blocks, skips.back())));
    at::Tensor x = run_blocks(body_, skips.back());
    for (int i = 2; i >= 0; --i) {
      const Level& l = levels_[size_t(i)];
      x = run_blocks(l.up_blocks, l.up(x + skips[size_t(i) + 1]));
    }
    return tail_(x + skips[0]);
  }

  void visit_weights(const TensorVisitor& f) override {
    visit(head_, f);
    for (Level& l : levels_) {
      visit(l.down_blocks, f);
      visit(l.down, f);
      visit(l.up, f);
      visit(l.up_blocks, f);
    }
    visit(body_, f);
    visit(tail_, f);
  }

 private:
  double sigma_;
  Conv2d head_, tail_;
  std::vector<Level> levels_;  // full, 1/2 and 1/4 resolution
  std::vector<ResBlock> body_;  // 1/8
};

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  for (const char* key : {"m_head.weight", "m_down1.0.res.0.weight", "m_down2.0.res.0.weight", "m_down3.0.res.0.weight",
                          "m_body.0.res.0.weight", "m_up3.0.weight", "m_up1.1.res.0.weight", "m_tail.weight"})
    if (!dict.count(key)) return std::nullopt;
  auto fail = [&](const std::string& why) { return Error(ErrorKind::Model, str(source, ": DRUNet layout: ", why)); };
  const int64_t nb = int64_t(key_indices(dict, "m_body.").size());
  if (!dict.count(str("m_down1.", nb, ".weight")))
    throw fail(str("no stride-2 convolution m_down1.", nb, ": a pooling downsampler, which only the published strideconv form replaces"));
  if (dict.count("m_up3.1.weight") || dim_of(dict, "m_up3.0.weight", 4, 2) != 2)
    throw fail("m_up3 is not a 2x2 transposed convolution: an upconv or pixelshuffle upsampler, not the published convtranspose");
  const auto head = dim_of(dict, "m_head.weight", 4, 0), in = dim_of(dict, "m_head.weight", 4, 1);
  const auto out = dim_of(dict, "m_tail.weight", 4, 0);
  const auto nc1 = dim_of(dict, "m_down2.0.res.0.weight", 4, 0), nc2 = dim_of(dict, "m_down3.0.res.0.weight", 4, 0);
  const auto nc3 = dim_of(dict, "m_body.0.res.0.weight", 4, 0);
  if (!head || !in || !out || !nc1 || !nc2 || !nc3) throw fail("m_head, m_tail or a level's first block is not a convolution");
  if (*in < 2) throw fail(str("m_head takes ", *in, " channels: there is no room for the noise-level plane beside the image"));

  // Checked before they narrow to int: 2^32 + 3 channels would otherwise pass as 3.
  arch::check_shapes("drunet", {{"in_channels", double(*in - 1)}, {"out_channels", double(*out)}}, source);
  DetectedArch d;
  d.arch = "drunet";
  d.scale = 1;
  d.in_channels = int(*in - 1);  // the noise plane is made here, not given
  d.out_channels = int(*out);
  d.params = {{"nc0", double(*head)}, {"nc1", double(*nc1)}, {"nc2", double(*nc2)}, {"nc3", double(*nc3)},
              {"nb", double(nb)},     {"noise_level", kDefaultSigma}};
  return d;
}

}  // namespace

Architecture drunet_architecture() {
  return {"drunet", detect,
          [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return std::make_unique<Drunet>(dict, d, source);
          }};
}

}  // namespace framelift::models
