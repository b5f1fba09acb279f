#pragma once
// torch's nn.MultiheadAttention at inference, as DETR-lineage decoders (DDColor) and CodeFormer's
// transformer store it: one packed in_proj for q, k and v, an out_proj, and a head count the
// weights do not say. Batch-first here ([N, L, C] in and out), where upstream is sequence-first.
#include <cstdint>
#include <string>

#include "models/token_layers.h"

namespace framelift::models {

struct MultiheadAttention {
  at::Tensor in_w, in_b;  // [3 C, C], [3 C]: q, k, v
  Linear out;
  int64_t heads = 8;
  at::Tensor operator()(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) const;
  void visit_weights(const TensorVisitor& f);
};

// "<prefix>.in_proj_weight", "<prefix>.in_proj_bias" and "<prefix>.out_proj", c wide.
MultiheadAttention read_multihead_attention(WeightReader& r, const std::string& prefix, int64_t c, int64_t heads);

}  // namespace framelift::models
