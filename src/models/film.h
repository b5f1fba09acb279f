#pragma once
// FILM (Reda et al., ECCV 2022; google-research/frame-interpolation) as a native interpolator, from
// the state dict of its PyTorch port (dajes/frame-interpolation-pytorch, the film_net weights the
// guides and ComfyUI use), in the layouts of both of its releases (v1.0.0 names its activation-free
// convolutions "<p>.weight", v1.0.2 "<p>.0.weight").
//
// An image pyramid of each frame (2x2 means), a feature extractor whose shared sub-levels are
// cascaded across pyramid levels, a flow pyramid estimated coarse to fine in both directions (a
// shared predictor for the coarse levels, one of its own for each fine one), the frames and
// features of the finer levels warped to time t (the backward flow times t, the forward times 1 - t)
// and a U-Net decoder fusing them. t enters only through those flows, so any t in (0, 1) runs the
// same network. The pyramid depth (7 in the published model) is not in a state dict: it is the
// published one unless a caller says otherwise.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arch/params.h"
#include "models/frame_interpolator.h"
#include "weights/state_dict.h"

namespace framelift::models {

// What the shapes say about a checkpoint (upstream's Interpolator arguments).
struct FilmShape {
  int64_t filters = 64;     // f: the extractor's first width; sub-level j is f << j wide
  int sub_levels = 4;       // S
  int pyramid_levels = 7;   // L: frames are padded to a multiple of 2^(L-1)
  int fusion_levels = 5;    // F = S + 1: pyramid levels 0 .. F-1 are fused
  // Per predictor, in upstream's config order: index i < S-1 is level i's own predictor, S-1 the
  // one shared by every coarser level. n 3x3 convolutions of `width`, then two 1x1.
  std::vector<int64_t> flow_convs, flow_filters;
  bool legacy_keys = false;  // release v1.0.0's "<p>.weight" for convolutions without activation

  bool published() const;       // film_net's own shape
  std::string variant() const;  // "film_net", or "custom widths"
};

// nullopt when the keys are not FILM's; Error(Model) "<source>: FILM layout: ..." when they are and
// the shapes do not fit together. pyramid_levels is set to 7.
std::optional<FilmShape> detect_film(const weights::StateDict& dict, const std::string& source);

// The planner's and `models info`'s view: filters, sub_levels, pyramid_levels, fusion_levels,
// flow_convs_k and flow_filters_k.
arch::ArchParams film_arch_params(const FilmShape& shape);

// Throws Error(Model) when dict is not a FILM or does not fit `shape` (detect_film's, possibly with
// another pyramid_levels).
std::unique_ptr<FrameInterpolator> build_film(const weights::StateDict& dict, const std::string& source, const FilmShape& shape);
std::unique_ptr<FrameInterpolator> build_film(const weights::StateDict& dict, const std::string& source);

// One line of JSON for `framelift models info`: arch, variant, params, hyperparameters.
std::string describe_film(const FilmShape& shape, const weights::StateDict& dict);

}  // namespace framelift::models
