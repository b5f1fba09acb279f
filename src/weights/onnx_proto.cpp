#include "weights/onnx_proto.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <system_error>

#include "util/error.h"
#include "util/fs.h"
#include "util/str.h"
#include "weights/file_bytes.h"
#include "weights/onnx_wire.h"

namespace framelift::weights::onnx {
namespace {

using proto::Field;
using proto::WireReader;
using proto::WireType;

// A field of the wrong wire type is a corrupt file, not one to skip: the schema fixes each type.
void expect(const WireReader& r, const Field& f, WireType type, const char* name) {
  if (f.type != type) r.fail(str("field ", name, " (", f.number, ") has wire type ", static_cast<int>(f.type)));
}

int64_t as_int64(const Field& f) { return static_cast<int64_t>(f.varint); }

// Repeated varints, packed (one length-delimited field) or not (one field per value).
template <class T>
void read_varints(const WireReader& r, const Field& f, std::vector<T>& out, const std::string& label) {
  if (f.type == WireType::Varint) {
    out.push_back(static_cast<T>(f.varint));
    return;
  }
  expect(r, f, WireType::Bytes, "packed varints");
  WireReader packed(f.bytes, label, "packed varints");
  while (!packed.at_end()) out.push_back(static_cast<T>(packed.varint("packed value")));
}

// Repeated fixed-width values (float: Fixed32, double: Fixed64), packed or not.
template <class T, class Bits>
void read_fixed(const WireReader& r, const Field& f, std::vector<T>& out) {
  static_assert(sizeof(T) == sizeof(Bits));
  const WireType single = sizeof(T) == 4 ? WireType::Fixed32 : WireType::Fixed64;
  if (f.type == single) {
    const Bits bits = static_cast<Bits>(f.varint);
    T value;
    std::memcpy(&value, &bits, sizeof value);
    out.push_back(value);
    return;
  }
  expect(r, f, WireType::Bytes, "packed fixed-width values");
  if (f.bytes.size() % sizeof(T) != 0)
    r.fail(str("packed field of ", f.bytes.size(), " bytes is not a whole number of ", sizeof(T), "-byte values"));
  const size_t n = f.bytes.size() / sizeof(T);
  const size_t base = out.size();
  out.resize(base + n);
  for (size_t k = 0; k < n; ++k) {
    const Bits bits = load_le<Bits>(f.bytes.data() + k * sizeof(T));
    std::memcpy(&out[base + k], &bits, sizeof(T));
  }
}

std::string read_string(const WireReader& r, const Field& f, const char* name) {
  expect(r, f, WireType::Bytes, name);
  return proto::as_string(f);
}

struct Parser {
  const std::string& label;
  const ReadLimits& limits;

  std::pair<std::string, std::string> string_entry(std::span<const uint8_t> bytes) {
    WireReader r(bytes, label, "StringStringEntryProto");
    std::pair<std::string, std::string> kv;
    while (!r.at_end()) {
      Field f = r.next();
      if (f.number == 1) kv.first = read_string(r, f, "key");
      else if (f.number == 2) kv.second = read_string(r, f, "value");
    }
    return kv;
  }

  uint64_t external_number(const WireReader& r, const std::string& key, const std::string& value) {
    if (value.empty() || value.size() > 19 || value.find_first_not_of("0123456789") != std::string::npos)
      r.fail(str("external data ", key, " '", value, "' is not a non-negative number"));
    return std::stoull(value);
  }

  TensorProto tensor(std::span<const uint8_t> bytes) {
    TensorProto t;
    WireReader r(bytes, label, "TensorProto");
    bool external = false;
    std::vector<std::pair<std::string, std::string>> entries;
    std::vector<int32_t> data_type;
    while (!r.at_end()) {
      Field f = r.next();
      switch (f.number) {
        case 1: read_varints(r, f, t.dims, label); break;
        case 2: expect(r, f, WireType::Varint, "data_type"); t.raw_type = static_cast<int32_t>(f.varint); break;
        case 4: read_fixed<float, uint32_t>(r, f, t.float_data); break;
        case 5: read_varints(r, f, t.int32_data, label); break;
        case 7: read_varints(r, f, t.int64_data, label); break;
        case 8: t.name = read_string(r, f, "name"); break;
        case 9: expect(r, f, WireType::Bytes, "raw_data"); t.raw_data.assign(f.bytes.begin(), f.bytes.end()); break;
        case 10: read_fixed<double, uint64_t>(r, f, t.double_data); break;
        case 11: read_varints(r, f, t.uint64_data, label); break;
        case 13: expect(r, f, WireType::Bytes, "external_data"); entries.push_back(string_entry(f.bytes)); break;
        case 14: expect(r, f, WireType::Varint, "data_location"); external = f.varint == 1; break;
        default: break;  // segment, string_data, doc_string, metadata: not needed to run
      }
      if (t.dims.size() > limits.max_dims) r.fail(str("tensor '", t.name, "' has more than ", limits.max_dims, " dims"));
    }
    t.data_type = static_cast<DataType>(t.raw_type);
    if (external) {
      ExternalData e;
      for (const auto& [key, value] : entries) {
        if (key == "location") e.location = value;
        else if (key == "offset") e.offset = external_number(r, key, value);
        else if (key == "length") e.length = external_number(r, key, value);
      }
      if (e.location.empty()) r.fail(str("tensor '", t.name, "' is stored externally but names no location"));
      t.external = std::move(e);
    }
    check_tensor(r, t);
    return t;
  }

  // The data present must be exactly dims x type: this is what bounds every later allocation.
  void check_tensor(const WireReader& r, const TensorProto& t) {
    const int64_t n = checked_numel(r, t);
    if (t.external) {
      if (!t.raw_data.empty()) r.fail(str("tensor '", t.name, "' has both raw_data and external data"));
      return;
    }
    const size_t esize = element_size(t.data_type);
    if (esize == 0) return;  // refused when used, naming the type
    size_t held = 0;
    int fields = 0;
    auto count = [&](size_t elements) {
      if (elements == 0) return;
      held = elements;
      ++fields;
    };
    count(t.raw_data.size());
    count(t.float_data.size());
    count(t.int32_data.size());
    count(t.int64_data.size());
    count(t.double_data.size());
    count(t.uint64_data.size());
    if (fields > 1) r.fail(str("tensor '", t.name, "' stores its data in more than one field"));
    const uint64_t want = t.raw_data.empty() ? static_cast<uint64_t>(n) : static_cast<uint64_t>(n) * esize;
    if (held != want)
      r.fail(str("tensor '", t.name, "' of shape ", shape_text(t.dims), " (", data_type_name(t.data_type), ") needs ",
                 want, t.raw_data.empty() ? " values" : " bytes", ", the file holds ", held));
  }

  int64_t checked_numel(const WireReader& r, const TensorProto& t) {
    int64_t n = 1;
    for (int64_t d : t.dims) {
      if (d < 0) r.fail(str("tensor '", t.name, "' has a negative dimension ", d));
      if (d != 0 && n > (int64_t{1} << 50) / d) r.fail(str("tensor '", t.name, "' of shape ", shape_text(t.dims), " is too large"));
      n *= d;
    }
    return n;
  }

  static std::string shape_text(const std::vector<int64_t>& dims) {
    std::string s = "[";
    for (size_t k = 0; k < dims.size(); ++k) s += (k ? ", " : "") + std::to_string(dims[k]);
    return s + "]";
  }

  Attribute attribute(std::span<const uint8_t> bytes) {
    Attribute a;
    WireReader r(bytes, label, "AttributeProto");
    while (!r.at_end()) {
      Field f = r.next();
      switch (f.number) {
        case 1: a.name = read_string(r, f, "name"); break;
        case 2: {
          std::vector<float> one;
          read_fixed<float, uint32_t>(r, f, one);
          if (one.size() != 1) r.fail(str("attribute '", a.name, "' has ", one.size(), " values for f"));
          a.f = one[0];
          break;
        }
        case 3: expect(r, f, WireType::Varint, "i"); a.i = as_int64(f); break;
        case 4: a.s = read_string(r, f, "s"); break;
        case 5: expect(r, f, WireType::Bytes, "t"); a.t = std::make_shared<TensorProto>(tensor(f.bytes)); break;
        case 7: read_fixed<float, uint32_t>(r, f, a.floats); break;
        case 8: read_varints(r, f, a.ints, label); break;
        case 9: a.strings.push_back(read_string(r, f, "strings")); break;
        case 20: expect(r, f, WireType::Varint, "type"); a.type = static_cast<AttributeType>(f.varint); break;
        default: break;  // graphs, sparse tensors, type protos: no operator we run takes them
      }
    }
    return a;
  }

  Node node(std::span<const uint8_t> bytes) {
    Node n;
    WireReader r(bytes, label, "NodeProto");
    while (!r.at_end()) {
      Field f = r.next();
      switch (f.number) {
        case 1: n.inputs.push_back(read_string(r, f, "input")); break;
        case 2: n.outputs.push_back(read_string(r, f, "output")); break;
        case 3: n.name = read_string(r, f, "name"); break;
        case 4: n.op_type = read_string(r, f, "op_type"); break;
        case 5: expect(r, f, WireType::Bytes, "attribute"); n.attributes.push_back(attribute(f.bytes)); break;
        case 7: n.domain = read_string(r, f, "domain"); break;
        default: break;
      }
    }
    return n;
  }

  std::vector<Dim> shape(std::span<const uint8_t> bytes) {
    std::vector<Dim> dims;
    WireReader r(bytes, label, "TensorShapeProto");
    while (!r.at_end()) {
      Field f = r.next();
      if (f.number != 1) continue;
      expect(r, f, WireType::Bytes, "dim");
      WireReader d(f.bytes, label, "TensorShapeProto.Dimension");
      Dim dim;
      while (!d.at_end()) {
        Field g = d.next();
        if (g.number == 1) {
          expect(d, g, WireType::Varint, "dim_value");
          dim = as_int64(g);
        } else if (g.number == 2) {
          dim = read_string(d, g, "dim_param");
        }
      }
      dims.push_back(std::move(dim));
      if (dims.size() > limits.max_dims) r.fail(str("shape has more than ", limits.max_dims, " dims"));
    }
    return dims;
  }

  ValueInfo value_info(std::span<const uint8_t> bytes) {
    ValueInfo v;
    WireReader r(bytes, label, "ValueInfoProto");
    while (!r.at_end()) {
      Field f = r.next();
      if (f.number == 1) v.name = read_string(r, f, "name");
      if (f.number != 2) continue;
      expect(r, f, WireType::Bytes, "type");
      WireReader type(f.bytes, label, "TypeProto");
      while (!type.at_end()) {
        Field g = type.next();
        if (g.number != 1) continue;  // sequence, map, optional types: no image network's input
        expect(type, g, WireType::Bytes, "tensor_type");
        WireReader tt(g.bytes, label, "TypeProto.Tensor");
        while (!tt.at_end()) {
          Field h = tt.next();
          if (h.number == 1) {
            expect(tt, h, WireType::Varint, "elem_type");
            v.elem_type = static_cast<int32_t>(h.varint);
          } else if (h.number == 2) {
            expect(tt, h, WireType::Bytes, "shape");
            v.shape = shape(h.bytes);
          }
        }
      }
    }
    return v;
  }

  Graph graph(std::span<const uint8_t> bytes) {
    Graph g;
    WireReader r(bytes, label, "GraphProto");
    while (!r.at_end()) {
      Field f = r.next();
      switch (f.number) {
        case 1: expect(r, f, WireType::Bytes, "node"); g.nodes.push_back(node(f.bytes)); break;
        case 2: g.name = read_string(r, f, "name"); break;
        case 5: expect(r, f, WireType::Bytes, "initializer"); g.initializers.push_back(tensor(f.bytes)); break;
        case 11: expect(r, f, WireType::Bytes, "input"); g.inputs.push_back(value_info(f.bytes)); break;
        case 12: expect(r, f, WireType::Bytes, "output"); g.outputs.push_back(value_info(f.bytes)); break;
        case 13: expect(r, f, WireType::Bytes, "value_info"); g.value_info.push_back(value_info(f.bytes)); break;
        case 15: r.fail("sparse initializers are not supported");
        default: break;
      }
      if (g.nodes.size() > limits.max_nodes) r.fail(str("graph has more than ", limits.max_nodes, " nodes"));
    }
    return g;
  }

  Model model(std::span<const uint8_t> bytes) {
    Model m;
    m.source = label;
    WireReader r(bytes, label, "ModelProto");
    bool has_graph = false;
    while (!r.at_end()) {
      Field f = r.next();
      switch (f.number) {
        case 1: expect(r, f, WireType::Varint, "ir_version"); m.ir_version = as_int64(f); break;
        case 2: m.producer_name = read_string(r, f, "producer_name"); break;
        case 3: m.producer_version = read_string(r, f, "producer_version"); break;
        case 7:
          expect(r, f, WireType::Bytes, "graph");
          if (has_graph) r.fail("more than one graph");
          m.graph = graph(f.bytes);
          has_graph = true;
          break;
        case 8: {
          expect(r, f, WireType::Bytes, "opset_import");
          WireReader o(f.bytes, label, "OperatorSetIdProto");
          std::string domain;
          int64_t version = 0;
          while (!o.at_end()) {
            Field g = o.next();
            if (g.number == 1) domain = read_string(o, g, "domain");
            else if (g.number == 2) {
              expect(o, g, WireType::Varint, "version");
              version = as_int64(g);
            }
          }
          m.opsets[domain == "ai.onnx" ? "" : domain] = version;
          break;
        }
        default: break;
      }
    }
    if (!has_graph) r.fail("no graph (is this an ONNX model?)");
    return m;
  }
};

}  // namespace

size_t element_size(DataType type) {
  switch (type) {
    case DataType::Float: case DataType::Int32: case DataType::Uint32: return 4;
    case DataType::Uint8: case DataType::Int8: case DataType::Bool: return 1;
    case DataType::Uint16: case DataType::Int16: case DataType::Float16: case DataType::Bfloat16: return 2;
    case DataType::Int64: case DataType::Double: case DataType::Uint64: return 8;
    default: return 0;
  }
}

const char* data_type_name(DataType type) {
  switch (type) {
    case DataType::Float: return "float";
    case DataType::Uint8: return "uint8";
    case DataType::Int8: return "int8";
    case DataType::Uint16: return "uint16";
    case DataType::Int16: return "int16";
    case DataType::Int32: return "int32";
    case DataType::Int64: return "int64";
    case DataType::String: return "string";
    case DataType::Bool: return "bool";
    case DataType::Float16: return "float16";
    case DataType::Double: return "double";
    case DataType::Uint32: return "uint32";
    case DataType::Uint64: return "uint64";
    case DataType::Bfloat16: return "bfloat16";
    default: return "unknown type";
  }
}

const char* attribute_type_name(AttributeType type) {
  switch (type) {
    case AttributeType::Float: return "FLOAT";
    case AttributeType::Int: return "INT";
    case AttributeType::String: return "STRING";
    case AttributeType::Tensor: return "TENSOR";
    case AttributeType::Graph: return "GRAPH";
    case AttributeType::Floats: return "FLOATS";
    case AttributeType::Ints: return "INTS";
    case AttributeType::Strings: return "STRINGS";
    default: return "another type";
  }
}

int64_t TensorProto::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

const Attribute* Node::find(const std::string& attribute) const {
  for (const auto& a : attributes)
    if (a.name == attribute) return &a;
  return nullptr;
}

int64_t Model::opset() const {
  auto it = opsets.find("");
  return it == opsets.end() ? 0 : it->second;
}

Model parse_onnx_bytes(std::span<const uint8_t> bytes, const std::string& label, const ReadLimits& limits) {
  return Parser{label, limits}.model(bytes);
}

Model parse_onnx(const std::filesystem::path& file, const ReadLimits& limits) {
  const std::vector<uint8_t> bytes = read_file_bytes(file);
  Model m = parse_onnx_bytes(bytes, file.string(), limits);
  read_external_data(m, file.parent_path());
  return m;
}

namespace {

namespace fs = std::filesystem;

// The external file a tensor names, resolved inside `folder` or refused: a model downloaded from
// the web must not read /etc/passwd or ~/.ssh through "../../" or a symlink planted beside it.
fs::path external_file(const std::string& label, const fs::path& folder, const TensorProto& t) {
  const std::string& location = t.external->location;
  auto refuse = [&](const std::string& why) -> fs::path {
    throw Error(ErrorKind::Model, str(label, ": tensor '", t.name, "' external data '", location, "' ", why));
  };
  const fs::path rel(location);
  if (rel.is_absolute() || (!location.empty() && (location[0] == '/' || location[0] == '\\')))
    return refuse("is an absolute path (only files in the model's folder are read)");
  for (const auto& part : rel)
    if (part == "..") return refuse("leaves the model's folder ('..')");
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(folder.empty() ? fs::path(".") : folder, ec);
  if (ec) return refuse("cannot be resolved");
  const fs::path full = fs::weakly_canonical(base / rel, ec);
  if (ec || !fs::is_regular_file(full, ec)) return refuse("is not a file beside the model");
  if (!path_within(full, base)) return refuse("resolves outside the model's folder (a symlink?)");
  return full;
}

std::vector<uint8_t> read_span(const std::string& label, const fs::path& file, const TensorProto& t, uint64_t want) {
  std::error_code ec;
  const uint64_t size = fs::file_size(file, ec);
  if (ec) throw Error(ErrorKind::Model, str(label, ": cannot read external data file ", file.string()));
  const ExternalData& e = *t.external;
  const uint64_t length = e.length.value_or(want);
  if (length != want)
    throw Error(ErrorKind::Model, str(label, ": tensor '", t.name, "' external data length ", length, " is not the ", want,
                                      " bytes its shape and type need"));
  if (e.offset > size || length > size - e.offset)
    throw Error(ErrorKind::Model, str(label, ": tensor '", t.name, "' external data [", e.offset, ", +", length,
                                      ") lies past the end of ", file.filename().string(), " (", size, " bytes)"));
  std::vector<uint8_t> bytes(static_cast<size_t>(length));
  std::ifstream in(file, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(e.offset));
  if (length > 0) in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(length));
  if (!in) throw Error(ErrorKind::Model, str(label, ": cannot read external data of tensor '", t.name, "'"));
  return bytes;
}

void load_external(const std::string& label, const fs::path& folder, TensorProto& t) {
  if (!t.external) return;
  const size_t esize = element_size(t.data_type);
  if (esize == 0)
    throw Error(ErrorKind::Model, str(label, ": tensor '", t.name, "' has unsupported type ", data_type_name(t.data_type)));
  t.raw_data = read_span(label, external_file(label, folder, t), t, static_cast<uint64_t>(t.numel()) * esize);
  t.external.reset();
}

}  // namespace

void read_external_data(Model& model, const std::filesystem::path& folder) {
  auto load = [&](TensorProto& t) {
    if (!t.external) return;
    const std::string location = t.external->location;
    load_external(model.source, folder, t);
    if (std::find(model.external_files.begin(), model.external_files.end(), location) == model.external_files.end())
      model.external_files.push_back(location);
  };
  for (auto& t : model.graph.initializers) load(t);
  for (auto& n : model.graph.nodes)
    for (auto& a : n.attributes)
      if (a.t) load(*a.t);
}

bool looks_like_onnx(std::span<const uint8_t> head) {
  // Field 1 (ir_version, varint) first, a small version, then another ModelProto field key.
  if (head.size() < 3 || head[0] != 0x08 || head[1] == 0 || head[1] > 0x7f) return false;
  const uint8_t key = head[2];
  const uint32_t number = key >> 3, wire = key & 7;
  return wire == 2 && (number == 2 || number == 3 || number == 4 || number == 6 || number == 7 || number == 8 ||
                       number == 14 || number == 20 || number == 25);
}

}  // namespace framelift::weights::onnx
