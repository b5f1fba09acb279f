#pragma once
// CIE L*a*b* (D65) of sRGB pixels, the colour space colorization networks (DDColor) predict in:
// the sRGB transfer undone, XYZ by the sRGB primaries, then Lab, with OpenCV's constants (what
// DDColor's own pipeline calls, cv2.cvtColor(COLOR_BGR2Lab) on float images). And the luma of
// one picture put onto another, which `colorize` uses to keep a frame's brightness exactly.
//
// Tensors are float [3, H, W] (or [N, 3, H, W]) on any device: RGB in [0, 1], L in 0..100,
// a and b around -128..127.
#include <ATen/core/Tensor.h>

namespace framelift::pipeline {

at::Tensor srgb_to_lab(const at::Tensor& rgb);

// Linear RGB outside [0, 1] (a colour no sRGB pixel has) is clipped before the transfer, as
// OpenCV does; the result is in [0, 1].
at::Tensor lab_to_srgb(const at::Tensor& lab);

// `colour` [3, H, W] with the luma of `source` (Y' = kr R + (1 - kr - kb) G + kb B, the video's
// matrix): shifted by the difference, which keeps its chroma (Cb, Cr) unchanged, and where that
// leaves [0, 1], blended toward grey just enough to fit. The result's luma equals the source's
// (both in [0, 1]) to float rounding.
at::Tensor with_luma_of(const at::Tensor& colour, const at::Tensor& source, double kr, double kb);

}  // namespace framelift::pipeline
