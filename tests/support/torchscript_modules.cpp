#include "support/torchscript_modules.h"

#include <torch/script.h>

namespace framelift::test {

std::filesystem::path save_torchscript(const std::filesystem::path& file, const std::string& source) {
  torch::jit::Module module("TestModule");
  module.define(source);
  module.save(file.string());
  return file;
}

}  // namespace framelift::test
