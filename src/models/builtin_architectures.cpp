#include "models/builtin_architectures.h"

namespace framelift::models {

void register_builtin_architectures() {
  register_architecture(srvgg_compact_architecture());
  register_architecture(rrdbnet_architecture());
  register_architecture(realcugan_architecture());
  register_architecture(omnisr_architecture());
  register_architecture(waifu2x_cunet_architecture());
  register_architecture(waifu2x_upconv7_architecture());
  register_architecture(span_architecture());
  register_architecture(swinir_architecture());
  register_architecture(hat_architecture());
  register_architecture(dat_architecture());
  register_architecture(safmn_architecture());
  register_architecture(mosr_architecture());
  register_architecture(plksr_architecture());
  register_architecture(realplksr_architecture());
  register_architecture(drunet_architecture());
  register_architecture(nafnet_architecture());
  register_architecture(fbcnn_architecture());
  register_architecture(scunet_architecture());
  register_architecture(swin2sr_architecture());
  register_architecture(drct_architecture());
  register_architecture(srformer_architecture());
  register_architecture(atd_architecture());
}

}  // namespace framelift::models
