#include "models/swin_layout.h"

#include <cmath>

#include "arch/declaration.h"
#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

int64_t blocks_in(const weights::StateDict& dict, int64_t layer) {
  return int64_t(key_indices(dict, str("layers.", layer, ".residual_group.blocks.")).size());
}

}  // namespace

Error SwinLayoutChecks::fail(const std::string& why) const {
  return Error(ErrorKind::Model, str(source_, ": ", arch_, " layout: ", why));
}

int64_t SwinLayoutChecks::dim(const std::string& key, int64_t rank, int64_t axis) const {
  const auto v = dim_of(dict_, key, rank, axis);
  if (!v) throw fail(str("tensor ", key, " is missing or has an unexpected rank"));
  return *v;
}

void SwinLayoutChecks::expect_uniform(int64_t groups, const std::function<int64_t(int64_t)>& depth_of,
                                      const std::function<std::optional<int64_t>(int64_t)>& heads_of, const std::string& group,
                                      const std::string& unit) const {
  const int64_t depth = depth_of(0);
  const std::optional<int64_t> heads = heads_of(0);
  for (int64_t i = 1; i < groups; ++i) {
    const std::optional<int64_t> h = heads_of(i);
    if (depth_of(i) != depth || h != heads)
      throw fail(str(group, " ", i, " has ", depth_of(i), " ", unit, " and ", h.value_or(0), " heads where ", group, " 0 has ", depth,
                     " and ", heads.value_or(0), "; only uniform ", group, "s are supported"));
  }
}

SwinShape read_swin_body(const weights::StateDict& dict, const std::string& source, const std::string& arch,
                         const std::string& declared, const std::string& first,
                         const std::function<std::optional<int64_t>(int64_t)>& heads_of) {
  const SwinLayoutChecks checks(dict, source, arch);
  const std::string block = "layers.0.residual_group.blocks.0.";
  const auto embed = dim_of(dict, first, 4, 0), in = dim_of(dict, first, 4, 1);
  const auto hidden = dim_of(dict, block + "mlp.fc1.bias", 1, 0);
  const auto index = dim_of(dict, block + "attn.relative_position_index", 2, 0);
  const auto heads = heads_of(0);
  if (!embed || !in || !hidden || !index || !heads)
    throw checks.fail("conv_first, mlp.fc1 or the attention's tables have unexpected ranks");
  // The declared constraints before anything below (or the builder) divides by these.
  arch::check_shapes(declared, {{"embed_dim", double(*embed)}, {"heads", double(*heads)}, {"mlp_hidden", double(*hidden)},
                                {"in_channels", double(*in)}, {"window_tokens", double(*index)}},
                     source);
  const int64_t window = std::llround(std::sqrt(double(*index)));
  if (window * window != *index) throw checks.fail(str("relative_position_index has ", *index, " rows, not a square window"));

  // Every layer alike: the builder and the cost walk take one depth.
  const int64_t layers = int64_t(key_indices(dict, "layers.").size()), depth = blocks_in(dict, 0);
  checks.expect_uniform(layers, [&](int64_t i) { return blocks_in(dict, i); }, heads_of);
  SwinShape s;
  s.in = *in;
  s.embed = *embed;
  s.layers = layers;
  s.depth = depth;
  s.heads = *heads;
  s.window = window;
  s.hidden = *hidden;
  s.upsampler = swin_upsampler_of(dict);
  s.feat = swin_reconstruction_features(dict);
  s.three_conv = !dict.count("conv_after_body.weight");
  s.img_range = window == 7 ? 255.0 : 1.0;
  return s;
}

arch::ArchParams swin_params(const SwinShape& s) {
  return {{"embed_dim", double(s.embed)}, {"layers", double(s.layers)},          {"depth", double(s.depth)},
          {"heads", double(s.heads)},     {"window_size", double(s.window)},     {"mlp_hidden", double(s.hidden)},
          {"upsampler", double(int(s.upsampler))}, {"num_feat", double(s.feat)}, {"three_conv", s.three_conv ? 1.0 : 0.0},
          {"img_range", s.img_range}};
}

SwinShape swin_shape_of(const DetectedArch& d) {
  const auto& p = d.params;
  SwinShape s;
  s.in = d.in_channels;
  s.out = d.out_channels;
  s.embed = int64_t(p.get("embed_dim", 96));
  s.layers = int64_t(p.get("layers", 4));
  s.depth = int64_t(p.get("depth", 6));
  s.heads = int64_t(p.get("heads", 6));
  s.window = int64_t(p.get("window_size", 8));
  s.hidden = int64_t(p.get("mlp_hidden", 2.0 * s.embed));
  s.feat = int64_t(p.get("num_feat", 64));
  s.unshuffle = int64_t(p.get("unshuffle", 1));
  s.scale = d.scale * s.unshuffle;
  s.upsampler = SwinUpsampler(int(p.get("upsampler", 0)));
  s.three_conv = p.get("three_conv", 0) != 0;
  s.patch_norm = p.get("patch_norm", 1) != 0;
  s.after_body = p.get("conv_after_body", 1) != 0;
  s.img_range = p.get("img_range", 1);
  return s;
}

SwinFrame swin_frame(const SwinShape& s) {
  SwinFrame f;
  f.in = s.in;
  f.out = s.out;
  f.embed = s.embed;
  f.groups = s.layers;
  f.feat = s.feat;
  f.scale = s.scale;
  f.unshuffle = s.unshuffle;
  f.upsampler = s.upsampler;
  f.img_range = s.img_range;
  f.three_conv = s.three_conv;
  if (!s.patch_norm) f.embed_norm.clear();
  f.after_body = s.after_body;
  f.masks.emplace(s.window, s.window / 2);
  return f;
}

}  // namespace framelift::models
