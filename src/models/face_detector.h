#pragma once
// RetinaFace (Deng et al., CVPR 2020) as facexlib publishes it (detection_Resnet50_Final.pth,
// detection_mobilenet0.25_Final.pth): a native face detector with five landmarks per face, for the
// faces stage. Not an image-to-image network, so it is a DECLARATION in arch/architecture_list.h,
// opened here rather than by models::open_model.
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "arch/params.h"
#include "weights/state_dict.h"

namespace framelift::models {

struct DetectedFace {
  std::array<float, 4> box{};         // x1, y1, x2, y2 in pixels of the detector's input
  float score = 0;                    // the face class probability, 0-1
  // Five (x, y) points in pixels, in facexlib's order: left eye, right eye (of the image, not of
  // the person), nose tip, left and right mouth corners.
  std::array<float, 10> landmarks{};
};

struct FaceDetectorShape {
  std::string backbone;  // "resnet50" or "mobilenet0.25"
  arch::ArchParams params;  // widths as the state dict says them (in_channel, out_channel, ...)
};

class FaceDetector {
 public:
  virtual ~FaceDetector() = default;
  // rgb: [3, H, W] float in [0, 1], any H, W >= 16 (as facexlib reads a frame: x255, BGR, minus
  // (104, 117, 123)). Faces scoring at least `confidence` after non-maximum suppression at IoU
  // `nms_iou`, best first. Thread-safe for concurrent calls on one detector (weights are read-only).
  virtual std::vector<DetectedFace> detect(const at::Tensor& rgb, double confidence = 0.97, double nms_iou = 0.4) const = 0;
  // The raw heads for agreement tests: loc [1, P, 4], conf [1, P, 2] (softmaxed), landmarks [1, P, 10].
  virtual std::array<at::Tensor, 3> heads(const at::Tensor& rgb) const = 0;
  virtual const FaceDetectorShape& shape() const = 0;
  // Runs in bf16 where the CPU has it and the caller asks (see infer/precision); fp32 by default.
  virtual void to(c10::Device device, c10::ScalarType dtype) = 0;
};

// nullopt when the keys are not RetinaFace's (a "module." prefix, as facexlib's files carry, is
// accepted); Error(Model) "<source>: RetinaFace layout: ..." when they are and the shapes do not fit.
std::optional<FaceDetectorShape> detect_retinaface(const weights::StateDict& dict, const std::string& source);
std::unique_ptr<FaceDetector> build_face_detector(const weights::StateDict& dict, const std::string& source);
// Reads FILE (.pth or .safetensors) through weights/ and builds it; Error(Model) when it is not a RetinaFace.
std::unique_ptr<FaceDetector> open_face_detector(const std::string& path);
// One line of JSON for `framelift models info`.
std::string describe_face_detector(const FaceDetectorShape& shape, const weights::StateDict& dict);

}  // namespace framelift::models
