#pragma once
// Face restoration networks (GFPGAN v1.3/1.4 "clean", CodeFormer, RestoreFormer++) are ImageModels
// of the architecture registry with one convention, so the faces stage (src/pipeline/faces_stage.cpp)
// runs any of them the same way:
//   input   [N, 3, S, S] RGB in [0, 1]: a face crop aligned to the five-landmark template scaled
//           to S (src/pipeline/face_align.h). S is the face size the weights say (512 for every
//           released model; the seeded test networks use 64), in DetectedArch::params["face_size"]
//           and ModelInfo::size_multiple. Other sizes are Error(Usage) "<source>: ARCH restores
//           SxS aligned face crops, not WxH";
//   output  the restored crop, [N, 3, S, S] RGB in [0, 1] as upstream's tensor2img reads it
//           ((y + 1) / 2 of the network's [-1, 1] output), not clamped: the stage clamps when it
//           quantises, so agreement tests see the network's own values.
// Their declarations (src/arch/) say scale 1; the cost walk reads face_size.
#include <memory>
#include <string>

#include "infer/image_model.h"

namespace framelift::models {

// A network with a quality/fidelity trade-off chosen per call (CodeFormer's w): found by
// dynamic_cast on the model open_model returns. Not thread-safe with forward() on the same model.
class FidelityWeighted {
 public:
  virtual ~FidelityWeighted() = default;
  // w in [0, 1]: 0 trusts the network's codebook most (strongest restoration), 1 keeps most of the
  // input's identity. Out of range is Error(Usage). Upstream's inference default is 0.5.
  virtual void set_fidelity(double w) = 0;
  virtual double fidelity() const = 0;
};

// What a face restorer's builder returns: `net` behind a check that every crop is exactly S x S
// (S = net's size_multiple), refused as Error(Usage) "<source>: ARCH restores SxS aligned face
// crops, not WxH" before NativeModel's own check (any multiple of S) would let 1024x1024 through
// or call 100x100 a broken model.
std::unique_ptr<ImageModel> face_crops_only(std::unique_ptr<ImageModel> net, std::string source);

// The fidelity control of a face restorer open_model returned (wrapped or not); nullptr when the
// network has none (GFPGAN, RestoreFormer++).
FidelityWeighted* fidelity_control(ImageModel& model);

}  // namespace framelift::models
