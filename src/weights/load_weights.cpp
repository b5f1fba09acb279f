#include "weights/load_weights.h"

#include "util/error.h"
#include "util/str.h"
#include "weights/file_bytes.h"
#include "weights/pth.h"
#include "weights/safetensors.h"
#include "weights/unwrap.h"
#include "weights/zip_archive.h"

namespace framelift::weights {

WeightFormat detect_weight_format(std::span<const uint8_t> head, uint64_t file_size) {
  if (looks_like_zip(head)) return WeightFormat::PthZip;
  // Safetensors first: its first byte is the header length's low byte, 0x80 (pickle's PROTO) for
  // one length in 32. A legacy pickle cannot pass this check: its byte 8, inside the magic
  // number, is 0xf9, not '{'.
  if (looks_like_safetensors(head, file_size)) return WeightFormat::Safetensors;
  if (!head.empty() && head[0] == 0x80) return WeightFormat::PthLegacy;  // pickle PROTO
  return WeightFormat::Unknown;
}

WeightFormat detect_weight_format(std::span<const uint8_t> bytes) { return detect_weight_format(bytes, bytes.size()); }

StateDict load_weights(const std::filesystem::path& path) {
  const std::string label = path.string();
  // Decided from the head: a file that is no weight file (a video, a disk image) is not read whole.
  const auto head = read_file_head(path, kWeightHeadBytes);
  const WeightFormat format = detect_weight_format(head.bytes, head.file_size);
  const auto bytes = format == WeightFormat::Unknown ? std::vector<uint8_t>{} : read_file_bytes(path);
  switch (format) {
    case WeightFormat::PthZip:
    case WeightFormat::PthLegacy: return load_pth_bytes(bytes, label);
    case WeightFormat::Safetensors: return unwrap_state_dict(load_safetensors_bytes(bytes, label), label);
    case WeightFormat::Unknown: break;
  }
  throw Error(ErrorKind::Model,
              str(label, ": unrecognised weight file (expected a PyTorch .pth/.pt/.ckpt checkpoint "
                         "or a .safetensors file)"));
}

}  // namespace framelift::weights
