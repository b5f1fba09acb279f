#pragma once
// Crafted weight files for the hostile-weights tests (tests/models, tests/cli, tests/server): a
// .safetensors writer that needs no libtorch (the bytes are zeros; detection reads names and
// shapes), and for each attention architecture the fewest tensors its detector reads before it
// divides by the heads, with the heads axis at zero. Such a file killed the process with SIGFPE
// before the declared constraints (src/arch/constraints.h) were checked (issue 30, case 2).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace framelift::test {

struct CraftedTensor {
  std::string name;
  std::vector<int64_t> shape;  // float32, zero-filled
};

// Writes `tensors` as a valid .safetensors file (8-byte length, JSON header, zero bytes).
void write_crafted_safetensors(const std::filesystem::path& file, const std::vector<CraftedTensor>& tensors);

// The architectures whose detectors read an attention head count: swinir, swin2sr, hat, srformer,
// atd, drct, dat, scunet.
const std::vector<std::string>& attention_architectures();

// `arch`'s minimal layout with `heads` heads (0: the crafted case) and `channels` embedding
// channels; what its detector reads up to the heads check. Fails the test for another name.
std::vector<CraftedTensor> attention_layout(const std::string& arch, int64_t heads, int64_t channels = 16);

// attention_layout(arch, 0) written to DIR/ARCH-zero-heads.safetensors; its path.
std::filesystem::path write_zero_heads(const std::filesystem::path& dir, const std::string& arch);

}  // namespace framelift::test
