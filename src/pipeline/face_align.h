#pragma once
// Aligning a face to the restoration networks' template and pasting the restored face back, as
// facexlib's FaceRestoreHelper does for GFPGAN and CodeFormer:
//   - the five landmarks mapped onto the template (scaled from 512 to the network's face size) by
//     the similarity transform (rotation, uniform scale, shift) of least squares;
//   - the crop warped with bilinear sampling, outside the frame filled with upstream's grey;
//   - the restored crop warped back, its square's footprint eroded and feathered by a Gaussian
//     whose size grows with the face (facexlib's "square parse map"), and blended over the frame.
// Pixels outside a face's feathered footprint are the frame's, bit for bit.
//
// Coordinates are pixel centres (pixel (0, 0) is at 0.0, 0.0), as OpenCV's warpAffine has them.
// Where this differs from upstream, on purpose: the transform is the least-squares fit of all five
// points, where facexlib asks OpenCV for a least-median fit (LMEDS), which on five points with no
// outlier lands within a fraction of a pixel of it; and sampling is in float, where OpenCV rounds
// coordinates to 1/32 px and weights to 15 bits; and along the square's right and bottom edges,
// where upstream's feathered mask reaches the square's faded border and darkens the frame a
// little (2% of a code range, a line a few pixels long), the mask is capped by the footprint and
// the face read up to its edge pixels: where facexlib's mask is 1 the result is the same.
#include <array>
#include <cstdint>

#include <ATen/core/Tensor.h>

namespace framelift::pipeline {

// x' = a x - b y + tx, y' = b x + a y + ty.
struct Similarity {
  double a = 1, b = 0, tx = 0, ty = 0;
  Similarity inverse() const;
  std::array<double, 2> apply(double x, double y) const;
};

using Landmarks5 = std::array<float, 10>;  // (x, y) x 5, facexlib's order

// facexlib's five-point template for a face_size x face_size crop (512: its published numbers).
Landmarks5 face_template(int64_t face_size);

// The least-squares similarity taking `from` onto `to`.
Similarity fit_similarity(const Landmarks5& from, const Landmarks5& to);

// The face_size x face_size crop of `frame` ([3, H, W] float) that `to_crop` maps the frame onto;
// samples outside the frame are `border` (facexlib's grey, 135/133/132 of 255 in RGB order:
// 132, 133, 135). Returns [3, face_size, face_size] in frame's dtype.
at::Tensor warp_face(const at::Tensor& frame, const Similarity& to_crop, int64_t face_size);

// `frame` ([3, H, W], modified in place) with `face` ([3, S, S], clamped to [0, 1] here) pasted
// back where `to_crop` took it from, feathered as facexlib's square map is.
void paste_face(at::Tensor& frame, const at::Tensor& face, const Similarity& to_crop);

}  // namespace framelift::pipeline
