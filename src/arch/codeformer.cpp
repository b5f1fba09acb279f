// CodeFormer, network in src/models/codeformer.cpp: a VQGAN encoder (levels of GroupNorm-swish
// residual blocks with a 3x3 stride-2 step between them, single-head attention over the whole
// map at the levels that have it, residual-attention-residual in the middle), a transformer over
// the latent's pixels that picks a codebook entry for each, and the VQGAN generator back up, with
// a fusion block (a residual block over the encoder's and generator's features, then 3x3 scale
// and shift pairs) at each fused size. Counted at the default fidelity (w > 0: fused). The face
// goes through whole, at its one size: size multiple S, untiled.
#include <algorithm>

#include "arch/builtin.h"

namespace framelift::arch {
namespace {

// Attention over every pixel of the map: the level's pixels are the tokens.
void attn_block(NetWalk& w, double face_px) {
  residual(w, [&] {
    const double c = w.channels();
    w.pointwise();  // GroupNorm
    w.conv(3 * c, 1);
    w.attention(w.area() * face_px, 1);
    w.conv(c, 1);
  });
}

void fuse_block(NetWalk& w) {
  const double c = w.channels(), a = w.area();
  w.keep();
  w.concat(2 * c);
  vqgan_res_block(w, c);
  w.keep();
  w.conv(c, 3);  // scale
  w.pointwise();
  w.conv(c, 3);
  w.keep();
  w.set(c, a);
  w.conv(c, 3);  // shift
  w.pointwise();
  w.conv(c, 3);
  w.pointwise();  // dec + w (dec scale + shift)
  w.release(3 * c, a);
}

ArchCost walk(int, const ArchParams& p) {
  const int levels = std::clamp(int(p.get("levels", 6)), 1, 8), res_blocks = int(p.get("res_blocks", 2)), layers = int(p.get("layers", 9));
  const double face = p.get("face_size", 512), nf = p.get("nf", 64), emb = p.get("emb_dim", 256), dim = p.get("dim_embd", 512),
               mlp = p.get("mlp", 1024), codebook = p.get("codebook", 1024), face_px = face * face;
  const double released[6] = {1, 2, 2, 4, 4, 8};
  const auto width = [&](int l) { return p.get("width" + std::to_string(l), nf * released[l < 6 ? l : 5]); };
  const auto attn = [&](int l) { return p.get("attn" + std::to_string(l), l == levels - 1 ? 1 : 0) != 0; };
  const auto fused = [&](int l) { return p.get("fuse" + std::to_string(int(face) >> l), 0) != 0; };
  NetWalk w(3);
  w.conv(nf, 3);
  double skip_area[16] = {};
  for (int l = 0; l < levels; ++l) {
    for (int b = 0; b < res_blocks; ++b) {
      vqgan_res_block(w, width(l));
      if (attn(l)) attn_block(w, face_px);
    }
    if (fused(l)) {
      w.keep();  // the level's feature, until the generator fuses it
      skip_area[l] = w.area();
    }
    if (l != levels - 1) w.conv(width(l), 3, 2);
  }
  vqgan_res_block(w, w.channels());
  attn_block(w, face_px);
  vqgan_res_block(w, w.channels());
  w.pointwise();
  w.conv(emb, 3);
  w.keep();  // the latent, whose statistics the codes take
  const double latent_area = w.area();
  w.conv(dim, 1);  // feat_emb
  for (int i = 0; i < layers; ++i) {
    residual(w, [&] {
      w.pointwise();  // LayerNorm
      w.conv(3 * dim, 1);
      w.attention(latent_area * face_px, 8);
      w.conv(dim, 1);
    });
    residual(w, [&] {
      w.pointwise();
      w.conv(mlp, 1);
      w.pointwise();  // GELU
      w.conv(dim, 1);
    });
  }
  w.pointwise();
  w.conv(codebook, 1);
  w.pointwise();  // softmax
  w.set(emb, latent_area);
  w.pointwise();  // AdaIN
  w.release(emb, latent_area);
  w.conv(width(levels - 1), 3);
  vqgan_res_block(w, w.channels());
  attn_block(w, face_px);
  vqgan_res_block(w, w.channels());
  for (int l = levels - 1; l >= 0; --l) {
    for (int b = 0; b < res_blocks; ++b) {
      vqgan_res_block(w, width(l));
      if (fused(l) && b == (l == levels - 1 ? res_blocks - 1 : 0)) {
        fuse_block(w);
        w.release(width(l), skip_area[l]);
      }
      if (attn(l)) attn_block(w, face_px);
    }
    if (l != 0) {
      w.resize(2);
      w.conv(width(l), 3);
    }
  }
  w.pointwise();
  w.conv(3, 3);
  w.pointwise();  // (y + 1) / 2
  return w.finish("codeformer", 1, 0, int(face), false);
}

}  // namespace

Declaration codeformer_declaration() {
  std::vector<Constraint> constraints = {positive("face_size"), in_range("levels", 1, 8), in_range("res_blocks", 1, 16),
                                         positive("nf"), multiple_of("nf", 32), positive("emb_dim"), positive("codebook"),
                                         positive("dim_embd"), multiple_of("dim_embd", 8), positive("mlp"), in_range("layers", 1, kMaxBlocks),
                                         positive("latent")};
  for (int l = 0; l < 8; ++l) {  // the GroupNorms' 32 groups
    constraints.push_back(positive("width" + std::to_string(l)));
    constraints.push_back(multiple_of("width" + std::to_string(l), 32));
  }
  return {.name = "codeformer",
          .description = "CodeFormer face restoration (VQGAN, codebook lookup transformer, fidelity weight w)",
          .scales = {1},
          // fp32 only: in bf16 the encoder's latent moves enough to pick other codebook entries at
          // near ties (about 5 of 256 on the seeded reference, 30.3 dB; upstream's modules in bf16
          // do the same), and a flipped code repaints a 32 px patch of the face.
          .precisions = {Precision::Fp32},
          .walk = walk,
          .axes = {{"nf", "encoder.blocks.0.weight", 0}, {"latent", "position_emb", 0}, {"dim_embd", "position_emb", 1},
                   {"codebook", "quantize.embedding.weight", 0}, {"emb_dim", "quantize.embedding.weight", 1},
                   {"mlp", "ft_layers.0.linear1.weight", 0}},
          .constraints = constraints};
}

void vqgan_res_block(NetWalk& w, double out) {
  const double in = w.channels(), a = w.area();
  w.keep();
  w.pointwise();  // GroupNorm
  w.pointwise();  // swish
  w.conv(out, 3);
  w.pointwise();
  w.pointwise();
  w.conv(out, 3);
  if (in != out) {
    w.set(in, a);
    w.conv(out, 1);
  }
  w.pointwise();  // + x
  w.release(in, a);
}

}  // namespace framelift::arch
