// SRVGGNetCompact, the Real-ESRGAN "Compact" network (realesr-animevideov3,
// realesr-general-x4v3, community models such as 2x-AniScale): a plain chain of 3x3 convolutions
// with PReLU, a last convolution to out_ch * scale^2 channels, pixel shuffle, and the input
// upscaled by nearest neighbour added on top, so the network only learns the residual.
//
// State dict: body.0 (conv in -> feat), body.1 (PReLU [feat]), then num_conv pairs
// body.2k (conv feat -> feat) / body.2k+1 (PReLU), and body.L (conv feat -> out * scale^2), L =
// 2 * num_conv + 2. Upstream: xinntao/Real-ESRGAN realesrgan/archs/srvgg_arch.py.
#include <ATen/ATen.h>

#include "arch/declaration.h"
#include "infer/conv_layout.h"
#include "models/builtin_architectures.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

struct CompactShape {
  int64_t in = 3, out = 3, feat = 64, num_conv = 16, scale = 4;
};

CompactShape shape_of(const DetectedArch& d) {
  CompactShape s;
  s.in = d.in_channels;
  s.out = d.out_channels;
  s.scale = d.scale;
  s.feat = static_cast<int64_t>(d.params.get("num_feat", 64));
  s.num_conv = static_cast<int64_t>(d.params.get("num_conv", 16));
  return s;
}

class SrvggCompact : public NativeModel {
 public:
  SrvggCompact(const weights::StateDict& dict, const DetectedArch& d, const std::string& source)
      : NativeModel(declared_info(d), source), shape_(shape_of(d)) {
    WeightReader r(dict, source);
    const auto& s = shape_;
    for (int64_t i = 0; i <= s.num_conv; ++i) {
      convs_.push_back(read_conv(r, str("body.", 2 * i), i == 0 ? s.in : s.feat, s.feat, 3));
      slopes_.push_back(r.tensor(str("body.", 2 * i + 1, ".weight"), {s.feat}));
    }
    convs_.push_back(read_conv(r, str("body.", 2 * s.num_conv + 2), s.feat, s.out * s.scale * s.scale, 3));
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& x) override {
    at::Tensor y = x;
    for (size_t i = 0; i < slopes_.size(); ++i) {
      const Conv2d& c = convs_[i];
      y = infer::conv2d_prelu(y, c.weight, c.bias, c.stride, c.padding, slopes_[i]);
    }
    y = at::pixel_shuffle(convs_.back()(y), shape_.scale);
    // With out != in channels there is no residual to add (upstream would fail too); only 3->3 and
    // 1->1 models exist in practice.
    if (shape_.in == shape_.out) y.add_(upsample_nearest(x, shape_.scale));
    return y;
  }

  void visit_weights(const TensorVisitor& f) override {
    for (auto& c : convs_) visit(c, f);
    for (auto& t : slopes_) f(t);
  }

 private:
  CompactShape shape_;
  std::vector<Conv2d> convs_;
  std::vector<at::Tensor> slopes_;
};

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  // PReLU slopes at body.1 tell Compact apart from other "body.N" networks (EDSR, RRDB's body.0.rdb1).
  auto feat = dim_of(dict, "body.0.weight", 4, 0);
  auto slopes = dim_of(dict, "body.1.weight", 1, 0);
  if (!feat || !slopes || *feat != *slopes) return std::nullopt;
  const std::set<int> indices = key_indices(dict, "body.");
  const int last = *indices.rbegin();
  if (last < 2 || last % 2 != 0)
    throw Error(ErrorKind::Model, str(source, ": Compact (SRVGG) layout with body.", last, " as last layer; expected an even index >= 2"));
  auto final_channels = dim_of(dict, str("body.", last, ".weight"), 4, 0);
  auto in = dim_of(dict, "body.0.weight", 4, 1);
  if (!final_channels || !in)
    throw Error(ErrorKind::Model, str(source, ": Compact (SRVGG) layout: body.", last, ".weight is not a convolution"));
  auto scale = shuffle_factor(*final_channels, *in);
  if (!scale) {
    throw Error(ErrorKind::Model, str(source, ": Compact (SRVGG) layout: last convolution has ", *final_channels,
                                      " outputs, not in_channels (", *in, ") times a square scale"));
  }
  // Checked before they narrow to int: 2^32 + 3 channels would otherwise pass as 3.
  arch::check_shapes("srvgg_compact", {{"num_feat", double(*feat)}, {"in_channels", double(*in)}}, source);
  DetectedArch d;
  d.arch = "srvgg_compact";
  d.scale = *scale;
  d.in_channels = d.out_channels = static_cast<int>(*in);
  d.params = {{"num_feat", double(*feat)}, {"num_conv", double((last - 2) / 2)}};
  return d;
}

}  // namespace

Architecture srvgg_compact_architecture() {
  return {"srvgg_compact", detect,
          [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return std::make_unique<SrvggCompact>(dict, d, source);
          }};
}

}  // namespace framelift::models
