#pragma once
// Runs an image model over a frame in tiles, so that any frame size fits a memory budget.
//
// Each tile is the model's input for one rectangle of the frame plus `overlap` pixels of real
// context on every side (reflect padding only at the frame's own edges and up to the model's
// size multiple); only the rectangle's part of the output is kept. With enough context for the
// model's receptive field the seams vanish: tests hold tiled output to PSNR >= 50 dB of the untiled
// one on real footage.
//
// Out of memory: the tile is halved and the frame retried, down to 64 pixels, before giving up.
#include <ATen/core/Tensor.h>

#include "models/image_model.h"

namespace framelift::infer {

struct TileOptions {
  int tile = 0;      // input pixels per tile side; 0: whole frame when it is at most 512x512
  int overlap = -1;  // context pixels on each side; -1: the model's info().tile_overlap
};

// image: [3, H, W] float. Returns [3, H*scale, W*scale].
at::Tensor upscale_tiled(models::ImageModel& model, const at::Tensor& image, TileOptions options = {});

// Pads [N, C, H, W] (reflect where possible, replicate where the side is too small) so that H and
// W become multiples of `multiple`; returns the padded tensor.
at::Tensor pad_to_multiple(const at::Tensor& x, int multiple);

}  // namespace framelift::infer
