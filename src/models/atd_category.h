#pragma once
// ATD's adaptive category-based attention (AC-MSA): tokens sorted by the dictionary token they are
// most similar to, cut into groups of category_size in that order, self-attention inside each
// group, put back in place. Global: a token's group depends on every other token of the map.
#include <string>

#include <ATen/core/Tensor.h>

#include "models/native_model.h"
#include "models/token_layers.h"

namespace framelift::models {

class CategoryAttention {
 public:
  // "<prefix>.logit_scale" [1, 1] and "<prefix>.proj" (bias only with qkv_bias, as upstream).
  CategoryAttention(WeightReader& r, const std::string& prefix, int64_t channels, int64_t heads, int64_t category, bool qkv_bias);

  // qkv [B, N, 3C], sim [B, N, m] (the softmaxed dictionary similarity) -> [B, N, C].
  at::Tensor operator()(const at::Tensor& qkv, const at::Tensor& sim) const;
  void visit_weights(const TensorVisitor& f);

 private:
  int64_t heads_, category_;
  at::Tensor logit_scale_;
  Linear proj_;
};

}  // namespace framelift::models
