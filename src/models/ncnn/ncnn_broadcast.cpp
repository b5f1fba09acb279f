#include "models/ncnn/ncnn_broadcast.h"

#include <ATen/ATen.h>

#include "models/ncnn/ncnn_tensor.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models::ncnn {
namespace {

// Raises `low` to `rank` ncnn dims, aligned as ncnn does against `high`.
at::Tensor expand_rank(const at::Tensor& low, const at::Tensor& high, int rank) {
  int dims = ncnn_dims(low);
  std::vector<int64_t> shape(low.sizes().begin(), low.sizes().end());
  bool right_aligned = dims == 1 && low.size(1) != high.size(1) && low.size(1) == high.size(high.dim() - 1);
  if (right_aligned) {
    shape.insert(shape.begin() + 1, rank - dims, 1);
  } else {
    shape.insert(shape.end(), rank - dims, 1);
  }
  return low.view(shape);
}

}  // namespace

std::pair<at::Tensor, at::Tensor> ncnn_broadcast(const at::Tensor& a, const at::Tensor& b, const std::string& layer) {
  int da = ncnn_dims(a), db = ncnn_dims(b);
  at::Tensor a2 = da < db ? expand_rank(a, b, db) : a;
  at::Tensor b2 = db < da ? expand_rank(b, a, da) : b;
  for (int64_t d = 0; d < a2.dim(); ++d) {
    int64_t x = a2.size(d), y = b2.size(d);
    if (x != y && x != 1 && y != 1)
      throw Error(ErrorKind::Model, framelift::str("ncnn layer ", layer, ": cannot broadcast blob shapes ", a.sizes(), " and ",
                                        b.sizes(), " (batch axis first)"));
  }
  return {a2, b2};
}

at::Tensor outer_axis_view(const at::Tensor& v, const at::Tensor& x) {
  std::vector<int64_t> shape(x.dim(), 1);
  if (x.dim() >= 2) shape[1] = v.numel();
  if (v.numel() == 1) shape.assign(x.dim(), 1);
  return v.view(shape);
}

}  // namespace framelift::models::ncnn
