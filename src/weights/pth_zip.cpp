// torch.save's zip layout: <root>/data.pkl is the pickle, <root>/data/<key> each storage's raw
// little-endian bytes, <root>/byteorder (newer files) says "little" or "big". <root> is the file
// name torch.save was given ("archive" by default), so it is discovered, not assumed. torch.jit.save
// writes the same, plus constants.pkl and the module's code/, and pickles the module tree itself.
#include <algorithm>

#include "util/error.h"
#include "util/str.h"
#include "weights/pth_checkpoint.h"
#include "weights/unpickler.h"
#include "weights/zip_archive.h"

namespace framelift::weights {
namespace {

[[noreturn]] void fail(const std::string& label, const std::string& problem) {
  throw Error(ErrorKind::Model, str(label, ": ", problem));
}

std::string find_root(const ZipArchive& zip, const std::string& label) {
  for (const auto& entry : zip.entries()) {
    const auto slash = entry.name.find('/');
    if (slash != std::string::npos && entry.name.substr(slash + 1) == "data.pkl")
      return entry.name.substr(0, slash + 1);
  }
  fail(label, "zip archive has no data.pkl (not a torch.save checkpoint)");
}

}  // namespace

PickledCheckpoint read_zip_checkpoint(std::span<const uint8_t> bytes, const std::string& label) {
  ZipArchive zip(bytes, label);
  const std::string root = find_root(zip, label);
  if (const ZipEntry* order = zip.find(root + "byteorder")) {
    auto text = zip.read(*order);
    if (std::string_view(reinterpret_cast<const char*>(text.data()), text.size()) != "little")
      fail(label, "checkpoint was saved on a big-endian machine; that is not supported");
  }
  pickle::Limits limits;
  limits.torchscript_modules = zip.find(root + "constants.pkl") != nullptr;
  PickledCheckpoint out{pickle::unpickle(zip.read(*zip.find(root + "data.pkl")), label, limits), {}, bytes.size(),
                        limits.torchscript_modules};
  for (const auto& ref : out.pickle.storages) {
    if (out.storages.count(ref.key)) continue;
    const ZipEntry* entry = zip.find(root + "data/" + ref.key);
    if (!entry) fail(label, str("storage ", ref.key, " is missing from the archive"));
    auto data = zip.read(*entry);
    uint64_t needed = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(ref.numel), element_size(ref.dtype), &needed) ||
        needed > data.size())
      fail(label, str("storage ", ref.key, " holds ", data.size(), " bytes, the pickle expects ",
                      ref.numel, " elements of ", element_size(ref.dtype), " bytes"));
    out.storages.emplace(ref.key, data.first(static_cast<size_t>(needed)));
  }
  return out;
}

}  // namespace framelift::weights
