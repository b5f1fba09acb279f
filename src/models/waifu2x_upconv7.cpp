// waifu2x UpConv7 (nagadomi): six unpadded 3x3 convolutions (16, 32, 64, 128, 128, 256 features)
// with LeakyReLU 0.1 and a 4x4 stride-2 transposed convolution (padding 3) to the output, 2x. The
// convolutions shrink the input by 6 px a side and the transposed convolution's padding takes the
// rest, so a 7 px reflect padding inside run() makes out = 2 * in exactly: the padding the ncnn
// graph interpreter gives the same export (its measured border), so both paths agree as they are.
//
// State dict: net.0, net.2, ..., net.10 (conv [out, in, 3, 3]), net.12 (transposed conv
// [256, out, 4, 4]); the ncnn exports (waifu2x-ncnn-vulkan models-upconv_7_*) are renamed to it.
// Upstream: nagadomi/nunif waifu2x/models/upconv_7.py.
#include <ATen/ATen.h>

#include "infer/fp32_islands.h"
#include "arch/declaration.h"
#include "models/builtin_architectures.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr int64_t kFeatures[] = {16, 32, 64, 128, 128, 256};
constexpr int64_t kConvs = 6, kDeconv = 2 * kConvs;
constexpr int64_t kPad = 7;

class UpConv7 : public NativeModel {
 public:
  UpConv7(const weights::StateDict& dict, const DetectedArch& d, const std::string& source)
      : NativeModel(declared_info(d), source) {
    WeightReader r(dict, source);
    int64_t in = d.in_channels;
    for (int64_t i = 0; i < kConvs; ++i) {
      convs_.push_back(read_conv(r, str("net.", 2 * i), in, kFeatures[i], 3, 1, 0));
      in = kFeatures[i];
    }
    deconv_ = read_deconv(r, str("net.", kDeconv), in, d.out_channels, 4, 2, 3);
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    if (input.size(2) <= kPad || input.size(3) <= kPad) {
      throw Error(ErrorKind::Model, str(source_, ": input ", input.size(3), "x", input.size(2), " is too small for UpConv7's ",
                                        kPad, "-pixel reflect padding (use at least ", kPad + 1, "x", kPad + 1, ")"));
    }
    at::Tensor x = infer::reflect_pad2d(input, {kPad, kPad, kPad, kPad});
    for (const Conv2d& c : convs_) {
      x = c(x);
      at::leaky_relu_(x, 0.1);
    }
    return deconv_(x);
  }

  void visit_weights(const TensorVisitor& f) override {
    for (auto& c : convs_) visit(c, f);
    visit(deconv_, f);
  }

 private:
  std::vector<Conv2d> convs_;
  ConvTranspose2d deconv_;
};

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  // Exactly net.0 ... net.12 in steps of two, ending in a 4x4 kernel: "net.N" alone is too common.
  const std::set<int> indices = key_indices(dict, "net.");
  const std::set<int> expected = {0, 2, 4, 6, 8, 10, 12};
  if (indices != expected || dict.size() != 2 * expected.size()) return std::nullopt;
  auto in = dim_of(dict, "net.0.weight", 4, 1);
  auto out = dim_of(dict, str("net.", kDeconv, ".weight"), 4, 1);
  auto k = dim_of(dict, str("net.", kDeconv, ".weight"), 4, 2);
  if (!in || !out || !k || *k != 4) return std::nullopt;
  // Checked before they narrow to int: 2^32 + 3 channels would otherwise pass as 3.
  arch::check_shapes("waifu2x_upconv7", {{"in_channels", double(*in)}, {"out_channels", double(*out)}}, source);
  DetectedArch d;
  d.arch = "waifu2x_upconv7";
  d.scale = 2;
  d.in_channels = static_cast<int>(*in);
  d.out_channels = static_cast<int>(*out);
  return d;
}

}  // namespace

Architecture waifu2x_upconv7_architecture() {
  return {"waifu2x_upconv7", detect,
          [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return std::make_unique<UpConv7>(dict, d, source);
          }};
}

}  // namespace framelift::models
