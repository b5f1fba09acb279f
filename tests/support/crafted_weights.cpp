#include "support/crafted_weights.h"

#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

namespace framelift::test {

void write_crafted_safetensors(const std::filesystem::path& file, const std::vector<CraftedTensor>& tensors) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  uint64_t offset = 0;
  auto bytes_of = [](const CraftedTensor& t) {
    uint64_t bytes = 4;
    for (int64_t d : t.shape) bytes *= uint64_t(d);
    return bytes;
  };
  // Tensors with no bytes (an axis of 0: the crafted ones) go after the data, so that none shares
  // its offset with a tensor that has bytes (framelift's reader calls that an overlap).
  for (const bool empty : {false, true})
    for (const CraftedTensor& t : tensors) {
      const uint64_t bytes = bytes_of(t);
      if ((bytes == 0) != empty) continue;
      header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
      offset += bytes;
    }
  const std::string text = header.dump();
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  const uint64_t length = text.size();
  for (int i = 0; i < 8; ++i) out.put(char(length >> (8 * i)));
  out << text << std::string(offset, '\0');
  ASSERT_TRUE(out.good()) << "cannot write " << file;
}

const std::vector<std::string>& attention_architectures() {
  static const std::vector<std::string> names = {"swinir", "swin2sr", "hat", "srformer", "atd", "drct", "dat", "scunet"};
  return names;
}

namespace {

// Window 8: a 64-token index, a (2 * 8 - 1)^2 = 225-row position table.
constexpr int64_t kTokens = 64, kSpan = 225;

std::vector<CraftedTensor> swin_body(int64_t heads, int64_t c, const std::string& heads_key, std::vector<int64_t> heads_shape) {
  const std::string b = "layers.0.residual_group.blocks.0.";
  return {{"conv_first.weight", {c, 3, 3, 3}},
          {"patch_embed.norm.weight", {c}},
          {b + "norm1.weight", {c}},
          {b + "mlp.fc1.bias", {2 * c}},
          {b + "attn.relative_position_index", {kTokens, kTokens}},
          {b + heads_key, heads_shape}};
}

}  // namespace

std::vector<CraftedTensor> attention_layout(const std::string& arch, int64_t heads, int64_t c) {
  const std::string g = "layers.0.residual_group.";
  if (arch == "swinir") return swin_body(heads, c, "attn.relative_position_bias_table", {kSpan, heads});
  if (arch == "swin2sr") {
    auto t = swin_body(heads, c, "attn.logit_scale", {heads, 1, 1});
    t.push_back({"patch_embed.proj.weight", {c, c, 1, 1}});
    return t;
  }
  if (arch == "hat")  // an overlapping window of 12 around the window of 8
    return {{"conv_first.weight", {c, 3, 3, 3}},          {"relative_position_index_SA", {kTokens, kTokens}},
            {"relative_position_index_OCA", {kTokens, 144}}, {g + "blocks.0.conv_block.cab.0.weight", {c / 3 + 1, c, 3, 3}},
            {g + "overlap_attn.relative_position_bias_table", {23 * 23, heads}}, {"conv_last.weight", {3, c, 3, 3}}};
  if (arch == "srformer")  // permuted windows: 64 queries against 16 keys
    return {{"conv_first.weight", {c, 3, 3, 3}},
            {g + "blocks.0.norm1.weight", {c}},
            {g + "blocks.0.mlp.fc1.bias", {2 * c}},
            {g + "blocks.0.attn.aligned_relative_position_index", {kTokens, 16}},
            {g + "blocks.0.attn.relative_position_bias_table", {kSpan, heads}}};
  if (arch == "atd") {
    const std::string l = g + "layers.0.";
    return {{"conv_first.weight", {c, 3, 3, 3}}, {"relative_position_index_SA", {kTokens, kTokens}}, {g + "td", {8, c}},
            {l + "attn_atd.scale", {8}},        {l + "attn_aca.logit_scale", {heads, 1, 1}},       {l + "wqkv.weight", {3 * c, c}},
            {l + "attn_win.relative_position_bias_table", {kSpan, heads}}};
  }
  if (arch == "drct")
    return {{"conv_first.weight", {c, 3, 3, 3}}, {"layers.0.swin1.attn.relative_position_bias_table", {kSpan, heads}},
            {"layers.0.swin1.mlp.fc1.weight", {2 * c, c}}, {"layers.0.adjust1.weight", {8, c, 1, 1}},
            {"layers.0.adjust5.weight", {c, c + 32, 1, 1}}, {"norm.weight", {c}}, {"conv_last.weight", {3, c, 3, 3}}};
  if (arch == "dat") {  // a 1 x 1 split (a zero offset table); heads = 2 x the position MLP's rows
    const std::string b = "layers.0.blocks.0.";
    return {{"conv_first.weight", {c, 3, 3, 3}},        {"before_RG.1.weight", {c}},
            {b + "attn.attns.0.rpe_biases", {1, 2}},     {b + "attn.attns.0.relative_position_index", {1, 1}},
            {b + "ffn.sg.conv.weight", {c, 1, 3, 3}},    {b + "ffn.fc1.weight", {2 * c, c}},
            {b + "attn.attns.0.pos.pos3.2.weight", {heads / 2, 8}}};
  }
  if (arch == "scunet")  // heads of the bottom level's 4 c transformer channels
    return {{"m_head.0.weight", {c, 3, 3, 3}}, {"m_tail.0.weight", {3, c, 3, 3}},
            {"m_body.0.trans_block.msa.relative_position_params", {heads, 15, 15}}};
  ADD_FAILURE() << "no crafted layout for " << arch;
  return {};
}

std::filesystem::path write_zero_heads(const std::filesystem::path& dir, const std::string& arch) {
  const auto file = dir / (arch + "-zero-heads.safetensors");
  write_crafted_safetensors(file, attention_layout(arch, 0));
  return file;
}

}  // namespace framelift::test
