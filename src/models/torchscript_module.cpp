#include "models/torchscript_module.h"

#include <torch/script.h>

#include "infer/tiler.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {

struct TorchScriptModule::Impl {
  torch::jit::Module module;
};

namespace {

// TorchScript errors carry the interpreter's traceback over many lines; the line that says what
// went wrong is the last one ("RuntimeError: ..."), which is what a one-line error keeps.
std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of(" \n\t");
  if (end == std::string::npos) return text;
  size_t begin = text.find_last_of('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin == std::string::npos ? 0 : begin + 1));
}

// Module::to(device, dtype) would also cast integer buffers (indices, counters) to the float
// type; only floating-point state changes precision.
void move_state(const at::Tensor& t, const infer::ExecutionTarget& target) {
  t.set_data(t.is_floating_point() ? t.to(target.device, target.dtype) : t.to(target.device));
}

}  // namespace

TorchScriptModule::TorchScriptModule(const std::filesystem::path& file, const infer::ExecutionTarget& target)
    : file_(file), impl_(std::make_unique<Impl>()) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    throw Error(ErrorKind::Model, str(file.string(), ": no such file"));
  try {
    impl_->module = torch::jit::load(file.string(), c10::Device(c10::kCPU));
  } catch (const c10::Error& e) {
    throw Error(ErrorKind::Model, str(file.string(), ": not a TorchScript module saved with torch.jit.save (",
                                      last_line(e.what_without_backtrace()), ")"));
  }
  impl_->module.eval();
  for (const at::Tensor& p : impl_->module.parameters()) move_state(p, target);
  for (const at::Tensor& b : impl_->module.buffers()) move_state(b, target);
  auto forward = impl_->module.find_method("forward");
  if (!forward) throw Error(ErrorKind::Model, str(file.string(), ": the module has no forward method"));
  const c10::FunctionSchema& schema = forward->function().getSchema();
  const auto& arguments = schema.arguments();
  for (size_t i = 1; i < arguments.size(); ++i)
    if (!arguments[i].default_value()) ++min_inputs_;
  max_inputs_ = schema.is_vararg() ? -1 : int(arguments.size()) - 1;
}

TorchScriptModule::~TorchScriptModule() = default;

at::Tensor TorchScriptModule::forward(const std::vector<at::Tensor>& inputs) {
  std::vector<c10::IValue> args(inputs.begin(), inputs.end());
  c10::IValue out;
  try {
    c10::InferenceMode guard;
    out = impl_->module.forward(std::move(args));
  } catch (const std::exception& e) {
    if (infer::is_out_of_memory(e)) throw Error(ErrorKind::Resource, str(file_.string(), ": out of memory in forward"));
    const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
    throw Error(ErrorKind::Model, str(file_.string(), ": forward failed: ",
                                      last_line(c10_error ? c10_error->what_without_backtrace() : e.what())));
  }
  if (!out.isTensor())
    throw Error(ErrorKind::Model, str(file_.string(), ": forward returned ", out.tagKind(), ", expected one tensor"));
  return out.toTensor();
}

}  // namespace framelift::models
