#pragma once
// Runs an image model over frames in tiles, so that any frame size fits a memory budget.
//
// Each tile is the model's input for one rectangle of the frame plus `overlap` pixels of real
// context on every side (reflect padding only at the frame's own edges and up to the model's
// size multiple); only the rectangle's part of the output is kept. With enough context for the
// model's receptive field the seams vanish: tests hold tiled output to PSNR >= 50 dB of the untiled
// one on real footage.
//
// Out of memory (a CUDA OOM, the CPU allocator failing, or the --max-memory budget refusing an
// allocation): the tile batch, then the tile is halved and the frame retried, down to 64 pixels,
// before giving up.
#include <ATen/core/Tensor.h>

#include "infer/image_model.h"

namespace framelift::infer {

// The smallest tile side the OOM halving goes down to, and the planner ever picks.
constexpr int kMinTile = 64;

struct TileOptions {
  int tile = 0;      // input pixels per tile side; 0: the whole frame in one piece
  int overlap = -1;  // context pixels on each side; -1: the model's info().tile_overlap
  // Tiles per forward call. Tiles whose windows have the same size (all but the frame's last row
  // and column, usually) are stacked along the batch dimension: on a GPU one call over k small
  // tiles keeps more of it busy than k calls. An OOM halves this before it halves the tile.
  int batch = 1;
};

// A model whose info().tiled is false runs on whole frames whatever options.tile says.
// images: [3, H, W] or a batch [N, 3, H, W], on the model's device. Returns the same rank with
// H*scale, W*scale. `used_tile` (when given) receives the tile size that finally worked (0: whole).
at::Tensor upscale_tiled(models::ImageModel& model, const at::Tensor& images, TileOptions options = {},
                         int* used_tile = nullptr);

// Pads [N, C, H, W] (reflect where possible, replicate where the side is too small) so that H and
// W become multiples of `multiple`; returns the padded tensor.
at::Tensor pad_to_multiple(const at::Tensor& x, int multiple);

// True for the exceptions that mean "out of memory" from any allocator libtorch may use.
bool is_out_of_memory(const std::exception& e);

}  // namespace framelift::infer
