#include "weights/file_bytes.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <new>

#include "util/error.h"
#include "util/str.h"

namespace framelift::weights {
namespace {

struct OpenFile {
  std::ifstream in;
  uint64_t size = 0;
};

OpenFile open_weight_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(ErrorKind::Model, str(path.string(), ": is a directory, not a weight file"));
  OpenFile f{std::ifstream(path, std::ios::binary), 0};
  if (!f.in)
    throw Error(ErrorKind::Model, str(path.string(), ": cannot open (", std::strerror(errno), ")"));
  f.in.seekg(0, std::ios::end);
  const std::streamoff size = f.in.tellg();
  if (size < 0) throw Error(ErrorKind::Model, str(path.string(), ": cannot determine file size"));
  f.in.seekg(0, std::ios::beg);
  f.size = static_cast<uint64_t>(size);
  return f;
}

// A file larger than physical memory cannot be parsed from memory; saying so beats an OOM kill.
void check_fits_in_memory(const std::filesystem::path& path, uint64_t size) {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 && size > static_cast<uint64_t>(pages) * static_cast<uint64_t>(page))
    throw Error(ErrorKind::Resource, str(path.string(), ": ", size >> 20, " MiB weight file is larger than this "
                                         "machine's memory"));
}

}  // namespace

std::vector<uint8_t> read_file_bytes(const std::filesystem::path& path) {
  OpenFile f = open_weight_file(path);
  check_fits_in_memory(path, f.size);
  std::vector<uint8_t> bytes;
  try {
    bytes.resize(static_cast<size_t>(f.size));
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::Resource, str(path.string(), ": not enough memory to read ", f.size >> 20, " MiB"));
  }
  if (!bytes.empty() && !f.in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(f.size)))
    throw Error(ErrorKind::Model, str(path.string(), ": read failed"));
  return bytes;
}

FileHead read_file_head(const std::filesystem::path& path, size_t max_bytes) {
  OpenFile f = open_weight_file(path);
  FileHead head{std::vector<uint8_t>(static_cast<size_t>(std::min<uint64_t>(max_bytes, f.size))), f.size};
  if (!head.bytes.empty() &&
      !f.in.read(reinterpret_cast<char*>(head.bytes.data()), static_cast<std::streamsize>(head.bytes.size())))
    throw Error(ErrorKind::Model, str(path.string(), ": read failed"));
  return head;
}

}  // namespace framelift::weights
