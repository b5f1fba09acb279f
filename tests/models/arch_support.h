#pragma once
// Inputs and checks shared by the native-architecture tests (arch_*.cpp).
#include <filesystem>
#include <optional>
#include <string>

#include <ATen/core/Tensor.h>

#include "infer/image_model.h"
#include "models/architecture.h"
#include "weights/state_dict.h"

namespace framelift::test {

// A w x h RGB crop of frame 30 of the Megamind clip (a face: detail and flat areas; odd sizes too), as float
// [1, 3, h, w] in [0, 1]. Undefined tensor (and a test failure) when ffmpeg cannot make it.
at::Tensor real_frame(int w, int h, int frame = 30);

// Float [1, 3, H, W] in [0, 1] <-> an 8-bit RGB PNG, through the ffmpeg CLI (for the reference
// binaries, which read and write images only).
void write_png(const at::Tensor& image, const std::filesystem::path& png);
at::Tensor read_png(const std::filesystem::path& png, int w, int h);

// A video's decoded frames as 8-bit RGB [N, h, w, 3], through the ffmpeg CLI (so a stage's output
// is not read back with framelift's own reader).
at::Tensor rgb_frames(const std::filesystem::path& video, int w, int h);

// PSNR in dB of two [0, 1] tensors of one shape.
double psnr(const at::Tensor& a, const at::Tensor& b);

// PSNR in dB of `a` against the reference `b`, the peak being b's own range: the random-weight
// networks of the upstream references (tests/data/arch) do not stay in [0, 1].
double psnr_in_range(const at::Tensor& a, const at::Tensor& b);

// tests/data/arch: small seeded checkpoints in upstream layouts and their upstream outputs
// (make_references.py there).
std::filesystem::path arch_reference_dir();

// The upscaled output brought back to the input's size (antialiased bicubic, clamped to [0, 1]):
// a network that applies its weights correctly reproduces its input closely at that size.
double psnr_downscaled(const at::Tensor& output, const at::Tensor& input);

// The Model error that building `dict` (as "test.pth") gives; a test failure and "" when it builds.
std::string refusal_of(const weights::StateDict& dict);

// Building `dict` is refused with a message that contains `fragment` (a tensor's name, say).
void expect_refused(const weights::StateDict& dict, const std::string& fragment);

// One committed reference NAME (tests/data/arch): what detection makes of NAME.pth, the native
// model's info, and the PSNR in range of its whole-frame output for NAME.ref.safetensors' "input"
// against upstream's "output" (0, and a test failure, when their sizes differ).
struct ReferenceRun {
  std::optional<models::DetectedArch> detected;
  models::ModelInfo info;
  double db = 0;
};
ReferenceRun run_reference(const std::string& name);

// An inpainting network (LaMa, MAT) on a committed reference's io ("input" [1, 4, H, W]: RGB and
// the mask, 1 = fill; "output" [1, 3, H, W], upstream's composite): the fill against upstream's
// inside the mask in fp32 and then in bf16 (the model is left in bf16), the hole's own pixels
// against it (how far from trivial the fill is), and whether the fp32 output is the input,
// exactly, outside the mask. Prints the three figures under `name`.
struct FillAgreement {
  double fp32_db = 0, bf16_db = 0, hole_db = 0;
  bool outside_exact = false;
};
FillAgreement fill_agreement(models::ImageModel& model, const weights::StateDict& io, const std::string& name);

// The tiling and precision checks on one frame [3, H, W]: tiles of `tile` px with the model's
// declared context and with none, and the whole frame in bf16, each as PSNR in range against the
// whole frame in fp32. Leaves the model in bf16.
struct TiledAndBf16 {
  double tiled_db, seams_db, bf16_db;
};
TiledAndBf16 tiled_and_bf16(models::ImageModel& model, const at::Tensor& frame, int tile);

// Random weights for small synthetic networks (seeded, so failures reproduce).
at::Tensor random_weight(std::initializer_list<int64_t> shape);

// A complete OmniSR state dict with random weights, in upstream's key layout: `groups` groups of
// `blocks` blocks of `feat` features, attention windows of `window`, x`scale`.
weights::StateDict omnisr_dict(int64_t feat, int groups, int blocks, int64_t window, int64_t scale, bool bias);

}  // namespace framelift::test
