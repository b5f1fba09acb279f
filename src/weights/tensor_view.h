#pragma once
// Turns a pickled tensor reference plus its storage bytes into a contiguous CPU tensor that owns
// its memory, after checking that sizes, strides and offset stay inside the storage.
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include <ATen/core/Tensor.h>

#include "weights/dtype.h"
#include "weights/pickle_value.h"

namespace framelift::weights {

// The bytes a reader may still allocate for one file's tensors. Copies are taken from it before
// they are made, so a file that asks for too much is refused without the memory ever being used.
class CopyBudget {
 public:
  CopyBudget(size_t bytes, std::string label) : left_(bytes), total_(bytes), label_(std::move(label)) {}
  // Throws Error(Model) "<label>: its tensors need more than N MiB ..." when `bytes` do not fit.
  void take(size_t bytes);

 private:
  size_t left_, total_;
  std::string label_;
};

// A storage's raw bytes copied into an aligned 1-D tensor of `dtype` (bytes.size() must be a
// multiple of the element size).
at::Tensor storage_tensor(std::span<const uint8_t> bytes, Dtype dtype, const std::string& label,
                          CopyBudget& budget);

// `storage` is storage_tensor(...) for tensor.storage.key; throws Error(Model) "<label>: ..." when
// the view does not fit. A view that is not its whole storage is copied, from `budget`.
at::Tensor materialize(const pickle::TensorRef& tensor, const at::Tensor& storage,
                       const std::string& name, const std::string& label, CopyBudget& budget);

}  // namespace framelift::weights
