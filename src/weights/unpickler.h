#pragma once
// A restricted unpickler for PyTorch state dicts: the opcodes torch.save emits for dicts of
// tensors (protocols 2-5), and no others. It runs no Python and imports nothing; see
// pickle_globals.h for the names it accepts and docs/weights.md for why.
#include <cstdint>
#include <span>
#include <string>

#include "weights/pickle_value.h"

namespace framelift::weights::pickle {

struct Limits {
  // Bytes that BINGET/DUP may copy in total (strings and tensor metadata are copied, containers
  // are shared). Bounds the memory a small hostile pickle can make us allocate.
  size_t max_copied_bytes = size_t{256} << 20;
  // Memory the unpickled values may hold (containers, stack, memo, strings), as a floor plus a
  // multiple of the pickle's size: one opcode byte can make a container of ~300 bytes, so without
  // a bound a 20 MB file of EMPTY_LIST opcodes became 6.9 GB. Real state-dict pickles hold 27-46
  // bytes per pickle byte (tests/weights/real_checkpoints_test.cpp measures two: 46 and 27), which
  // is why the budget cannot come much closer to the file size without refusing real checkpoints.
  size_t memory_floor = size_t{64} << 20;
  size_t memory_per_byte = 64;
  // A TorchScript archive's data.pkl (torch.jit.save): objects of its __torch__ module classes
  // become attribute dicts (Node::module) and torch.jit._pickle's list builders are accepted.
  // Still nothing is imported or run: the class names are only names.
  bool torchscript_modules = false;
};

// Unpickles the first pickle in `bytes` (stops at STOP; `consumed` says where). `label` names the
// file in error messages. Throws Error(Model) on malformed or forbidden input, never crashes.
Unpickled unpickle(std::span<const uint8_t> bytes, const std::string& label,
                   const Limits& limits = {});

}  // namespace framelift::weights::pickle
