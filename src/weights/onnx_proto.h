#pragma once
// The subset of ONNX's protobuf schema (onnx/onnx.proto3) a frame-to-frame network needs:
// ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto and ValueInfoProto shapes,
// read by our own wire-format reader (onnx_wire.h) rather than libprotobuf: the schema subset is
// small, and a reader of our own bounds every length and allocation the same way the other weight
// readers do. Torch-free, so the fuzzer and the tests reason about bytes alone; onnx_tensor.h
// turns TensorProtos into at::Tensors.
//
// Memory stays proportional to the file: payloads are copied out of it (never sized from a count
// the file states), and repeated packed fields hold at most one element per byte read.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace framelift::weights::onnx {

// TensorProto.DataType values (the ones framelift can hold; others are read and refused when used).
enum class DataType : int32_t {
  Undefined = 0, Float = 1, Uint8 = 2, Int8 = 3, Uint16 = 4, Int16 = 5, Int32 = 6, Int64 = 7,
  String = 8, Bool = 9, Float16 = 10, Double = 11, Uint32 = 12, Uint64 = 13, Bfloat16 = 16,
};
// Bytes per element; 0 for types framelift does not read (strings, complex, 4-bit, fp8).
size_t element_size(DataType type);
const char* data_type_name(DataType type);

struct ExternalData {
  std::string location;  // relative to the model's folder
  uint64_t offset = 0;
  std::optional<uint64_t> length;
};

struct TensorProto {
  std::string name;
  std::vector<int64_t> dims;
  DataType data_type = DataType::Undefined;
  int32_t raw_type = 0;  // the file's value, for messages about unknown types
  // Exactly one of these holds the data (checked by the reader against dims x type).
  std::vector<uint8_t> raw_data;
  std::vector<float> float_data;
  std::vector<int32_t> int32_data;  // also int8/16, uint8/16, bool, fp16 and bf16 bit patterns
  std::vector<int64_t> int64_data;
  std::vector<double> double_data;
  std::vector<uint64_t> uint64_data;  // also uint32
  std::optional<ExternalData> external;

  // Product of dims (checked for overflow when read).
  int64_t numel() const;
};

enum class AttributeType : int32_t {
  Undefined = 0, Float = 1, Int = 2, String = 3, Tensor = 4, Graph = 5, Floats = 6, Ints = 7,
  Strings = 8, Tensors = 9, Graphs = 10, SparseTensor = 11, SparseTensors = 12, TypeProto = 13, TypeProtos = 14,
};
const char* attribute_type_name(AttributeType type);

struct Attribute {
  std::string name;
  AttributeType type = AttributeType::Undefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::shared_ptr<TensorProto> t;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
};

struct Node {
  std::string name, op_type, domain;
  std::vector<std::string> inputs, outputs;  // "" is an omitted optional input
  std::vector<Attribute> attributes;

  const Attribute* find(const std::string& attribute) const;
};

// A dimension is a number, a symbolic name (dim_param: "height"), or unknown.
using Dim = std::variant<std::monostate, int64_t, std::string>;
struct ValueInfo {
  std::string name;
  int32_t elem_type = 0;
  std::optional<std::vector<Dim>> shape;  // nullopt: rank unknown
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;
  std::vector<TensorProto> initializers;
  std::vector<ValueInfo> inputs, outputs, value_info;
};

struct Model {
  std::string source;  // the file, for messages
  int64_t ir_version = 0;
  std::map<std::string, int64_t> opsets;  // domain ("" is ai.onnx) -> version
  std::string producer_name, producer_version;
  Graph graph;
  // The external data files read_external_data read, relative to the model's folder.
  std::vector<std::string> external_files;

  // The default domain's opset (ai.onnx); 0 when the file names none.
  int64_t opset() const;
};

struct ReadLimits {
  size_t max_dims = 64;
  size_t max_nodes = 1 << 20;
};

// Parses a ModelProto. Throws Error(Model) "<label>: ..." for malformed bytes (truncation, wire
// types, lengths, negative or overflowing dims, data that does not fit dims x type, no graph).
// External data is recorded, not read (read_external_data does, knowing the folder).
Model parse_onnx_bytes(std::span<const uint8_t> bytes, const std::string& label, const ReadLimits& limits = {});
Model parse_onnx(const std::filesystem::path& file, const ReadLimits& limits = {});

// Fills the raw_data of every initializer (and Constant tensor) stored in an external file.
// Refused unless the location is relative, has no '..', and resolves (symlinks followed) inside
// `folder`; the span [offset, offset + length) must lie in the file and hold exactly dims x type.
void read_external_data(Model& model, const std::filesystem::path& folder);

// True when the bytes start like an ONNX ModelProto (ir_version first, as every exporter writes it,
// then a known ModelProto field).
bool looks_like_onnx(std::span<const uint8_t> head);

}  // namespace framelift::weights::onnx
