#include "weights/safetensors.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/str.h"
#include "weights/byte_reader.h"
#include "weights/dtype_torch.h"
#include "weights/file_bytes.h"
#include "weights/tensor_view.h"

namespace framelift::weights {
namespace {

// The reference implementation refuses headers above 100 MB; so do we, before allocating.
constexpr uint64_t kMaxHeader = 100'000'000;

struct Slot {
  std::string name;
  Dtype dtype;
  std::vector<int64_t> shape;
  uint64_t begin, end;
};

Slot parse_slot(const std::string& name, const nlohmann::json& spec, uint64_t data_size,
                const ByteReader& in) {
  auto fail = [&](const std::string& problem) { in.fail(str("tensor ", name, ": ", problem)); };
  if (!spec.is_object()) fail("header entry is not an object");
  auto dtype_it = spec.find("dtype");
  if (dtype_it == spec.end() || !dtype_it->is_string()) fail("missing dtype");
  auto dtype = dtype_from_safetensors_name(dtype_it->get_ref<const std::string&>());
  if (!dtype) fail(str("unsupported dtype ", dtype_it->get_ref<const std::string&>()));
  auto shape_it = spec.find("shape");
  if (shape_it == spec.end() || !shape_it->is_array()) fail("missing shape");
  Slot slot{name, *dtype, {}, 0, 0};
  uint64_t bytes = element_size(*dtype);
  for (const auto& dim : *shape_it) {
    if (!dim.is_number_unsigned()) fail("shape holds a non-integer or negative dimension");
    const uint64_t size = dim.get<uint64_t>();
    if (size > uint64_t{INT64_MAX} || __builtin_mul_overflow(bytes, size, &bytes))
      fail("shape is too large");
    slot.shape.push_back(static_cast<int64_t>(size));
  }
  auto offsets = spec.find("data_offsets");
  if (offsets == spec.end() || !offsets->is_array() || offsets->size() != 2 ||
      !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned())
    fail("data_offsets must be two non-negative integers");
  slot.begin = (*offsets)[0].get<uint64_t>();
  slot.end = (*offsets)[1].get<uint64_t>();
  if (slot.begin > slot.end || slot.end > data_size)
    fail(str("data_offsets [", slot.begin, ", ", slot.end, "] lie outside the ", data_size,
             " data bytes"));
  if (slot.end - slot.begin != bytes)
    fail(str("data_offsets span ", slot.end - slot.begin, " bytes but shape and dtype need ", bytes));
  return slot;
}

}  // namespace

bool looks_like_safetensors(std::span<const uint8_t> head, uint64_t file_size) {
  if (head.size() < 9 || file_size < 10) return false;
  const uint64_t header = load_le<uint64_t>(head.data());
  return header >= 2 && header <= file_size - 8 && head[8] == '{';
}

bool looks_like_safetensors(std::span<const uint8_t> bytes) { return looks_like_safetensors(bytes, bytes.size()); }

namespace {

StateDict parse(std::span<const uint8_t> bytes, const std::string& label) {
  ByteReader in(bytes, label);
  const uint64_t header_size = in.u64("safetensors header length");
  if (header_size > kMaxHeader) in.fail(str("safetensors header length ", header_size, " is too large"));
  if (header_size > in.remaining())
    in.fail(str("safetensors header length ", header_size, " exceeds the file (", bytes.size(),
                " bytes; truncated?)"));
  auto header_bytes = in.take(header_size, "safetensors header");
  auto header = nlohmann::json::parse(header_bytes.begin(), header_bytes.end(), nullptr,
                                      /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object())
    in.fail("safetensors header is not a JSON object");
  const auto data = bytes.subspan(in.position());

  std::vector<Slot> slots;
  for (const auto& [name, spec] : header.items()) {
    if (name == "__metadata__") continue;  // free-form strings; nothing we need
    slots.push_back(parse_slot(name, spec, data.size(), in));
  }
  std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < slots.size(); ++i)
    if (slots[i].begin < slots[i - 1].end)
      in.fail(str("tensors ", slots[i - 1].name, " and ", slots[i].name, " overlap"));

  StateDict out;
  CopyBudget budget(data.size(), label);  // tensors do not overlap: each byte is copied once
  for (const auto& slot : slots) {
    auto raw = data.subspan(static_cast<size_t>(slot.begin), static_cast<size_t>(slot.end - slot.begin));
    at::Tensor flat = storage_tensor(raw, slot.dtype, label, budget);
    out[slot.name] = flat.view(slot.shape);
  }
  return out;
}

}  // namespace

StateDict load_safetensors_bytes(std::span<const uint8_t> bytes, const std::string& label) {
  try {
    return parse(bytes, label);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // allocator or libtorch; keep the one-error-type promise
    throw Error(ErrorKind::Model, str(label, ": cannot load safetensors file (", first_line(e.what()), ")"));
  }
}

StateDict load_safetensors(const std::filesystem::path& path) {
  const auto bytes = read_file_bytes(path);
  return load_safetensors_bytes(bytes, path.string());
}

void save_safetensors(const std::filesystem::path& path, const StateDict& tensors) {
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "pt"}};
  std::vector<at::Tensor> contiguous;
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    auto dtype = from_scalar_type(tensor.scalar_type());
    if (!dtype)
      throw Error(ErrorKind::Model, str(path.string(), ": tensor ", name, " has dtype ",
                                        c10::toString(tensor.scalar_type()),
                                        ", which safetensors output does not support"));
    at::Tensor cpu = tensor.to(at::kCPU).contiguous();
    const uint64_t size = static_cast<uint64_t>(cpu.numel()) * element_size(*dtype);
    header[name] = {{"dtype", std::string(safetensors_name(*dtype))},
                    {"shape", cpu.sizes().vec()},
                    {"data_offsets", {offset, offset + size}}};
    offset += size;
    contiguous.push_back(std::move(cpu));
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // keeps the tensor data 8-byte aligned
  const uint64_t length = text.size();
  unsigned char prefix[8];
  for (size_t i = 0; i < 8; ++i) prefix[i] = static_cast<unsigned char>(length >> (8 * i));

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(prefix), 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const auto& tensor : contiguous)
    out.write(static_cast<const char*>(tensor.data_ptr()),
              static_cast<std::streamsize>(tensor.numel() * tensor.element_size()));
  out.close();
  if (!out) throw Error(ErrorKind::Output, str(path.string(), ": cannot write safetensors file"));
}

}  // namespace framelift::weights
