#pragma once
// PyTorch checkpoints (.pth/.pt/.ckpt) written by torch.save: the zip format (PyTorch >= 1.6) and
// the legacy pickle-stream format before it. Read with our own restricted unpickler, so loading a
// hostile checkpoint cannot run code; see docs/weights.md.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "weights/state_dict.h"

namespace framelift::weights {

// The weights inside the checkpoint, unwrapped (params_ema/params/state_dict/..., "module."
// prefixes) as unwrap.h describes. Throws Error(Model) naming the file on any problem.
StateDict load_pth(const std::filesystem::path& path);
// The same from bytes already in memory; `label` names them in error messages.
StateDict load_pth_bytes(std::span<const uint8_t> bytes, const std::string& label);

}  // namespace framelift::weights
