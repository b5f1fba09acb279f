#pragma once
// One function per declared architecture, each in its own file, named in arch/architecture_list.h.
#include "arch/architecture_list.h"
#include "arch/declaration.h"

namespace framelift::arch {

#define FRAMELIFT_DECLARE(id) Declaration id##_declaration();
FRAMELIFT_ARCHITECTURES(FRAMELIFT_DECLARE, FRAMELIFT_DECLARE)
#undef FRAMELIFT_DECLARE

// A frame interpolator's declaration (RIFE, IFRNet): two frames a call, scale 1, every precision,
// no detection axes (open_interpolator, not the image registry, reads their files), and the walk's
// cost with the fixed per-call cost their many small layers at 1/16 to 1/2 of the frame have:
// 40 000 px, set for RIFE between the CPUs measured (docs/planner.md).
Declaration interpolator_declaration(std::string name, std::string description,
                                     std::function<ArchCost(const ArchParams&)> walk);

// SwinIR's walk (swinir.cpp), with Swin2SR's 1x1 patch embeddings where patch_embeddings is set.
ArchCost swinir_walk(const std::string& arch, int scale, const ArchParams& p, bool patch_embeddings);

// What SwinIR, Swin2SR and SRFormer detection reads of a transformer body and must hold of it:
// heads divide the embedding, windows and layers exist (`heads_tensor`: where each architecture
// keeps its heads, axis `heads_axis`).
std::vector<Axis> swin_body_axes(const std::string& heads_tensor, int heads_axis, const std::string& window_tensor);
std::vector<Constraint> swin_body_constraints();

// The two U-Nets Real-CUGAN and waifu2x CUNet share (realcugan.cpp).
ArchCost cunet_walk(const std::string& arch, int scale);
// The channel axes both CUNet detections read (realcugan.cpp); every other width is fixed.
std::vector<Axis> cunet_axes();

// The VQGAN residual block (GroupNorm, swish, 3x3, twice; a 1x1 shortcut where the width
// changes) that CodeFormer and RestoreFormer share, to `out` channels (codeformer.cpp).
void vqgan_res_block(NetWalk& w, double out);

// nb residual blocks (x + conv(relu(conv(x)))) of KAIR's U-Nets, c wide (drunet.cpp).
void kair_res_blocks(NetWalk& w, double c, int nb);

}  // namespace framelift::arch
