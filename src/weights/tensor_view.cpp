#include "weights/tensor_view.h"

#include <cstring>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>

#include "util/error.h"
#include "util/str.h"
#include "weights/dtype_torch.h"

namespace framelift::weights {

void CopyBudget::take(size_t bytes) {
  if (bytes <= left_) {
    left_ -= bytes;
    return;
  }
  throw Error(ErrorKind::Model, str(label_, ": its tensors need more than ", total_ >> 20,
                                    " MiB of memory, the most a file of its size may take ",
                                    "(views of one storage copied many times?)"));
}

at::Tensor storage_tensor(std::span<const uint8_t> bytes, Dtype dtype, const std::string& label,
                          CopyBudget& budget) {
  const size_t element = element_size(dtype);
  budget.take(bytes.size());
  at::Tensor out = at::empty({static_cast<int64_t>(bytes.size() / element)},
                             at::TensorOptions().dtype(to_scalar_type(dtype)));
  if (!bytes.empty()) std::memcpy(out.data_ptr(), bytes.data(), out.numel() * element);
  // A bool byte other than 0/1 is undefined behaviour in libtorch; normalise hostile input.
  if (dtype == Dtype::Bool) {
    auto* p = static_cast<uint8_t*>(out.data_ptr());
    for (int64_t i = 0; i < out.numel(); ++i) p[i] = p[i] != 0;
  }
  return out;
}

at::Tensor materialize(const pickle::TensorRef& tensor, const at::Tensor& storage,
                       const std::string& name, const std::string& label, CopyBudget& budget) {
  auto fail = [&](const std::string& problem) -> at::Tensor {
    throw Error(ErrorKind::Model, str(label, ": tensor ", name, ": ", problem));
  };
  const auto& ref = tensor.storage;
  const int64_t available = storage.numel();
  if (ref.view_offset > available) return fail("storage view starts past the storage");
  const int64_t base = ref.view_offset;
  const int64_t limit = ref.view_numel ? *ref.view_numel : available - base;
  if (limit > available - base) return fail("storage view runs past the storage");
  if (tensor.offset < 0) return fail("negative storage offset");
  // Highest element index the view touches, with overflow checks (hostile sizes can be 2^62).
  int64_t numel = 1, last = tensor.offset;
  for (size_t i = 0; i < tensor.sizes.size(); ++i) {
    const int64_t size = tensor.sizes[i], stride = tensor.strides[i];
    if (size < 0 || stride < 0) return fail("negative size or stride");
    if (__builtin_mul_overflow(numel, size, &numel)) return fail("element count overflows");
    int64_t reach = 0;
    if (size > 0 && (__builtin_mul_overflow(size - 1, stride, &reach) ||
                     __builtin_add_overflow(last, reach, &last)))
      return fail("strides overflow");
  }
  if (numel > 0 && last >= limit)
    return fail(str("needs storage element ", last, " but storage ", ref.key, " has ", limit));
  // State dicts never hold broadcast (stride-0) views; refusing them bounds the allocation below
  // by the file size.
  if (numel > limit)
    return fail(str("views ", numel, " elements but storage ", ref.key, " holds ", limit));
  if (numel == 0) return at::empty(tensor.sizes, storage.options());
  // as_strided offsets count from the start of the storage, not of a narrowed view.
  at::Tensor view = storage.as_strided(tensor.sizes, tensor.strides, base + tensor.offset);
  // The common case (a whole, contiguous storage) needs no second copy.
  if (tensor.offset == 0 && numel == limit && base == 0 && limit == available && view.is_contiguous())
    return storage.view(tensor.sizes);
  budget.take(static_cast<size_t>(numel) * storage.element_size());
  return view.clone(at::MemoryFormat::Contiguous);
}

}  // namespace framelift::weights
