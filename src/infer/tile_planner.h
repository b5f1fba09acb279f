#pragma once
// Picks the tile size for a model, a frame size and a memory budget, from a measurement rather
// than a table: the model runs once on two small inputs while the allocator counts bytes, which
// gives its memory as fixed + per_pixel * pixels for this device and precision. That covers every
// architecture, ncnn graphs and user models included, without a per-architecture formula.
#include <cstdint>

#include "infer/device.h"
#include "infer/image_model.h"

namespace framelift::infer {

struct MemoryProfile {
  int64_t fixed = 0;      // bytes independent of the input size
  double per_pixel = 0;   // bytes per input pixel of one frame
  // From the small input alone, all of its bytes counted per pixel: an upper bound for inputs of
  // that size and larger, which only says that a frame fits (probe_memory's `whole`).
  bool pessimistic = false;
  int64_t bytes(int64_t pixels, int batch) const { return fixed + static_cast<int64_t>(per_pixel * pixels * batch); }
};

// What a single frame needs to be planned: its size (the model's size multiple rounded up) and
// the bytes free for `batch` of them.
struct WholeFrame {
  int64_t pixels = 0;
  int64_t available = 0;
  int batch = 1;
};

// Runs the model (already on target.device) on 64 and 128 px inputs. With `whole`, the 128 px one
// (four times the work of the first) is skipped when the pessimistic profile of the 64 px one
// already has that frame fit: a single image needs one probe call, not five 64 px frames' worth
// before its own (issue 37: 231 s of a PLKSR upscale of one 64x64 image were 6 forward passes).
// Throws Error(Resource) when even the small input does not fit.
MemoryProfile probe_memory(models::ImageModel& model, const ExecutionTarget& target, const WholeFrame& whole = {});

// Bytes inference may still take on the target: on CPU the smaller of the --max-memory budget and
// the memory the system has left, on CUDA the device's free memory; minus what is in use, with a
// safety margin. 0 when nothing is known.
int64_t memory_for_inference(const ExecutionTarget& target);

// The largest tile (input pixels per side, a multiple of 16 and of the model's size multiple, at
// least 64) whose windows, with `overlap` context on each side, fit `available` bytes for `batch`
// frames; 0 when the whole frame fits.
int plan_tile(const MemoryProfile& profile, int64_t available, int64_t height, int64_t width, int overlap,
              int multiple, int batch);

}  // namespace framelift::infer
