#include "weights/file_bytes.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "util/error.h"
#include "util/str.h"

namespace framelift::weights {

std::vector<uint8_t> read_file_bytes(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(ErrorKind::Model, str(path.string(), ": is a directory, not a weight file"));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ErrorKind::Model, str(path.string(), ": cannot open (", std::strerror(errno), ")"));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw Error(ErrorKind::Model, str(path.string(), ": cannot determine file size"));
  in.seekg(0, std::ios::beg);
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  if (!bytes.empty() && !in.read(reinterpret_cast<char*>(bytes.data()), size))
    throw Error(ErrorKind::Model, str(path.string(), ": read failed"));
  return bytes;
}

}  // namespace framelift::weights
