#pragma once
// The blocks taming-transformers' VQGAN is built from, which CodeFormer and RestoreFormer(++)
// inherit: GroupNorm(32 groups, eps 1e-6) and the residual block norm-swish-conv twice, with a
// 1x1 shortcut where the width changes (its key differs between the two: "conv_out" in
// CodeFormer's, "nin_shortcut" in RestoreFormer's).
#include <cstdint>
#include <string>

#include "models/native_model.h"

namespace framelift::models {

struct VqganGroupNorm {
  at::Tensor weight, bias;
  at::Tensor operator()(const at::Tensor& x) const;
};

// "<prefix>.weight" and "<prefix>.bias", [c].
VqganGroupNorm read_vqgan_group_norm(WeightReader& r, const std::string& prefix, int64_t c);

struct VqganResBlock {
  VqganGroupNorm norm1, norm2;
  Conv2d conv1, conv2, shortcut;  // shortcut: a 1x1 where the width changes, else none
  at::Tensor operator()(const at::Tensor& x) const;
  void visit_weights(const TensorVisitor& f);
};

// "<prefix>.norm1", ".conv1", ".norm2", ".conv2" and, when in != out, "<prefix>.<shortcut>".
VqganResBlock read_vqgan_res_block(WeightReader& r, const std::string& prefix, int64_t in, int64_t out, const std::string& shortcut);

}  // namespace framelift::models
