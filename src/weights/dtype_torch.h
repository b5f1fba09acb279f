#pragma once
// Mapping between our Dtype and libtorch's scalar types.
#include <optional>

#include <c10/core/ScalarType.h>

#include "weights/dtype.h"

namespace framelift::weights {

c10::ScalarType to_scalar_type(Dtype dtype);
std::optional<Dtype> from_scalar_type(c10::ScalarType type);

}  // namespace framelift::weights
