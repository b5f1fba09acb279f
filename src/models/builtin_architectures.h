#pragma once
// The architectures framelift ships, one per file, in the order detection tries them. The
// registry calls register_builtin_architectures() on first use: a static initializer per file
// would be dropped by the linker from a static library nobody references by symbol.
#include "models/architecture.h"

namespace framelift::models {

Architecture srvgg_compact_architecture();    // srvgg_compact.cpp
Architecture rrdbnet_architecture();          // rrdbnet.cpp
Architecture realcugan_architecture();        // realcugan.cpp
Architecture omnisr_architecture();           // omnisr.cpp
Architecture waifu2x_cunet_architecture();    // realcugan.cpp: the same U-Nets, noise-only 1x
Architecture waifu2x_upconv7_architecture();  // waifu2x_upconv7.cpp
Architecture span_architecture();             // span.cpp
Architecture swinir_architecture();           // swinir.cpp
Architecture hat_architecture();              // hat.cpp
Architecture dat_architecture();              // dat.cpp
Architecture safmn_architecture();            // safmn.cpp
Architecture mosr_architecture();             // mosr.cpp
Architecture plksr_architecture();            // plksr.cpp
Architecture realplksr_architecture();        // realplksr.cpp
Architecture drunet_architecture();           // drunet.cpp
Architecture nafnet_architecture();           // nafnet.cpp
Architecture fbcnn_architecture();            // fbcnn.cpp
Architecture scunet_architecture();           // scunet.cpp
Architecture swin2sr_architecture();          // swin2sr.cpp
Architecture drct_architecture();             // drct.cpp
Architecture srformer_architecture();         // srformer.cpp
Architecture atd_architecture();              // atd.cpp

void register_builtin_architectures();

}  // namespace framelift::models
