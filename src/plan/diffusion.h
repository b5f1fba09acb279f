#pragma once
// Stable Video Diffusion (img2vid 14 frames, img2vid-xt 25) peak memory per stage and time per
// device, and which diffusers settings make a job fit a card. A documented first-order model
// (docs/planner.md "Diffusion"): parameter counts from the published checkpoints, activations
// from the UNet's widths at the latent size, FLOPs scaled from SD 1.5's measured MACs. Expect
// +-50% until a profile manifest calibrates it; framelift does not run SVD itself yet.
#include <string>
#include <vector>

#include "plan/gpu_catalog.h"

namespace framelift::plan {

struct SvdSettings {
  int width = 1024, height = 576;
  int frames = 25;             // 14 for img2vid, 25 for img2vid-xt
  int steps = 25;
  int decode_chunk_size = 0;   // frames the VAE decodes at once; 0: all
  bool cfg = true;             // classifier-free guidance doubles the denoiser's batch
  bool forward_chunking = false;  // unet.enable_forward_chunking(): feed-forward one chunk at a time
  std::string offload = "none";   // none, model (enable_model_cpu_offload), sequential
};

struct SvdStage {
  std::string name;       // image_encoder, denoiser, vae_decode
  double weights_gb = 0;  // resident during the stage
  double activations_gb = 0;
  double total_gb = 0;    // with context and workspace
};

struct SvdEstimate {
  SvdSettings settings;
  std::vector<SvdStage> stages;
  double peak_gb = 0;
  double seconds = 0;     // one clip
  bool fits = false;      // peak within the device's memory less the margin
};

SvdEstimate estimate_svd(const SvdSettings& settings, const Device& device, double memory_margin = 0.2);

// The first settings on a ladder from fastest to leanest (smaller decode chunks, forward
// chunking, model offload, sequential offload) that fit; `base` gives size, frames and steps.
std::vector<SvdEstimate> svd_settings_ladder(const SvdSettings& base, const Device& device, double memory_margin = 0.2);

}  // namespace framelift::plan
