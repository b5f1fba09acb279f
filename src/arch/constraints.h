#pragma once
// What must hold of the numbers a detector reads off a checkpoint's shapes before anything
// divides by them or allocates from them. A weight file is untrusted input: a crafted
// .safetensors with zero attention heads once took the server down with SIGFPE (issue 30, case
// 2). Each architecture lists, next to the tensor axes it reads (Axis), a few constraints over
// the hyper-parameters they become (its Declaration, declaration.h); check_params() runs them
// and the registry (src/models/architecture_registry.cpp) runs that on every detection.
//
// Every value is also bounded (kMaxParam): a dimension of 2^40 read off a zero-byte tensor
// ([2^40, 0] stores nothing) must be refused before a builder allocates from it.
#include <string>
#include <vector>

#include "arch/params.h"

namespace framelift::arch {

// Larger than any channel count, table or layer count a published model has (the largest are a
// few thousand), small enough that no product of two fits a 32-bit overflow or a huge allocation.
inline constexpr double kMaxParam = 65536;

// Layers and blocks per layer, counted off key names: published models have at most a dozen of
// each. A cost walk loops over their product, which the fuzzer (fuzz/arch_shapes_fuzzer.cpp)
// found taking minutes at 65536 x 65536.
inline constexpr double kMaxBlocks = 256;

// Where a hyper-parameter is read: axis `axis` of tensor `tensor` (layer 0's, where every layer
// has one). Named in refusals, and what tests/models/malformed_shapes_test.cpp mutates.
struct Axis {
  std::string param;   // "heads"
  std::string tensor;  // "layers.0.residual_group.blocks.0.attn.relative_position_bias_table"
  int axis = 0;        // 1
};

struct Constraint {
  enum class Kind { Positive, AtMost, InRange, MultipleOf, Divides, Equals, NoMoreThan };
  Kind kind;
  std::string param;  // the value checked
  std::string other;  // Divides: the value param divides; Equals: the value it equals; NoMoreThan: its bound
  double lo = 0, hi = 0;  // AtMost: hi; InRange: [lo, hi]; MultipleOf: lo; Divides: other's factor (lo)
};

Constraint positive(std::string param);                       // param >= 1
Constraint at_most(std::string param, double n);              // param <= n
Constraint in_range(std::string param, double lo, double hi); // lo <= param <= hi
Constraint multiple_of(std::string param, double n);          // param % n == 0 (n a constant > 0)
// other * factor is a whole multiple of param (heads divide embed_dim): param is checked positive
// first, so a zero never reaches the modulo.
Constraint divides(std::string param, std::string other, double factor = 1);
Constraint equals(std::string param, std::string other);      // param == other
// param <= other: a part of a tensor's channels (PLKSR's large-kernel slice of dim) cannot be wider than the whole.
Constraint no_more_than(std::string param, std::string other);

// Checks `params` (hyper-parameters of architecture `arch`, as far as a detector has read them):
// every value finite and within [-kMaxParam, kMaxParam], then each constraint whose parameters
// the set has (one on a parameter not read yet, or an optional one, does not apply). Throws
// Error(Model) "<source>: <arch>: heads is 0 (layers.0....relative_position_bias_table, axis 1);
// it must be at least 1", naming the tensor when `axes` has the parameter.
void check_params(const std::string& arch, const std::vector<Axis>& axes, const std::vector<Constraint>& constraints,
                  const ArchParams& params, const std::string& source);

}  // namespace framelift::arch
