#include "models/swin_shell.h"

namespace framelift::models {
namespace {

at::Tensor mirror_pad(at::Tensor x, int64_t dim, int64_t size) {
  while (x.size(dim) < size) x = at::cat({x, x.flip({dim})}, dim);
  return x.narrow(dim, 0, size);
}

int64_t rounded_up(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

}  // namespace

at::Tensor mirror_padded(const at::Tensor& x, int64_t multiple) {
  return mirror_pad(mirror_pad(x, 2, rounded_up(x.size(2), multiple)), 3, rounded_up(x.size(3), multiple));
}

}  // namespace framelift::models
