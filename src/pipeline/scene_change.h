#pragma once
// How different two frames look, for scene-cut detection and duplicate-frame skipping: the mean
// absolute difference of small grey thumbnails (64 px wide, area-averaged), in [0, 1]. Averaging
// first makes the score blind to noise and grain and cheap at any resolution; a hard cut between
// unrelated shots scores 0.15-0.5, motion within a shot mostly below 0.06, an exact repeat 0.
#include <ATen/core/Tensor.h>

namespace framelift::pipeline {

// image: [3, H, W] float RGB in [0, 1]. Keep the thumbnail of a frame that will be compared again.
at::Tensor scene_thumbnail(const at::Tensor& image);
double thumbnail_difference(const at::Tensor& a, const at::Tensor& b);

}  // namespace framelift::pipeline
