// waifu2x CUNet (waifu2x/models-cunet ncnn graphs): Real-CUGAN's two U-Nets at 2x (those weights
// run as the native "realcugan" network), or the noise-only variant at 1x, which runs as this one
// (src/models/realcugan.cpp); realcugan.cpp here has the walk.
#include "arch/builtin.h"

namespace framelift::arch {

Declaration waifu2x_cunet_declaration() {
  return {.name = "waifu2x_cunet",
          .description = "waifu2x CUNet (noise-only 1x; 2x is Real-CUGAN 2x)",
          .scales = {1, 2},
          .walk = [](int scale, const ArchParams&) { return cunet_walk("waifu2x_cunet", scale); },
          .axes = cunet_axes(),
          .constraints = {}};
}

}  // namespace framelift::arch
