#pragma once
// What SwinIR and Swin2SR state dicts share, read once for both (SRFormer records and reads back
// the same parameters and shell): the transformer body's sizes
// (conv_first, layers.I.residual_group.blocks.J, their MLP and window tables), the hyper-
// parameters detection records for them in one order, and the shape the builders read back.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "models/architecture.h"
#include "models/swin_reconstruction.h"
#include "models/swin_shell.h"
#include "util/error.h"
#include "weights/state_dict.h"

namespace framelift::models {

// The sizes every network of the lineage has (each adds its own in a derived shape).
// What every detector of the lineage checks a state dict with, so that all refuse alike:
// Error(Model) "<source>: <arch> layout: <why>".
class SwinLayoutChecks {
 public:
  SwinLayoutChecks(const weights::StateDict& dict, std::string source, std::string arch)
      : dict_(dict), source_(std::move(source)), arch_(std::move(arch)) {}
  Error fail(const std::string& why) const;
  // Axis `axis` of tensor `key`, which must have rank `rank`; fail() naming the tensor otherwise.
  int64_t dim(const std::string& key, int64_t rank, int64_t axis) const;
  // Every group i < groups as group 0: depth_of(i) `unit` and heads_of(i) heads (nullopt: none
  // read), else fail() with what differs. `group`: what the architecture calls one ("layer").
  void expect_uniform(int64_t groups, const std::function<int64_t(int64_t)>& depth_of,
                      const std::function<std::optional<int64_t>(int64_t)>& heads_of, const std::string& group = "layer",
                      const std::string& unit = "blocks") const;

 private:
  const weights::StateDict& dict_;
  std::string source_, arch_;
};

struct SwinShape {
  int64_t in = 3, out = 3, embed = 96, layers = 4, depth = 6, heads = 6, window = 8, hidden = 192, feat = 64;
  int64_t scale = 1, unshuffle = 1;  // scale: of the reconstruction, before the unshuffle divides it
  SwinUpsampler upsampler = SwinUpsampler::None;
  bool three_conv = false;
  bool patch_norm = true, after_body = true;  // the embedding LayerNorm; conv_after_body (else identity)
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

// The shape a builder reads back from a detection, under the names the lineage's detections
// record (embed_dim, layers, depth, heads, window_size, mlp_hidden, num_feat, upsampler,
// three_conv, patch_norm, conv_after_body, img_range, unshuffle); what one does not record keeps
// SwinShape's default (HAT and DRCT record no upsampler: they set theirs).
SwinShape swin_shape_of(const DetectedArch& d);
// A network's own shape, derived from SwinShape, with that part read by swin_shape_of.
template <class Shape>
Shape swin_shape_as(const DetectedArch& d) {
  Shape s;
  static_cast<SwinShape&>(s) = swin_shape_of(d);
  return s;
}

// The shell around such a body (swin_shell.h): its sizes, reconstruction, normalisation, patch
// norm and conv_after_body, and Swin's shift mask of half a window.
SwinFrame swin_frame(const SwinShape& s);

}  // namespace framelift::models
