#pragma once
// A user's TorchScript module (a `.pt` written by torch.jit.save), loaded for inference: the
// engine behind the `model` stage (docs/custom-models.md). The module is moved to a device and
// precision and run in inference mode; what its inputs and output mean is the stage's business.
//
// <torch/script.h> stays in torchscript_module.cpp: the TorchScript headers are the heaviest of
// libtorch and only this file needs them.
//
// Not thread-safe: one instance per stage.
#include <filesystem>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>

#include "infer/device.h"

namespace framelift::models {

class TorchScriptModule {
 public:
  // Loads `file` and moves its floating-point parameters and buffers to the target's device and
  // precision (integer buffers only change device). Throws Error(Model, "<file>: <problem>") for
  // a missing file, a file torch::jit::load refuses, or a module without forward().
  TorchScriptModule(const std::filesystem::path& file, const infer::ExecutionTarget& target);
  ~TorchScriptModule();
  TorchScriptModule(const TorchScriptModule&) = delete;
  TorchScriptModule& operator=(const TorchScriptModule&) = delete;

  // How many arguments forward() takes, self excluded: at least min_inputs() (those without a
  // default), at most max_inputs() (-1: any number, *args).
  int min_inputs() const { return min_inputs_; }
  int max_inputs() const { return max_inputs_; }

  // forward(inputs...) in inference mode; the inputs must already be on the target. Throws
  // Error(Model, "<file>: ...") when forward fails or returns something other than one tensor,
  // Error(Resource) when it runs out of memory.
  at::Tensor forward(const std::vector<at::Tensor>& inputs);

  const std::filesystem::path& file() const { return file_; }

 private:
  struct Impl;
  std::filesystem::path file_;
  std::unique_ptr<Impl> impl_;
  int min_inputs_ = 0, max_inputs_ = -1;
};

}  // namespace framelift::models
