// PLKSR (Partial Large Kernel CNNs for Efficient Super-Resolution, Lee et al. 2024): a 3x3 stem,
// n_blocks PLK blocks and a 3x3 to 3 * scale^2 channels, to which the input (each channel
// repeated scale^2 times) is added before the pixel shuffle. A block is x + refine(attn(lk(mix(x)))):
// a channel mixer of two convolutions with GELU between (CCM 3x3 then 1x1, ICCM 1x1 then 3x3,
// DCCM 3x3 twice), a large kernel (17 published, 13 for the tiny model) over the first
// dim * split_ratio channels only, an element-wise attention x * sigmoid(conv3x3(x)) and a 1x1.
//
// The paper's ablation "RectSparsePLK" sums an m x m/3, an m/3 x m and an m/3 x m/3 kernel over
// the same channels: those are folded at load into one m x m kernel, which computes the same sum.
// Its "SparsePLK" (dilated kernels) is refused: the dilations are not in the checkpoint.
//
// State dict: feats.0 (stem), feats.{1..n}.{channe_mixer.{0,2}, lk.conv | lk.{mn,nm,nn}_conv,
// attn.f.0, refine} (upstream's "channe_mixer" spelling), feats.{n+1} (tail). Upstream:
// dslisleedh/PLKSR; the layout read here is chaiNNer-org/spandrel's PLKSR arch.
#include <ATen/ATen.h>

#include "infer/layout_ops.h"
#include "models/builtin_architectures.h"
#include "models/plksr_layers.h"
#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

struct Block {
  Conv2d mix_in, mix_out, refine;
  PartialConv lk;
  ElementAttention attn;
};

// The three rectangular kernels of a RectSparsePLK layer, centred in one m x m kernel.
Conv2d read_rect_sparse(WeightReader& r, const std::string& p, int64_t c, int64_t m) {
  const int64_t n = m / 3, o = (m - n) / 2;
  const at::Tensor mn = r.tensor(p + ".mn_conv.weight", {c, c, m, n}), nm = r.tensor(p + ".nm_conv.weight", {c, c, n, m});
  const at::Tensor nn = r.tensor(p + ".nn_conv.weight", {c, c, n, n});
  at::Tensor w = at::zeros({c, c, m, m});
  w.narrow(3, o, n).add_(mn);
  w.narrow(2, o, n).add_(nm);
  w.narrow(2, o, n).narrow(3, o, n).add_(nn);
  const at::Tensor b = r.tensor(p + ".mn_conv.bias", {c}) + r.tensor(p + ".nm_conv.bias", {c}) + r.tensor(p + ".nn_conv.bias", {c});
  return Conv2d{w, b, 1, m / 2};
}

class Plksr : public NativeModel {
 public:
  Plksr(const weights::StateDict& dict, const DetectedArch& d, const std::string& source)
      : NativeModel(declared_info(d), source), scale_(d.scale) {
    WeightReader r(dict, source);
    const int64_t dim = int64_t(d.params.get("dim", 64)), blocks = int64_t(d.params.get("n_blocks", 28));
    const int64_t k = int64_t(d.params.get("kernel_size", 17)), lk = int64_t(d.params.get("lk_channels", 16));
    const int64_t k_in = int64_t(d.params.get("mixer_kernel_in", 3)), k_out = int64_t(d.params.get("mixer_kernel_out", 1));
    const bool rect = d.params.get("rect_sparse", 0) != 0, ea = d.params.get("ea", 1) != 0;
    stem_ = read_conv(r, "feats.0", 3, dim, 3);
    for (int64_t i = 1; i <= blocks; ++i) {
      const std::string p = str("feats.", i);
      Block b;
      b.mix_in = read_conv(r, p + ".channe_mixer.0", dim, 2 * dim, k_in);
      b.mix_out = read_conv(r, p + ".channe_mixer.2", 2 * dim, dim, k_out);
      b.lk.conv = rect ? read_rect_sparse(r, p + ".lk", lk, k) : read_conv(r, p + ".lk.conv", lk, lk, k);
      if (ea) b.attn.conv = read_conv(r, p + ".attn.f.0", dim, dim, 3);
      b.refine = read_conv(r, p + ".refine", dim, dim, 1);
      blocks_.push_back(std::move(b));
    }
    tail_ = read_conv(r, str("feats.", blocks + 1), dim, 3 * d.scale * d.scale, 3);
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    at::Tensor y = stem_(input);
    for (const Block& b : blocks_) y = b.refine(b.attn(b.lk(b.mix_out(infer::gelu(b.mix_in(y)))))) + y;
    return at::pixel_shuffle(tail_(y) + repeat_channels(input, scale_), scale_);
  }

  void visit_weights(const TensorVisitor& f) override {
    visit(stem_, f);
    for (auto& b : blocks_) {
      for (Conv2d* c : {&b.mix_in, &b.mix_out, &b.lk.conv, &b.attn.conv, &b.refine}) visit(*c, f);
    }
    visit(tail_, f);
  }

 private:
  int64_t scale_;
  Conv2d stem_, tail_;
  std::vector<Block> blocks_;
};

// The large kernel's size and channels, from whichever layout the first block has.
std::pair<int64_t, int64_t> large_kernel(const weights::StateDict& dict, const std::string& source, bool rect) {
  const std::string key = rect ? "feats.1.lk.mn_conv.weight" : "feats.1.lk.conv.weight";
  const auto c = dim_of(dict, key, 4, 0), k = dim_of(dict, key, 4, 2);
  if (!c || !k) throw Error(ErrorKind::Model, str(source, ": PLKSR layout: ", key, " is not a convolution"));
  // Even kernels (or an even m/3) do not keep the frame size upstream either.
  if (*k % 2 == 0 || (rect && (*k / 3) % 2 == 0))
    throw Error(ErrorKind::Model, str(source, ": PLKSR layout: ", key, " has an even kernel (", *k, ")"));
  return {*k, *c};
}

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  for (const char* key : {"feats.0.weight", "feats.1.channe_mixer.0.weight", "feats.1.refine.weight"})
    if (!dict.count(key)) return std::nullopt;
  const bool rect = dict.count("feats.1.lk.mn_conv.weight") != 0;
  if (dict.count("feats.1.lk.convs.0.weight"))
    throw Error(ErrorKind::Model, str(source, ": PLKSR with the sparse (dilated) large kernel is not supported: "
                                              "its dilations are not recorded in the checkpoint"));
  if (!rect && !dict.count("feats.1.lk.conv.weight")) return std::nullopt;
  const auto dim = dim_of(dict, "feats.0.weight", 4, 0), in = dim_of(dict, "feats.0.weight", 4, 1);
  const auto k_in = dim_of(dict, "feats.1.channe_mixer.0.weight", 4, 2), k_out = dim_of(dict, "feats.1.channe_mixer.2.weight", 4, 2);
  if (!dim || !in || !k_in || !k_out)
    throw Error(ErrorKind::Model, str(source, ": PLKSR layout: feats.0 or feats.1.channe_mixer is not a convolution"));
  if (*in != 3) throw Error(ErrorKind::Model, str(source, ": PLKSR with ", *in, " input channels (upstream has 3)"));
  if (*k_in == 1 && *k_out == 1) throw Error(ErrorKind::Model, str(source, ": PLKSR layout: a channel mixer of two 1x1 convolutions"));
  const int length = feats_length(dict);
  const auto up = dim_of(dict, str("feats.", length - 1, ".weight"), 4, 0);
  const std::optional<int> scale = up ? shuffle_factor(*up, 3) : std::nullopt;
  if (length < 3 || !scale)
    throw Error(ErrorKind::Model, str(source, ": PLKSR layout: the last layer, feats.", length - 1, ", is not a convolution to 3 * scale^2"));
  const auto [k, lk] = large_kernel(dict, source, rect);
  DetectedArch d;
  d.arch = "plksr";
  d.scale = *scale;
  d.params = {{"dim", double(*dim)},           {"n_blocks", double(length - 2)},    {"kernel_size", double(k)},
              {"lk_channels", double(lk)},     {"mixer_kernel_in", double(*k_in)}, {"mixer_kernel_out", double(*k_out)},
              {"rect_sparse", rect ? 1.0 : 0}, {"ea", dict.count("feats.1.attn.f.0.weight") ? 1.0 : 0}};
  return d;
}

}  // namespace

Architecture plksr_architecture() {
  return {"plksr", detect,
          [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return std::make_unique<Plksr>(dict, d, source);
          }};
}

}  // namespace framelift::models
