// The pre-1.6 torch.save layout, one stream: pickle(magic number), pickle(protocol version 1001),
// pickle(sys_info), pickle(the object), pickle(list of storage keys), then for each key in that
// list an 8-byte little-endian element count followed by the storage's raw bytes.
#include <map>

#include "util/error.h"
#include "util/str.h"
#include "weights/byte_reader.h"
#include "weights/pth_checkpoint.h"
#include "weights/unpickler.h"

namespace framelift::weights {
namespace {

// 0x1950a86a20f9469cfc6c, torch.serialization.MAGIC_NUMBER, as LONG1's little-endian bytes.
constexpr unsigned char kMagic[] = {0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};
constexpr int64_t kProtocolVersion = 1001;

[[noreturn]] void fail(const std::string& label, const std::string& problem) {
  throw Error(ErrorKind::Model, str(label, ": ", problem));
}

pickle::Unpickled next_pickle(ByteReader& in, std::span<const uint8_t> bytes) {
  auto result = pickle::unpickle(bytes.subspan(in.position()), in.label());
  in.take(result.consumed, "pickle");
  return result;
}

}  // namespace

PickledCheckpoint read_legacy_checkpoint(std::span<const uint8_t> bytes, const std::string& label) {
  ByteReader in(bytes, label);
  const auto magic = next_pickle(in, bytes);
  const auto* big = pickle::as<pickle::BigInt>(magic.root);
  if (!big || big->bytes != std::string(reinterpret_cast<const char*>(kMagic), sizeof kMagic))
    fail(label, "pickle without the PyTorch magic number (not a torch.save checkpoint)");
  const auto protocol = next_pickle(in, bytes);
  const auto* version = pickle::as<int64_t>(protocol.root);
  if (!version || *version != kProtocolVersion)
    fail(label, "unsupported legacy checkpoint protocol version");
  const auto sys_info = next_pickle(in, bytes);
  const pickle::Node* info = pickle::as_node(sys_info.root, pickle::Node::Kind::Dict);
  const pickle::Value* little = info ? info->get("little_endian") : nullptr;
  if (!little || !pickle::as<bool>(*little) || !*pickle::as<bool>(*little))
    fail(label, "checkpoint was saved on a big-endian machine; that is not supported");

  PickledCheckpoint out{next_pickle(in, bytes), {}, bytes.size()};
  std::map<std::string, Dtype> dtypes;
  for (const auto& ref : out.pickle.storages) {
    auto [it, inserted] = dtypes.emplace(ref.key, ref.dtype);
    if (!inserted && it->second != ref.dtype)
      fail(label, str("storage ", ref.key, " is used with two different dtypes"));
  }
  const auto keys = next_pickle(in, bytes);
  const pickle::Node* list = pickle::as_node(keys.root, pickle::Node::Kind::List);
  if (!list) fail(label, "storage key list is missing");
  for (const auto& item : list->items) {
    const auto* key = pickle::as<std::string>(item);
    if (!key) fail(label, "storage key list holds a non-string");
    auto dtype = dtypes.find(*key);
    if (dtype == dtypes.end()) fail(label, str("storage ", *key, " is listed but never used"));
    const uint64_t count = in.u64(str("element count of storage ", *key));
    uint64_t size = 0;
    if (__builtin_mul_overflow(count, element_size(dtype->second), &size))
      fail(label, str("storage ", *key, " has an impossible element count"));
    auto data = in.take(size, str("storage ", *key));
    if (!out.storages.emplace(*key, data).second)
      fail(label, str("storage ", *key, " is listed twice"));
  }
  return out;
}

}  // namespace framelift::weights
