#pragma once
// What both .pth layouts reduce to: the main pickle plus where each storage's bytes are. Shared
// by the zip and legacy readers so the tensor selection and checks exist once.
#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "weights/pickle_value.h"
#include "weights/state_dict.h"

namespace framelift::weights {

struct PickledCheckpoint {
  pickle::Unpickled pickle;
  std::map<std::string, std::span<const uint8_t>> storages;  // key -> raw bytes in the file
  size_t file_size = 0;  // bounds the memory the state dict may take (state_dict_from_checkpoint)
  // A TorchScript archive (torch.jit.save: constants.pkl beside data.pkl): the pickle is the module
  // tree, whose parameters and buffers are the state dict.
  bool torchscript = false;
};

PickledCheckpoint read_zip_checkpoint(std::span<const uint8_t> bytes, const std::string& label);
PickledCheckpoint read_legacy_checkpoint(std::span<const uint8_t> bytes, const std::string& label);

// Descends through wrapper dicts (unwrap.h) and materialises only the chosen tensors. The memory
// they take (storages copied once, views that need a copy of their own) stays within
// max_state_dict_bytes(file_size): 400 views of one 10 MB storage would otherwise take 4 GB.
size_t max_state_dict_bytes(size_t file_size);
StateDict state_dict_from_checkpoint(const PickledCheckpoint& checkpoint, const std::string& label);

}  // namespace framelift::weights
