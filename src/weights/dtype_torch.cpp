#include "weights/dtype_torch.h"

#include <array>
#include <utility>

namespace framelift::weights {
namespace {

constexpr std::array<std::pair<Dtype, c10::ScalarType>, 10> kPairs{{
    {Dtype::F64, c10::ScalarType::Double},
    {Dtype::F32, c10::ScalarType::Float},
    {Dtype::F16, c10::ScalarType::Half},
    {Dtype::BF16, c10::ScalarType::BFloat16},
    {Dtype::I64, c10::ScalarType::Long},
    {Dtype::I32, c10::ScalarType::Int},
    {Dtype::I16, c10::ScalarType::Short},
    {Dtype::I8, c10::ScalarType::Char},
    {Dtype::U8, c10::ScalarType::Byte},
    {Dtype::Bool, c10::ScalarType::Bool},
}};

}  // namespace

c10::ScalarType to_scalar_type(Dtype dtype) {
  for (auto [ours, theirs] : kPairs)
    if (ours == dtype) return theirs;
  return c10::ScalarType::Float;  // unreachable: every enumerator is in the table
}

std::optional<Dtype> from_scalar_type(c10::ScalarType type) {
  for (auto [ours, theirs] : kPairs)
    if (theirs == type) return ours;
  return std::nullopt;
}

}  // namespace framelift::weights
