#include "weights/pth.h"

#include "util/error.h"
#include "util/str.h"
#include "weights/byte_reader.h"
#include "weights/file_bytes.h"
#include "weights/pth_checkpoint.h"
#include "weights/zip_archive.h"

namespace framelift::weights {

namespace {

StateDict load_any(std::span<const uint8_t> bytes, const std::string& label) {
  if (looks_like_zip(bytes))
    return state_dict_from_checkpoint(read_zip_checkpoint(bytes, label), label);
  // Legacy files start with a pickle PROTO opcode (the magic number's pickle).
  if (!bytes.empty() && bytes[0] == 0x80)
    return state_dict_from_checkpoint(read_legacy_checkpoint(bytes, label), label);
  throw Error(ErrorKind::Model,
              str(label, ": not a PyTorch checkpoint (neither a zip archive nor a pickle)"));
}

}  // namespace

StateDict load_pth_bytes(std::span<const uint8_t> bytes, const std::string& label) {
  // Our checks should stop bad input first; this keeps the promise that callers only ever see
  // framelift::Error if libtorch or the allocator objects anyway.
  try {
    return load_any(bytes, label);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Model, str(label, ": cannot load checkpoint (", first_line(e.what()), ")"));
  }
}

StateDict load_pth(const std::filesystem::path& path) {
  const auto bytes = read_file_bytes(path);
  return load_pth_bytes(bytes, path.string());
}

}  // namespace framelift::weights
