// RRDBNet: ESRGAN and Real-ESRGAN (realesrgan-x4plus, -x4plus-anime with 6 blocks, x2plus) and the
// many community ESRGAN models. nb residual-in-residual dense blocks (three 5-conv dense blocks
// each, growth gc, residuals scaled by 0.2) on nf features, then nearest x2 + conv per upscaling
// step, conv_hr and conv_last. Real-ESRGAN's x2/x1 variants pixel-unshuffle the input first
// (conv_first sees 4x/16x the channels) and keep the 4x body.
//
// Three key layouts name the same weights; all are renamed to Real-ESRGAN's before building:
//   Real-ESRGAN  conv_first, body.N.rdbM.convK, conv_body, conv_up1/2, conv_hr, conv_last
//   BSRGAN       conv_first, RRDB_trunk.N.RDBM.convK, trunk_conv, upconv1/2, HRconv, conv_last
//   old ESRGAN   model.0, model.1.sub.N.RDBM.convK.0, model.1.sub.<nb>, then one model.K conv per
//                upscaling step (after an Upsample), the HR conv and the last conv
// Upstream: xinntao/Real-ESRGAN (basicsr/archs/rrdbnet_arch.py), xinntao/ESRGAN RRDBNet_arch.py.
#include <regex>

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

constexpr double kSlope = 0.2;
constexpr double kResidualScale = 0.2;

at::Tensor conv_lrelu(const Conv2d& c, const at::Tensor& x) {
  return infer::conv2d_leaky_relu(x, c.weight, c.bias, c.stride, c.padding, kSlope);
}

// Old ESRGAN: top-level convs after the trunk, in order, are the upscaling convs, conv_hr and
// conv_last; their indices depend on the scale, so they are named by rank.
weights::StateDict rename_old_esrgan(const weights::StateDict& dict) {
  static const std::regex rdb(R"(model\.1\.sub\.(\d+)\.RDB(\d)\.conv(\d)\.0\.(weight|bias))");
  static const std::regex trunk_end(R"(model\.1\.sub\.(\d+)\.(weight|bias))");
  static const std::regex top(R"(model\.(\d+)\.(weight|bias))");
  std::set<int> tail = key_indices(dict, "model.");
  tail.erase(tail.begin(), tail.lower_bound(2));
  std::vector<int> order(tail.begin(), tail.end());
  auto tail_name = [&](int k) -> std::string {
    const size_t rank = std::find(order.begin(), order.end(), k) - order.begin();
    if (rank + 1 == order.size()) return "conv_last";
    if (rank + 2 == order.size()) return "conv_hr";
    return str("conv_up", rank + 1);
  };
  weights::StateDict out;
  std::smatch m;
  for (const auto& [key, t] : dict) {
    std::string name = key;
    if (std::regex_match(key, m, rdb)) name = str("body.", m[1], ".rdb", m[2], ".conv", m[3], ".", m[4]);
    else if (std::regex_match(key, m, trunk_end)) name = str("conv_body.", m[2]);
    else if (key.rfind("model.0.", 0) == 0) name = "conv_first" + key.substr(7);
    else if (std::regex_match(key, m, top) && std::stoi(m[1]) >= 2) name = str(tail_name(std::stoi(m[1])), ".", m[2]);
    out.emplace(std::move(name), t);
  }
  return out;
}

weights::StateDict rename_bsrgan(const weights::StateDict& dict) {
  static const std::regex rdb(R"(RRDB_trunk\.(\d+)\.RDB(\d)\.conv(\d)\.(weight|bias))");
  weights::StateDict out;
  std::smatch m;
  for (const auto& [key, t] : dict) {
    std::string name = key;
    if (std::regex_match(key, m, rdb)) name = str("body.", m[1], ".rdb", m[2], ".conv", m[3], ".", m[4]);
    else if (key.rfind("trunk_conv.", 0) == 0) name = "conv_body" + key.substr(10);
    else if (key.rfind("upconv", 0) == 0) name = "conv_up" + key.substr(6);
    else if (key.rfind("HRconv.", 0) == 0) name = "conv_hr" + key.substr(6);
    out.emplace(std::move(name), t);
  }
  return out;
}

std::optional<weights::StateDict> to_realesrgan_keys(const weights::StateDict& dict) {
  if (dict.count("conv_first.weight") && dict.count("body.0.rdb1.conv1.weight")) return dict;
  if (dict.count("conv_first.weight") && dict.count("RRDB_trunk.0.RDB1.conv1.weight")) return rename_bsrgan(dict);
  if (dict.count("model.0.weight") && dict.count("model.1.sub.0.RDB1.conv1.0.weight")) return rename_old_esrgan(dict);
  return std::nullopt;
}

struct RrdbShape {
  int64_t in = 3, out = 3, nf = 64, nb = 23, gc = 32, num_up = 2, unshuffle = 1;
};

RrdbShape shape_of(const DetectedArch& d) {
  RrdbShape s;
  s.in = d.in_channels;
  s.out = d.out_channels;
  s.nf = static_cast<int64_t>(d.params.get("nf", double(s.nf)));
  s.nb = static_cast<int64_t>(d.params.get("nb", double(s.nb)));
  s.gc = static_cast<int64_t>(d.params.get("gc", double(s.gc)));
  s.num_up = static_cast<int64_t>(d.params.get("upsample_steps", double(s.num_up)));
  s.unshuffle = static_cast<int64_t>(d.params.get("pixel_unshuffle", double(s.unshuffle)));
  return s;
}

struct DenseBlock {
  Conv2d conv[5];

  at::Tensor operator()(const at::Tensor& x) const {
    std::vector<at::Tensor> feats{x};
    for (int i = 0; i < 4; ++i) {
      feats.push_back(conv_lrelu(conv[i], at::cat(feats, 1)));
    }
    return conv[4](at::cat(feats, 1)).mul_(kResidualScale).add_(x);
  }
};

struct Rrdb {
  DenseBlock rdb[3];

  at::Tensor operator()(const at::Tensor& x) const {
    return rdb[2](rdb[1](rdb[0](x))).mul_(kResidualScale).add_(x);
  }
};

class RrdbNet : public NativeModel {
 public:
  RrdbNet(const weights::StateDict& renamed, const DetectedArch& d, const std::string& source)
      : NativeModel(declared_info(d), source), shape_(shape_of(d)) {
    const auto& s = shape_;
    WeightReader r(renamed, source);
    conv_first_ = read_conv(r, "conv_first", s.in * s.unshuffle * s.unshuffle, s.nf, 3);
    blocks_.resize(s.nb);
    for (int64_t b = 0; b < s.nb; ++b)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 5; ++k)
          blocks_[b].rdb[j].conv[k] = read_conv(r, str("body.", b, ".rdb", j + 1, ".conv", k + 1), s.nf + k * s.gc,
                                                k == 4 ? s.nf : s.gc, 3);
    conv_body_ = read_conv(r, "conv_body", s.nf, s.nf, 3);
    for (int64_t i = 0; i < s.num_up; ++i) ups_.push_back(read_conv(r, str("conv_up", i + 1), s.nf, s.nf, 3));
    conv_hr_ = read_conv(r, "conv_hr", s.nf, s.nf, 3);
    conv_last_ = read_conv(r, "conv_last", s.nf, s.out, 3);
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& x) override {
    at::Tensor feat = conv_first_(shape_.unshuffle > 1 ? at::pixel_unshuffle(x, shape_.unshuffle) : x);
    at::Tensor trunk = feat;
    for (const auto& block : blocks_) trunk = block(trunk);
    feat = conv_body_(trunk).add_(feat);
    for (const auto& up : ups_) feat = conv_lrelu(up, upsample_nearest(feat, 2));
    return conv_last_(conv_lrelu(conv_hr_, feat));
  }

  void visit_weights(const TensorVisitor& f) override {
    visit(conv_first_, f);
    for (auto& b : blocks_)
      for (auto& d : b.rdb)
        for (auto& c : d.conv) visit(c, f);
    visit(conv_body_, f);
    for (auto& c : ups_) visit(c, f);
    visit(conv_hr_, f);
    visit(conv_last_, f);
  }

 private:
  RrdbShape shape_;
  Conv2d conv_first_, conv_body_, conv_hr_, conv_last_;
  std::vector<Rrdb> blocks_;
  std::vector<Conv2d> ups_;
};

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  auto renamed = to_realesrgan_keys(dict);
  if (!renamed) return std::nullopt;
  const auto& sd = *renamed;
  auto fail = [&](const std::string& why) { return Error(ErrorKind::Model, str(source, ": ESRGAN (RRDBNet) layout: ", why)); };
  auto nf = dim_of(sd, "conv_first.weight", 4, 0);
  auto in_raw = dim_of(sd, "conv_first.weight", 4, 1);
  auto out = dim_of(sd, "conv_last.weight", 4, 0);
  auto gc = dim_of(sd, "body.0.rdb1.conv1.weight", 4, 0);
  if (!nf || !in_raw || !gc) throw fail("conv_first or body.0.rdb1.conv1 is not a convolution");
  if (!out) throw fail("no final convolution (conv_last)");
  const std::set<int> blocks = key_indices(sd, "body.");
  const int nb = *blocks.rbegin() + 1;
  if (static_cast<int>(blocks.size()) != nb) throw fail(str("blocks are not numbered 0..", nb - 1));
  int num_up = 0;
  while (sd.count(str("conv_up", num_up + 1, ".weight"))) ++num_up;
  // Counted off key names a crafted file can repeat: bounded before the shift below (x16 at most).
  if (num_up > 4) throw fail(str(num_up, " upscaling steps (conv_up1..", num_up, "): at most 4 (x16)"));
  // Real-ESRGAN x2/x1 models pixel-unshuffle the input by 2/4 before conv_first.
  int64_t unshuffle = 1;
  if (*in_raw == *out * 16) unshuffle = 4;
  else if (*in_raw == *out * 4) unshuffle = 2;
  const int64_t up = int64_t{1} << num_up;
  if (up % unshuffle != 0) throw fail(str(num_up, " upscaling steps cannot undo a pixel unshuffle by ", unshuffle));
  // Checked before they narrow to int: 2^32 + 3 channels would otherwise pass as 3.
  arch::check_shapes("rrdbnet", {{"in_channels", double(*in_raw / (unshuffle * unshuffle))}, {"out_channels", double(*out)}}, source);
  DetectedArch d;
  d.arch = "rrdbnet";
  d.scale = static_cast<int>(up / unshuffle);
  d.in_channels = static_cast<int>(*in_raw / (unshuffle * unshuffle));
  d.out_channels = static_cast<int>(*out);
  d.params = {{"nf", double(*nf)},
              {"nb", double(nb)},
              {"gc", double(*gc)},
              {"upsample_steps", double(num_up)},
              {"pixel_unshuffle", double(unshuffle)}};
  d.variant = dict.count("model.0.weight") ? "esrgan_old" : dict.count("RRDB_trunk.0.RDB1.conv1.weight") ? "bsrgan" : "realesrgan";
  return d;
}

}  // namespace

Architecture rrdbnet_architecture() {
  return {"rrdbnet", detect,
          [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            auto renamed = to_realesrgan_keys(dict);
            if (!renamed) throw Error(ErrorKind::Model, str(source, ": not an ESRGAN (RRDBNet) state dict"));
            return std::make_unique<RrdbNet>(*renamed, d, source);
          }};
}

}  // namespace framelift::models
