#include "plan/diffusion.h"

#include <algorithm>

#include "util/error.h"
#include "util/str.h"

namespace framelift::plan {
namespace {

// fp16 parameters of stabilityai/stable-video-diffusion-img2vid(-xt): the spatio-temporal UNet
// (1.52 B, the SVD paper), the temporal VAE (AutoencoderKLTemporalDecoder, 98 M) and the CLIP
// ViT-H/14 image encoder (632 M).
constexpr double kUnetParams = 1.52e9, kVaeParams = 0.098e9, kClipParams = 0.632e9;
constexpr double kBytes = 2;
constexpr double kContextGb = 0.6, kWorkspaceGb = 0.5;
// Largest single module sequential offload keeps on the GPU at a time.
constexpr double kSequentialResidentGb = 0.15;
// Denoiser activations per latent token per batch item, in elements: the 320-wide first level's
// residual stream and norms (4 x 320) plus the GEGLU feed-forward (2 x 1280 + 1280) that forward
// chunking removes, plus the down path's skips kept for the up path (about 1,740 channels of all
// levels counted at the first level's size).
constexpr double kResidualElems = 4 * 320, kFeedForwardElems = 3 * 1280, kSkipElems = 1740;
// VAE decoder activations per output pixel per frame in a chunk: 128-channel up blocks at full
// size, input, output and two norm/conv temporaries (4 x 128).
constexpr double kVaeElemsPerPx = 4 * 128;
// Compute: SD 1.5's UNet is 339 GMACs at 64x64 latents (BK-SDM, Kim et al. 2023); SVD's UNet has
// 1.52/0.86 the parameters; per-token work scales with tokens, spatial attention with tokens^2.
constexpr double kUnetMacsAt4096 = 339e9 * 1.52 / 0.86;
constexpr double kAttentionShare = 0.15;  // share of those MACs in spatial attention at 4096 tokens
// The SD VAE decoder is about 1.24 TMACs at 512x512 output, 4.7 MMACs per pixel.
constexpr double kVaeMacsPerPx = 4.7e6;
constexpr double kDiffusionEfficiency = 0.3;
constexpr double kPcieGbs = 20;  // host-to-device copies for offloading

}  // namespace

SvdEstimate estimate_svd(const SvdSettings& s, const Device& d, double memory_margin) {
  if (s.width % 8 || s.height % 8 || s.width <= 0 || s.height <= 0)
    throw Error(ErrorKind::Usage, str("svd: ", s.width, "x", s.height, " is not a positive multiple of 8"));
  if (s.frames < 1 || s.steps < 1) throw Error(ErrorKind::Usage, "svd: frames and steps must be >= 1");
  if (s.offload != "none" && s.offload != "model" && s.offload != "sequential")
    throw Error(ErrorKind::Usage, str("svd: offload '", s.offload, "' is not none, model or sequential"));
  SvdEstimate e;
  e.settings = s;
  const double unet_w = kUnetParams * kBytes / 1e9, vae_w = kVaeParams * kBytes / 1e9, clip_w = kClipParams * kBytes / 1e9;
  auto resident = [&](double own) {
    if (s.offload == "sequential") return kSequentialResidentGb;
    if (s.offload == "model") return own;
    return unet_w + vae_w + clip_w;
  };
  const double tokens = double(s.width / 8) * (s.height / 8);
  const double batch = s.frames * (s.cfg ? 2 : 1);
  const double per_token = kResidualElems + kSkipElems + (s.forward_chunking ? 0.0 : kFeedForwardElems);
  const double unet_act = tokens * batch * per_token * kBytes / 1e9;
  const int chunk = s.decode_chunk_size > 0 ? std::min(s.decode_chunk_size, s.frames) : s.frames;
  const double vae_act = double(s.width) * s.height * chunk * kVaeElemsPerPx * kBytes / 1e9;
  const double clip_act = 0.3;
  e.stages = {{"image_encoder", resident(clip_w), clip_act, 0},
              {"denoiser", resident(unet_w), unet_act, 0},
              {"vae_decode", resident(vae_w), vae_act, 0}};
  for (auto& st : e.stages) {
    st.total_gb = kContextGb + kWorkspaceGb + st.weights_gb + st.activations_gb;
    e.peak_gb = std::max(e.peak_gb, st.total_gb);
  }
  e.fits = e.peak_gb <= d.memory_gb * (1 - memory_margin);

  const double ratio = tokens / 4096;
  const double unet_macs = kUnetMacsAt4096 * ((1 - kAttentionShare) * ratio + kAttentionShare * ratio * ratio);
  const double flops = 2 * (unet_macs * batch * s.steps + kVaeMacsPerPx * s.width * s.height * s.frames);
  const double peak = d.cpu ? d.fp32_tflops : d.fp16_tensor_tflops;
  e.seconds = flops / (peak * 1e12 * kDiffusionEfficiency);
  // Offloading copies weights in: model offload once per component, sequential once per step.
  if (s.offload == "model") e.seconds += (unet_w + vae_w + clip_w) / kPcieGbs;
  if (s.offload == "sequential") e.seconds += unet_w * s.steps / kPcieGbs + (vae_w + clip_w) / kPcieGbs;
  // Chunked feed-forward and small decode chunks run more, smaller kernels.
  if (s.forward_chunking) e.seconds *= 1.1;
  if (chunk < s.frames) e.seconds += 0.05 * (double(s.frames) / chunk);
  return e;
}

std::vector<SvdEstimate> svd_settings_ladder(const SvdSettings& base, const Device& d, double memory_margin) {
  std::vector<SvdEstimate> out;
  const struct { int chunk; bool ff; const char* offload; } steps[] = {
      {0, false, "none"}, {8, false, "none"}, {4, false, "none"}, {2, true, "none"},
      {2, true, "model"}, {1, true, "model"}, {1, true, "sequential"}};
  for (const auto& step : steps) {
    SvdSettings s = base;
    s.decode_chunk_size = step.chunk;
    s.forward_chunking = step.ff;
    s.offload = step.offload;
    out.push_back(estimate_svd(s, d, memory_margin));
    if (out.back().fits) break;
  }
  return out;
}

}  // namespace framelift::plan
