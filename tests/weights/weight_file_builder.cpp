#include "weight_file_builder.h"

#include <cstring>
#include <fstream>
#include <iterator>

namespace framelift::test {
namespace {

void put(ByteString& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

}  // namespace

ByteString make_stored_zip(const std::vector<std::pair<std::string, ByteString>>& entries) {
  ByteString out, central;
  for (const auto& [name, data] : entries) {
    const uint64_t offset = out.size();
    put(out, 0x04034b50, 4);
    put(out, 20, 2);  // version
    put(out, 0, 2);   // flags
    put(out, 0, 2);   // stored
    put(out, 0, 4);   // time, date
    put(out, 0, 4);   // CRC (our reader does not check it)
    put(out, data.size(), 4);
    put(out, data.size(), 4);
    put(out, name.size(), 2);
    put(out, 0, 2);
    out.insert(out.end(), name.begin(), name.end());
    out.insert(out.end(), data.begin(), data.end());

    put(central, 0x02014b50, 4);
    put(central, 20, 2);
    put(central, 20, 2);
    put(central, 0, 2);
    put(central, 0, 2);
    put(central, 0, 4);
    put(central, 0, 4);
    put(central, data.size(), 4);
    put(central, data.size(), 4);
    put(central, name.size(), 2);
    put(central, 0, 2);  // extra
    put(central, 0, 2);  // comment
    put(central, 0, 2);  // disk
    put(central, 0, 2);  // internal attributes
    put(central, 0, 4);  // external attributes
    put(central, offset, 4);
    central.insert(central.end(), name.begin(), name.end());
  }
  const uint64_t directory = out.size();
  out.insert(out.end(), central.begin(), central.end());
  put(out, 0x06054b50, 4);
  put(out, 0, 4);
  put(out, entries.size(), 2);
  put(out, entries.size(), 2);
  put(out, central.size(), 4);
  put(out, directory, 4);
  put(out, 0, 2);
  return out;
}

ByteString make_zip_checkpoint(const ByteString& pickle,
                               const std::vector<std::pair<std::string, ByteString>>& storages,
                               const std::string& root) {
  std::vector<std::pair<std::string, ByteString>> entries{{root + "/data.pkl", pickle}};
  for (const auto& [key, data] : storages) entries.emplace_back(root + "/data/" + key, data);
  entries.emplace_back(root + "/byteorder", ByteString{'l', 'i', 't', 't', 'l', 'e'});
  return make_stored_zip(entries);
}

ByteString make_legacy_checkpoint(const ByteString& pickle,
                                  const std::vector<std::pair<std::string, ByteString>>& storages,
                                  size_t element_size) {
  PickleBuilder head;
  // magic number 0x1950a86a20f9469cfc6c as LONG1, then protocol 1001, then sys_info.
  head.proto(2).op(0x8a).op(10).raw({0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19}).op('.');
  head.proto(2).op('M').raw({0xe9, 0x03}).op('.');
  head.proto(2).op('}').op('(').str("protocol_version").op('M').raw({0xe9, 0x03});
  head.str("little_endian").op(0x88).op('u').op('.');
  head.raw(pickle);
  head.proto(2).op(']').op('(');
  for (const auto& [key, data] : storages) head.str(key);
  head.op('e').op('.');
  for (const auto& [key, data] : storages) head.u64(data.size() / element_size).raw(data);
  return head.bytes();
}

ByteString float_bytes(const std::vector<float>& values) {
  ByteString out(values.size() * sizeof(float));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

void write_bytes(const std::filesystem::path& path, const ByteString& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

ByteString read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return ByteString(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace framelift::test
