#pragma once
// One executable ncnn layer. Blobs are tensors [N, <ncnn shape>]: ncnn blobs have no batch axis,
// so a 3-D ncnn blob (c, h, w) is [N, C, H, W], a 1-D blob (w) is [N, W]. ncnn axis k is therefore
// tensor dim k + 1 (negative ncnn axes count from the blob's ncnn rank, see ncnn_tensor.h).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "weights/ncnn_param.h"
#include "weights/state_dict.h"

namespace framelift::models::ncnn {

using Blobs = std::vector<at::Tensor>;

class NcnnOp {
 public:
  virtual ~NcnnOp() = default;
  // Inputs are handed over by value: an input no other layer still needs is owned by the op
  // alone (see owned() in ncnn_tensor.h), which lets it work in place.
  virtual Blobs forward(Blobs inputs) = 0;
  // Ops that hold weights convert them; the default suits weightless ops.
  virtual void to(c10::Device device, c10::ScalarType dtype) {}
};

// What a factory gets to build an op: the layer's .param line and the model's weights.
struct LayerSpec {
  const weights::NcnnLayer& layer;
  const weights::StateDict& weights;
  const std::string& source;  // .param file name, for messages

  // "<layer>.<role>" as float32; throws framelift::Error when absent.
  at::Tensor weight(const std::string& role) const;
  // Undefined tensor when absent.
  at::Tensor optional_weight(const std::string& role) const;
  // Throws framelift::Error "<source>: layer <name> (<type>): <problem>".
  [[noreturn]] void fail(const std::string& problem) const;
};

using LayerFactory = std::function<std::unique_ptr<NcnnOp>(const LayerSpec&)>;

// A stateless op from a lambda, for the many layers that are one ATen call.
class LambdaOp : public NcnnOp {
 public:
  explicit LambdaOp(std::function<Blobs(Blobs)> fn) : fn_(std::move(fn)) {}
  Blobs forward(Blobs inputs) override { return fn_(std::move(inputs)); }

 private:
  std::function<Blobs(Blobs)> fn_;
};

}  // namespace framelift::models::ncnn
