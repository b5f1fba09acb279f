#include "weights/load_weights.h"

#include "util/error.h"
#include "util/str.h"
#include "weights/file_bytes.h"
#include "weights/pth.h"
#include "weights/safetensors.h"
#include "weights/unwrap.h"
#include "weights/zip_archive.h"

namespace framelift::weights {

WeightFormat detect_weight_format(std::span<const uint8_t> bytes) {
  if (looks_like_zip(bytes)) return WeightFormat::PthZip;
  if (!bytes.empty() && bytes[0] == 0x80) return WeightFormat::PthLegacy;  // pickle PROTO
  if (looks_like_safetensors(bytes)) return WeightFormat::Safetensors;
  return WeightFormat::Unknown;
}

StateDict load_weights(const std::filesystem::path& path) {
  const auto bytes = read_file_bytes(path);
  const std::string label = path.string();
  switch (detect_weight_format(bytes)) {
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
