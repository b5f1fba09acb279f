#include "jobs/fingerprint.h"

#include <filesystem>
#include <fstream>
#include <vector>

#include "net/sha256.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::jobs {
namespace {
constexpr std::uintmax_t kEdge = 4u << 20;

void hash_range(std::ifstream& in, std::uintmax_t offset, std::uintmax_t size, net::Sha256& hash) {
  std::vector<char> buffer(1 << 16);
  in.seekg(std::streamoff(offset));
  while (size > 0 && in) {
    in.read(buffer.data(), std::streamsize(std::min<std::uintmax_t>(size, buffer.size())));
    hash.update(buffer.data(), size_t(in.gcount()));
    size -= std::uintmax_t(in.gcount());
  }
}
}  // namespace

std::string fingerprint_input(const std::string& input) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(input, ec)) {
    if (input.find("://") != std::string::npos) return "url=" + input;
    if (input.find('%') != std::string::npos) return "pattern=" + input;  // an image sequence
  }
  const std::uintmax_t size = fs::file_size(input, ec);
  if (ec) throw Error(ErrorKind::Input, str(input, ": cannot read (", ec.message(), ")"));
  std::ifstream in(input, std::ios::binary);
  if (!in) throw Error(ErrorKind::Input, str(input, ": cannot open"));
  net::Sha256 hash;
  hash_range(in, 0, std::min(size, kEdge), hash);
  if (size > kEdge) hash_range(in, std::max(kEdge, size - kEdge), size - std::max(kEdge, size - kEdge), hash);
  return str("size=", size, " head+tail-sha256=", hash.hex());
}

}  // namespace framelift::jobs
