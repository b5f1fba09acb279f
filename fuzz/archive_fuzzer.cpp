// Any bytes given as a model archive (an npm .tgz, an upstream .zip) must be read entry by entry
// or refused with framelift::Error; crashes, leaks, UB and writing past the declared size are
// bugs. The archive goes through a file, as installs read it; entries are extracted with the
// cap a catalog would declare.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "library/archive_reader.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kDeclaredSize = 1 << 20;

const fs::path& work_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("framelift-fuzz-archive-" + std::to_string(::getpid()));
    fs::create_directories(d);
    // libFuzzer ends with exit(): leave no folder per run in /tmp. The name is copied into a
    // plain buffer, which outlives the path object this handler would otherwise outlive.
    static char name[4096];
    std::snprintf(name, sizeof name, "%s", d.c_str());
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(fs::path(name), ec);
    });
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path archive = work_dir() / "input.tgz", entry = work_dir() / "entry.bin";
  if (std::FILE* f = std::fopen(archive.c_str(), "wb")) {
    if (size) std::fwrite(data, 1, size, f);
    std::fclose(f);
  } else {
    std::abort();  // the fuzzer's own folder: not the code under test
  }
  try {
    framelift::library::ArchiveReader reader(archive);
    for (int n = 0; n < 64 && reader.next(); ++n) {
      if (!reader.is_file() || reader.path().empty()) continue;
      reader.extract_to(entry, kDeclaredSize);
      std::error_code ec;
      const auto written = fs::file_size(entry, ec);
      if (!ec && written > kDeclaredSize) std::abort();  // the cap did not hold
      fs::remove(entry, ec);
    }
  } catch (const framelift::Error&) {
  }
  return 0;
}
