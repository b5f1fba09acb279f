// SAFMN (Sun et al. 2023, "Spatially-Adaptive Feature Modulation for Efficient Image
// Super-Resolution"): a 3x3 conv, n_blocks of [x + SAFM(LN(x)), then x + CCM(LN(x))], plus the
// first features, then a 3x3 to 3 * scale^2 and a pixel shuffle.
//   SAFM  the features split into 4 chunks; chunk 0 through a depthwise 3x3, chunk i > 0 max-pooled
//         to 1/2^i, a depthwise 3x3, nearest back up; a 1x1 over all, GELU, times the input.
//   CCM   3x3 to the hidden width, GELU, 1x1 back.
// LayerNorms are channels-first with eps 1e-6. Inputs are multiples of 8 (spandrel's size
// requirement: the 1/8 pooling level then tiles the map exactly); callers reflect-pad.
//
// State dict (sunny2109/SAFMN, chaiNNer-org/spandrel): to_feat, feats.N.{norm1, norm2,
// safm.{mfr.0..3, aggr}, ccm.ccm.{0, 2}}, to_img.0.
#include <ATen/ATen.h>

#include "infer/layout_ops.h"
#include "models/builtin_architectures.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "models/token_layers.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr int kLevels = 4;

struct Block {
  ChannelNorm norm1, norm2;
  std::vector<Conv2d> levels;  // depthwise 3x3 per chunk
  Conv2d aggregate, expand, project;

  at::Tensor safm(const at::Tensor& x) const {
    const int64_t h = x.size(2), w = x.size(3);
    const std::vector<at::Tensor> chunks = x.chunk(kLevels, 1);
    std::vector<at::Tensor> out;
    for (int i = 0; i < kLevels; ++i) {
      if (i == 0) {
        out.push_back(depthwise(levels[0], chunks[0]));
        continue;
      }
      const auto pooled = at::adaptive_max_pool2d(chunks[i], {h >> i, w >> i});
      out.push_back(at::upsample_nearest2d(depthwise(levels[i], std::get<0>(pooled)), {h, w}));
    }
    return infer::gelu(aggregate(at::cat(out, 1))) * x;
  }

  at::Tensor operator()(const at::Tensor& x) const {
    const at::Tensor y = safm(norm1(x)) + x;
    return project(infer::gelu(expand(norm2(y)))) + y;
  }

  void visit_weights(const TensorVisitor& f) {
    norm1.visit_weights(f);
    norm2.visit_weights(f);
    for (Conv2d& c : levels) visit(c, f);
    for (Conv2d* c : {&aggregate, &expand, &project}) visit(*c, f);
  }
};

class Safmn : public NativeModel {
 public:
  Safmn(const weights::StateDict& dict, const DetectedArch& d, const std::string& source)
      : NativeModel(declared_info(d), source), scale_(d.scale) {
    WeightReader r(dict, source);
    const int64_t dim = int64_t(d.params.get("dim", 36)), hidden = int64_t(d.params.get("ffn_hidden", 2 * dim));
    const int blocks = int(d.params.get("n_blocks", 8));
    first_ = read_conv(r, "to_feat", 3, dim, 3);
    for (int i = 0; i < blocks; ++i) {
      const std::string p = str("feats.", i);
      Block b{read_channel_norm(r, p + ".norm1", dim), read_channel_norm(r, p + ".norm2", dim), {}, {}, {}, {}};
      for (int l = 0; l < kLevels; ++l) {
        Conv2d c;
        c.weight = r.tensor(str(p, ".safm.mfr.", l, ".weight"), {dim / kLevels, 1, 3, 3});
        c.bias = r.tensor(str(p, ".safm.mfr.", l, ".bias"), {dim / kLevels});
        c.padding = 1;
        b.levels.push_back(c);
      }
      b.aggregate = read_conv(r, p + ".safm.aggr", dim, dim, 1, 1, 0);
      b.expand = read_conv(r, p + ".ccm.ccm.0", dim, hidden, 3);
      b.project = read_conv(r, p + ".ccm.ccm.2", hidden, dim, 1, 1, 0);
      blocks_.push_back(std::move(b));
    }
    to_img_ = read_conv(r, "to_img.0", dim, 3 * d.scale * d.scale, 3);
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    const at::Tensor first = first_(input);
    at::Tensor y = first;
    for (const Block& b : blocks_) y = b(y);
    return at::pixel_shuffle(to_img_(y + first), scale_);
  }

  void visit_weights(const TensorVisitor& f) override {
    visit(first_, f);
    for (Block& b : blocks_) b.visit_weights(f);
    visit(to_img_, f);
  }

 private:
  int64_t scale_;
  Conv2d first_, to_img_;
  std::vector<Block> blocks_;
};

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  for (const char* key : {"to_feat.weight", "feats.0.norm1.weight", "feats.0.safm.mfr.0.weight", "feats.0.safm.aggr.weight",
                          "feats.0.ccm.ccm.0.weight", "to_img.0.weight"})
    if (!dict.count(key)) return std::nullopt;
  const auto dim = dim_of(dict, "to_feat.weight", 4, 0), hidden = dim_of(dict, "feats.0.ccm.ccm.0.weight", 4, 0);
  const auto out = dim_of(dict, "to_img.0.weight", 4, 0);
  if (!dim || !hidden || !out) throw Error(ErrorKind::Model, str(source, ": SAFMN layout: to_feat, ccm or to_img is not a convolution"));
  if (*dim % kLevels) throw Error(ErrorKind::Model, str(source, ": SAFMN with ", *dim, " features does not split into 4 levels"));
  const std::optional<int> scale = shuffle_factor(*out, 3);
  if (!scale) throw Error(ErrorKind::Model, str(source, ": SAFMN layout: to_img.0 has ", *out, " outputs, not 3 times a square scale"));
  DetectedArch d;
  d.arch = "safmn";
  d.scale = *scale;
  d.params = {{"dim", double(*dim)}, {"n_blocks", double(key_indices(dict, "feats.").size())}, {"ffn_hidden", double(*hidden)}};
  return d;
}

}  // namespace

Architecture safmn_architecture() {
  return {"safmn", detect,
          [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return std::make_unique<Safmn>(dict, d, source);
          }};
}

}  // namespace framelift::models
