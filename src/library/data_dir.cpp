#include "library/data_dir.h"

#include <dlfcn.h>
#include <link.h>

#include <system_error>

namespace fs = std::filesystem;

namespace framelift::library {
namespace {

// The file of the executable or shared library that holds this function: libframelift.so for an
// embedder, the program itself for the CLI (which links the components statically).
fs::path running_object() {
  Dl_info info{};
  link_map* map = nullptr;
  if (dladdr1(reinterpret_cast<void*>(&running_object), &info, reinterpret_cast<void**>(&map),
              RTLD_DL_LINKMAP) == 0)
    return {};
  // The main program's link map has no name (dli_fname would be argv[0], maybe a bare name).
  if (!map || !map->l_name || !*map->l_name) {
    std::error_code ec;
    return fs::read_symlink("/proc/self/exe", ec);
  }
  return map->l_name;
}

fs::path decide() {
  std::error_code ec;
  const fs::path object = fs::weakly_canonical(running_object(), ec);
  if (!object.empty()) {
    // Relative paths from the install's bin/ and lib/ folders to its share/framelift, as CMake
    // laid them out (cmake/install.cmake); the object is in one of the two.
    for (const char* relative : {FRAMELIFT_DATA_FROM_BINDIR, FRAMELIFT_DATA_FROM_LIBDIR}) {
      const fs::path dir = (object.parent_path() / relative).lexically_normal();
      if (fs::is_regular_file(dir / "models.json", ec)) return dir;
    }
  }
  return FRAMELIFT_DATA_DIR;
}

}  // namespace

const fs::path& data_dir() {
  static const fs::path dir = decide();
  return dir;
}

}  // namespace framelift::library
