// RestoreFormer / RestoreFormer++, network in src/models/restoreformer.cpp: a VQGAN encoder
// (GroupNorm-swish residual blocks, a stride-2 3x3 between levels, self-attention at 16x16 and in
// the middle), a nearest-code lookup, and a decoder (residual blocks, nearest 2x and a 3x3 between
// levels) whose attention blocks take their queries from the encoder's features of the same
// level. The lookup is counted as the 1x1 convolution it equals (each latent pixel against each
// code). Attention spans the whole level: untiled, one face crop of face_size a call.
#include "arch/builtin.h"

namespace framelift::arch {
namespace {

// Self- or cross-attention over all `tokens` pixels of the level.
void attn_block(NetWalk& w, double tokens, int heads, bool cross) {
  const double c = w.channels(), a = w.area();
  w.keep();
  w.pointwise();               // GroupNorm
  if (cross) w.extra(c * a);   // the encoder's normed features
  w.conv(3 * c, 1);            // q, k, v
  w.attention(tokens, heads);
  w.conv(c, 1);
  w.pointwise();  // + x
  w.release(c, a);
}

ArchCost walk(int, const ArchParams& p) {
  const double ch = p.get("ch", 64), z = p.get("z_channels", 256), embed = p.get("embed_dim", 256), codes = p.get("n_embed", 1024);
  const double face = p.get("face_size", 512);
  const int levels = int(p.get("levels", 6)), blocks = int(p.get("blocks", 2)), heads = int(p.get("heads", 4));
  const int dec_attn = int(p.get("decoder_attn_levels", 2));
  int attn_level = 0;  // the encoder attends at 16x16
  while ((16 << attn_level) < int(face) && attn_level < 16) ++attn_level;
  std::vector<double> widths;
  constexpr double kReleased[] = {1, 2, 2, 4, 4, 8};  // ch_mult of the released networks
  for (int i = 0; i < levels; ++i) widths.push_back(ch * p.get("mult" + std::to_string(i), i < 6 ? kReleased[i] : 8));
  NetWalk w(3);
  w.pointwise();  // to [-1, 1]
  w.conv(ch, 3);
  for (int i = 0; i < levels; ++i) {
    for (int b = 0; b < blocks; ++b) {
      vqgan_res_block(w, widths[size_t(i)]);
      if (i == attn_level) attn_block(w, face * face * w.area(), heads, false);
    }
    if (i < levels - 1) {
      w.keep();  // the level's features, the decoder's queries there
      w.pointwise();  // pad
      w.conv(widths[size_t(i)], 3, 2);
    }
  }
  const double low = widths.back();
  vqgan_res_block(w, low);
  w.keep();  // the lowest level's queries
  attn_block(w, face * face * w.area(), heads, false);
  vqgan_res_block(w, low);
  w.keep();  // the decoder's middle's queries
  w.pointwise();
  w.pointwise();
  w.conv(z, 3);
  w.conv(embed, 1);
  w.conv(codes, 1);  // distances to every code
  w.set(embed, w.area());
  w.conv(z, 1);
  w.conv(low, 3);
  vqgan_res_block(w, low);
  attn_block(w, face * face * w.area(), heads, true);
  vqgan_res_block(w, low);
  w.release(low, w.area());
  for (int i = levels - 1; i >= 0; --i) {
    const bool attends = i <= attn_level && i > attn_level - dec_attn;
    for (int b = 0; b <= blocks; ++b) {
      vqgan_res_block(w, widths[size_t(i)]);
      if (attends) attn_block(w, face * face * w.area(), heads, true);
    }
    w.release(widths[size_t(i)], w.area());
    if (i > 0) {
      w.resize(2);
      w.conv(widths[size_t(i)], 3);
    }
  }
  w.pointwise();
  w.pointwise();
  w.conv(3, 3);
  w.pointwise();  // to [0, 1]
  return w.finish("restoreformer", 1, 0, int(face), false);
}

}  // namespace

Declaration restoreformer_declaration() {
  return {.name = "restoreformer",
          .description = "RestoreFormer / RestoreFormer++ face restoration (VQGAN, multi-head cross-attention to the codebook)",
          .scales = {1},
          // fp32 only, as CodeFormer: the bf16 encoder moves the latent enough to pick other codes
          // (11-15 of 256 on the seeded references, 26-27 dB), each repainting a patch of the face.
          .precisions = {Precision::Fp32},
          .walk = walk,
          .axes = {{"ch", "encoder.conv_in.weight", 0}, {"z_channels", "quant_conv.weight", 1}, {"embed_dim", "quantize.embedding.weight", 1},
                   {"n_embed", "quantize.embedding.weight", 0}},
          .constraints = {positive("ch"), multiple_of("ch", 32), positive("z_channels"), positive("embed_dim"), positive("n_embed"),
                          in_range("levels", 1, 8), in_range("blocks", 1, 16), in_range("face_size", 16, 4096),
                          in_range("decoder_attn_levels", 1, 2)}};
}

}  // namespace framelift::arch
