#pragma once
// What SwinIR and Swin2SR state dicts share, read once for both: the transformer body's sizes
// (conv_first, layers.I.residual_group.blocks.J, their MLP and window tables), the hyper-
// parameters detection records for them in one order, and the shape the builders read back.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "models/architecture.h"
#include "models/swin_reconstruction.h"
#include "weights/state_dict.h"

namespace framelift::models {

struct SwinShape {
  int64_t in = 3, out = 3, embed = 96, layers = 4, depth = 6, heads = 6, window = 8, hidden = 192, feat = 64;
  int64_t scale = 1, unshuffle = 1;  // scale: of the reconstruction, before the unshuffle divides it
  SwinUpsampler upsampler = SwinUpsampler::None;
  bool three_conv = false;
  double img_range = 1;
};

// The body's sizes off a state dict: embed and in from `first` (conv_first's weight key), heads of
// layer I from heads_of(I) (each architecture keeps them in another table), window from
// relative_position_index, the MLP from mlp.fc1. Every layer must have layer 0's blocks and heads
// (every published model does). Throws Error(Model) "<source>: <arch> layout: ..." otherwise.
// `declared`: the registry name whose declared constraints (src/arch/) the sizes must meet.
SwinShape read_swin_body(const weights::StateDict& dict, const std::string& source, const std::string& arch,
                         const std::string& declared, const std::string& first,
                         const std::function<std::optional<int64_t>(int64_t)>& heads_of);

// The shared hyper-parameters, in SwinIR's order (embed_dim ... img_range), from a body and its
// reconstruction; img_range is 255 for a window of 7, spandrel's rule for the JPEG models.
arch::ArchParams swin_params(const SwinShape& s);

// The shape a builder reads back from a detection.
SwinShape swin_shape_of(const DetectedArch& d);

}  // namespace framelift::models
