#pragma once
// Builders for hand-made weight files: pickles opcode by opcode, stored zip archives and legacy
// pickle streams. Tests craft hostile and edge-case files with these instead of committing binaries.
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace framelift::test {

using ByteString = std::vector<uint8_t>;

class PickleBuilder {
 public:
  PickleBuilder& op(uint8_t code) { return raw({code}); }
  PickleBuilder& raw(const ByteString& bytes) {
    out_.insert(out_.end(), bytes.begin(), bytes.end());
    return *this;
  }
  PickleBuilder& proto(uint8_t version) { return op(0x80).op(version); }
  PickleBuilder& str(const std::string& s) {  // BINUNICODE
    op('X').u32(static_cast<uint32_t>(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
    return *this;
  }
  PickleBuilder& integer(int32_t v) { return op('J').u32(static_cast<uint32_t>(v)); }
  PickleBuilder& global(const std::string& module, const std::string& name) {
    op('c');
    out_.insert(out_.end(), module.begin(), module.end());
    op('\n');
    out_.insert(out_.end(), name.begin(), name.end());
    return op('\n');
  }
  PickleBuilder& ints_tuple(const std::vector<int32_t>& values) {
    op('(');
    for (int32_t v : values) integer(v);
    return op('t');
  }
  // ('storage', torch.<type>, key, 'cpu', numel) as a persistent id; leaves the storage on the stack.
  PickleBuilder& storage(const std::string& type, const std::string& key, int32_t numel) {
    op('(').str("storage").global("torch", type).str(key).str("cpu").integer(numel);
    return op('t').op('Q');
  }
  // torch._utils._rebuild_tensor_v2(storage, offset, sizes, strides, False, OrderedDict())
  PickleBuilder& tensor(const std::string& type, const std::string& key, int32_t numel,
                        int32_t offset, const std::vector<int32_t>& sizes,
                        const std::vector<int32_t>& strides) {
    global("torch._utils", "_rebuild_tensor_v2").op('(');
    storage(type, key, numel).integer(offset).ints_tuple(sizes).ints_tuple(strides);
    op(0x89).global("collections", "OrderedDict").op(')').op('R');
    return op('t').op('R');
  }
  PickleBuilder& u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  PickleBuilder& u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  const ByteString& bytes() const { return out_; }

 private:
  ByteString out_;
};

// A zip archive with stored (uncompressed) entries, as torch.save writes them.
ByteString make_stored_zip(const std::vector<std::pair<std::string, ByteString>>& entries);

// torch.save's zip layout under `root`/: data.pkl, data/<key> for each storage, byteorder.
ByteString make_zip_checkpoint(const ByteString& pickle,
                               const std::vector<std::pair<std::string, ByteString>>& storages,
                               const std::string& root = "archive");

// The legacy stream: magic, protocol, sys_info, `pickle`, storage keys, storages (raw bytes whose
// element count is bytes / element_size).
ByteString make_legacy_checkpoint(const ByteString& pickle,
                                  const std::vector<std::pair<std::string, ByteString>>& storages,
                                  size_t element_size);

ByteString float_bytes(const std::vector<float>& values);
void write_bytes(const std::filesystem::path& path, const ByteString& bytes);
ByteString read_bytes(const std::filesystem::path& path);

}  // namespace framelift::test
