// `faces`: face restoration (GFPGAN v1.3/1.4, CodeFormer, RestoreFormer++; models/face_restorer.h)
// on every face of every frame, as facexlib's FaceRestoreHelper runs them on a photo:
//   1. faces found by RetinaFace (models/face_detector.h) on the frame, or on a copy scaled so its
//      shorter side is detect_size= (CodeFormer's script detects at 640), with their landmarks
//      mapped back; faces whose eyes are under 5 px apart are left alone, as upstream does;
//   2. across frames (face_tracks.h): a face lost for up to hold= frames is still restored where
//      it was last seen, and landmarks are averaged over smooth= frames so the crop does not shake;
//   3. each face aligned to the network's template (face_align.h), restored (all faces of a frame
//      in one call), and pasted back feathered. Pixels outside the faces are the input's.
// aligned=true skips 1-3: every frame is already an aligned face crop of the network's size, as
// GFPGAN's --aligned and CodeFormer's --has_aligned take them.
// The stage runs at the frame's size, so it works before or after `upscale`; jobs stay exact
// (context of max(hold, smooth - 1) frames).
#include <ATen/ATen.h>

#include <cmath>
#include <optional>

#include "infer/device.h"
#include "models/face_detector.h"
#include "models/face_restorer.h"
#include "pipeline/face_align.h"
#include "pipeline/face_tracks.h"
#include "pipeline/model_run_options.h"
#include "pipeline/stage_registry.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

constexpr double kMinEyeDistance = 5.0;

const std::vector<std::string> kRestorers = {"gfpgan", "codeformer", "restoreformer"};

class FacesStage : public Stage {
 public:
  explicit FacesStage(const OptionValues& o)
      : file_(o.has("model") ? o.text("model") : ""),
        aligned_(o.flag("aligned")),
        confidence_(o.number("confidence")),
        detect_size_(o.integer("detect_size")),
        tracks_(int(o.integer("hold")), int(o.integer("smooth"))) {
    model_ = open_stage_model("faces", o, kRestorers, "a GFPGAN, CodeFormer or RestoreFormer++ .pth", "a face restoration one (GFPGAN, CodeFormer, RestoreFormer++)");
    face_size_ = model_->info().size_multiple;
    if (o.has("w")) {
      models::FidelityWeighted* weighted = models::fidelity_control(*model_);
      if (!weighted) throw Error(ErrorKind::Usage, str("stage faces: w= is CodeFormer's fidelity weight; ", file_, " is a ", model_->info().arch, " network, which has none"));
      weighted->set_fidelity(o.number("w"));
    }
    if (!aligned_) {
      if (!o.has("detector")) throw Error(ErrorKind::Usage, "stage faces: detector=FILE (RetinaFace, facexlib's detection_Resnet50_Final.pth) is required unless aligned=true");
      detector_ = models::open_face_detector(o.text("detector"));
    }
    target_ = resolve_stage_target("faces", o, model_->info().arch);
    infer::prepare_device(target_);
    model_->to(target_.device, target_.dtype);
    if (detector_) detector_->to(target_.device, at::kFloat);
  }

  std::string name() const override { return "faces"; }
  int context_frames() const override { return aligned_ ? 0 : tracks_.memory(); }
  c10::Device device() const override { return target_.device; }

  media::VideoFormat configure(const media::VideoFormat& in) override {
    if (aligned_ && (in.width != face_size_ || in.height != face_size_))
      throw Error(ErrorKind::Usage, str("stage faces: aligned=true takes ", face_size_, "x", face_size_, " face crops (", file_, "'s size); this input is ",
                                        in.width, "x", in.height));
    log::info("faces: ", file_, " (", model_->info().arch, ", ", face_size_, " px faces) ",
              aligned_ ? "on aligned crops" : str("on faces found at confidence ", confidence_), ", on ", target_.describe_with_reason());
    return in;
  }

  void push(Frame frame, const Emit& emit) override {
    at::InferenceMode guard;
    if (aligned_) {
      frame.image = restore(frame.image.unsqueeze(0))[0].clamp(0, 1).to(frame.image.scalar_type()).contiguous();
    } else {
      frame.image = with_faces_restored(frame.image);
    }
    emit(std::move(frame));
  }

  void flush(const Emit&) override {
    if (!aligned_)
      log::info("faces: ", faces_, " face(s) restored on ", frames_with_faces_, " of ", frames_, " frame(s), ", held_,
                " of them held over a frame the detector missed them on");
  }

  void reset() override {
    tracks_.reset();
    frames_ = frames_with_faces_ = faces_ = held_ = 0;
  }

 private:
  at::Tensor restore(const at::Tensor& crops) { return model_->forward(crops.to(target_.dtype)).to(at::kFloat); }

  // This frame's faces, in its own pixels.
  std::vector<models::DetectedFace> detect(const at::Tensor& image) const {
    const int64_t h = image.size(1), w = image.size(2), shorter = std::min(h, w);
    at::Tensor input = image.to(at::kFloat);
    double scale = 1;
    if (detect_size_ > 0 && shorter > detect_size_) {
      scale = double(shorter) / double(detect_size_);
      const int64_t dh = std::max<int64_t>(16, int64_t(double(h) / scale)), dw = std::max<int64_t>(16, int64_t(double(w) / scale));
      input = at::_upsample_bilinear2d_aa(input.unsqueeze(0), {dh, dw}, false)[0];
    }
    return in_frame_pixels(detector_->detect(input, confidence_), scale, kMinEyeDistance);
  }

  at::Tensor with_faces_restored(const at::Tensor& image) {
    std::vector<models::DetectedFace> found = detect(image);
    const size_t detected = found.size();
    const std::vector<models::DetectedFace> faces = tracks_.next(std::move(found));
    ++frames_;
    if (faces.empty()) return image;
    ++frames_with_faces_;
    faces_ += int64_t(faces.size());
    held_ += int64_t(faces.size() - detected);
    const Landmarks5 reference = face_template(face_size_);
    std::vector<Similarity> maps;
    std::vector<at::Tensor> crops;
    const at::Tensor frame = image.to(at::kFloat);
    for (const models::DetectedFace& f : faces) {
      maps.push_back(fit_similarity(f.landmarks, reference));
      crops.push_back(warp_face(frame, maps.back(), face_size_));
    }
    const at::Tensor restored = restore(at::stack(crops));
    at::Tensor out = frame.clone();
    for (size_t i = 0; i < faces.size(); ++i) paste_face(out, restored[int64_t(i)], maps[i]);
    return out.to(image.scalar_type()).contiguous();
  }

  std::string file_;
  bool aligned_;
  double confidence_;
  int64_t detect_size_;
  int64_t face_size_ = 512;
  FaceTracks tracks_;
  std::unique_ptr<models::ImageModel> model_;
  std::unique_ptr<models::FaceDetector> detector_;
  infer::ExecutionTarget target_;
  int64_t frames_ = 0, frames_with_faces_ = 0, faces_ = 0, held_ = 0;
};

OptionSchema faces_options() {
  return combine({with_role(text_option("model", "", "a GFPGAN v1.3/1.4, CodeFormer or RestoreFormer++ .pth: installed name or file; required"),
                            OptionRole::ModelRef),
                  with_role(text_option("detector", "", "a RetinaFace .pth (facexlib's detection_Resnet50_Final or mobilenet0.25): installed name or file; required unless aligned=true"),
                            OptionRole::ModelRef),
                  flag_option("aligned", "0", "frames are already aligned face crops of the network's size (512)"),
                  number_option("w", "", 0, 1, "CodeFormer's fidelity: 0 restores most, 1 keeps most of the input (default 0.5)"),
                  number_option("confidence", "0.97", 0, 1, "the detector's score a face needs", true),
                  integer_option("detect_size", "640", 0, 8192, "faces are found on a copy whose shorter side is this (0: the frame)"),
                  integer_option("hold", "2", 0, 30, "frames a face the detector loses is still restored where last seen"),
                  integer_option("smooth", "3", 1, 31, "frames the landmarks are averaged over (1: none)")},
                 model_device_options());
}

}  // namespace

FRAMELIFT_REGISTER_STAGE(faces, "Face restoration (GFPGAN, CodeFormer, RestoreFormer++) on the faces RetinaFace finds, pasted back feathered",
                         faces_options(), [](const OptionValues& o) { return std::make_unique<FacesStage>(o); });

}  // namespace framelift::pipeline
