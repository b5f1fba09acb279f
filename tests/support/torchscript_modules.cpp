#include "support/torchscript_modules.h"

#include <torch/script.h>

namespace framelift::test {

std::filesystem::path save_torchscript(const std::filesystem::path& file, const std::string& source) {
  torch::jit::Module module("TestModule");
  module.define(source);
  module.save(file.string());
  return file;
}

std::filesystem::path save_module_tree(const std::filesystem::path& file, const std::map<std::string, at::Tensor>& tensors,
                                       const std::map<std::string, int64_t>& ints) {
  int classes = 0;
  torch::jit::Module root("Root");
  for (const auto& [name, value] : ints) root.register_attribute(name, c10::IntType::get(), value);
  for (const auto& [key, tensor] : tensors) {
    torch::jit::Module module = root;  // a handle: registering on it changes the tree
    size_t start = 0;
    for (size_t dot = key.find('.'); dot != std::string::npos; start = dot + 1, dot = key.find('.', start)) {
      const std::string part = key.substr(start, dot - start);
      if (!module.hasattr(part)) module.register_module(part, torch::jit::Module("Node" + std::to_string(classes++)));
      module = module.attr(part).toModule();
    }
    module.register_parameter(key.substr(start), tensor, false);
  }
  root.save(file.string());
  return file;
}

}  // namespace framelift::test
