#pragma once
// Tiny TorchScript modules for the `model` stage's tests, built in C++ (no Python needed) and
// saved with Module::save, which writes the same format as torch.jit.save.
#include <filesystem>
#include <map>
#include <string>

#include <ATen/core/Tensor.h>

namespace framelift::test {

// Saves a module whose methods are `source` (TorchScript, e.g. "def forward(self, x):\n  return x")
// to `file` and returns `file`.
std::filesystem::path save_torchscript(const std::filesystem::path& file, const std::string& source);

// Saves a module tree holding `tensors` under their dotted names ("fuse.convs.0.0.0.weight": a
// submodule per name part, parameters at the leaves), as torch.jit.save writes a scripted
// network's parameters, with `ints` as integer attributes of the root; returns `file`.
std::filesystem::path save_module_tree(const std::filesystem::path& file, const std::map<std::string, at::Tensor>& tensors,
                                       const std::map<std::string, int64_t>& ints = {});

// The modules both test folders use.
namespace modules {
inline const char* kIdentity = "def forward(self, x):\n    return x\n";
// A fixed colour transform, out_i = sum_j M_ij in_j, as a 1x1 convolution; M is kColorMatrix.
inline const char* kColorMatrix =
    "def forward(self, x):\n"
    "    m = torch.tensor([[0.5, 0.25, 0.25], [0.0, 0.8, 0.2], [0.3, 0.0, 0.7]], dtype=x.dtype, device=x.device)\n"
    "    return torch.conv2d(x, m.view(3, 3, 1, 1))\n";
constexpr double kMatrix[3][3] = {{0.5, 0.25, 0.25}, {0.0, 0.8, 0.2}, {0.3, 0.0, 0.7}};
// window=3, layout=channels: the mean of previous, current and next frame.
inline const char* kAverage3 = "def forward(self, x):\n    return (x[:, 0:3] + x[:, 3:6] + x[:, 6:9]) / 3.0\n";
// With a mask: masked pixels become kFill (RGB, 0-1), the others are kept.
inline const char* kMaskedFill =
    "def forward(self, x, mask):\n"
    "    fill = torch.tensor([1.0, 0.2, 0.0], dtype=x.dtype, device=x.device).view(1, 3, 1, 1)\n"
    "    return x * (1.0 - mask) + fill * mask\n";
constexpr double kFill[3] = {1.0, 0.2, 0.0};
// One channel instead of three: the stage must refuse it.
inline const char* kWrongShape = "def forward(self, x):\n    return x[:, 0:1]\n";
}  // namespace modules

}  // namespace framelift::test
