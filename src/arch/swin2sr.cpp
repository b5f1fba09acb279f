// Swin2SR, network in src/models/swin2sr.cpp: SwinIR's walk (swinir.cpp) with Swin V2 layers,
// whose cosine attention and position-bias MLP (computed once at load) cost what SwinIR's
// attention does per pixel, and a 1x1 patch embedding before the body and after each group's conv.
#include "arch/builtin.h"

namespace framelift::arch {

Declaration swin2sr_declaration() {
  return {.name = "swin2sr",
          .description = "Swin2SR (SwinV2 image restoration: classical, lightweight and real-world SR, JPEG)",
          .scales = {1, 2, 3, 4, 8},
          .walk = [](int scale, const ArchParams& p) { return swinir_walk("swin2sr", scale, p, true); },
          .axes = swin_body_axes("attn.logit_scale", 0, "attn.relative_position_index"),
          .constraints = swin_body_constraints()};
}

}  // namespace framelift::arch
