#pragma once
// Hand-built ONNX protobuf bytes: tests craft valid, edge-case and hostile models field by field
// with this rather than committing binaries or running an exporter. Field numbers are onnx.proto's.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace framelift::test {

class Proto {
 public:
  const std::vector<uint8_t>& bytes() const { return out_; }

  Proto& key(uint32_t field, uint32_t wire) { return raw_varint((uint64_t{field} << 3) | wire); }
  Proto& varint(uint32_t field, uint64_t v) { return key(field, 0).raw_varint(v); }
  Proto& fixed32(uint32_t field, float f) {
    key(field, 5);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    for (int k = 0; k < 4; ++k) out_.push_back(static_cast<uint8_t>(bits >> (8 * k)));
    return *this;
  }
  Proto& bytes(uint32_t field, const std::vector<uint8_t>& b) {
    key(field, 2).raw_varint(b.size());
    out_.insert(out_.end(), b.begin(), b.end());
    return *this;
  }
  Proto& string(uint32_t field, const std::string& s) { return bytes(field, std::vector<uint8_t>(s.begin(), s.end())); }
  Proto& message(uint32_t field, const Proto& m) { return bytes(field, m.bytes()); }
  Proto& packed_varints(uint32_t field, const std::vector<int64_t>& values) {
    Proto p;
    for (int64_t v : values) p.raw_varint(static_cast<uint64_t>(v));
    return bytes(field, p.bytes());
  }
  Proto& packed_floats(uint32_t field, const std::vector<float>& values) {
    std::vector<uint8_t> b(values.size() * 4);
    if (!values.empty()) std::memcpy(b.data(), values.data(), b.size());
    return bytes(field, b);
  }
  Proto& raw_varint(uint64_t v) {
    do {
      uint8_t b = v & 0x7f;
      v >>= 7;
      out_.push_back(b | (v ? 0x80 : 0));
    } while (v);
    return *this;
  }
  Proto& raw(const std::vector<uint8_t>& b) {
    out_.insert(out_.end(), b.begin(), b.end());
    return *this;
  }

 private:
  std::vector<uint8_t> out_;
};

namespace onnx_build {

// TensorProto: float data as float_data (typed) or raw_data.
inline Proto tensor(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values,
                    bool raw = false) {
  Proto t;
  t.packed_varints(1, dims).varint(2, 1).string(8, name);
  if (raw) {
    std::vector<uint8_t> b(values.size() * 4);
    if (!values.empty()) std::memcpy(b.data(), values.data(), b.size());
    t.bytes(9, b);
  } else {
    t.packed_floats(4, values);
  }
  return t;
}
inline Proto int64_tensor(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& values) {
  Proto t;
  t.packed_varints(1, dims).varint(2, 7).string(8, name).packed_varints(7, values);
  return t;
}

inline Proto attr_int(const std::string& name, int64_t v) { return Proto().string(1, name).varint(3, static_cast<uint64_t>(v)).varint(20, 2); }
inline Proto attr_float(const std::string& name, float v) { return Proto().string(1, name).fixed32(2, v).varint(20, 1); }
inline Proto attr_string(const std::string& name, const std::string& v) { return Proto().string(1, name).string(4, v).varint(20, 3); }
inline Proto attr_ints(const std::string& name, const std::vector<int64_t>& v) {
  return Proto().string(1, name).packed_varints(8, v).varint(20, 7);
}
inline Proto attr_tensor(const std::string& name, const Proto& t) { return Proto().string(1, name).message(5, t).varint(20, 4); }

inline Proto node(const std::string& op, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                  const std::vector<Proto>& attributes = {}, const std::string& name = "") {
  Proto n;
  for (const auto& i : inputs) n.string(1, i);
  for (const auto& o : outputs) n.string(2, o);
  n.string(3, name.empty() ? op + "_" + outputs.at(0) : name).string(4, op);
  for (const auto& a : attributes) n.message(5, a);
  return n;
}

// A float tensor value; dims < 0 are symbolic ("d0", "d1", ...), as dynamic exports write them.
inline Proto value_info(const std::string& name, const std::vector<int64_t>& dims) {
  Proto shape;
  for (size_t k = 0; k < dims.size(); ++k) {
    Proto d;
    // Appended, not "d" + to_string(): GCC 12 warns falsely on the operator+ (-Wstringop-overflow).
    std::string symbol = "d";
    symbol += std::to_string(k);
    if (dims[k] < 0) d.string(2, symbol);
    else d.varint(1, static_cast<uint64_t>(dims[k]));
    shape.message(1, d);
  }
  Proto tensor_type;
  tensor_type.varint(1, 1).message(2, shape);
  Proto type;
  type.message(1, tensor_type);
  return Proto().string(1, name).message(2, type);
}

inline Proto graph(const std::vector<Proto>& nodes, const std::vector<Proto>& initializers, const std::vector<Proto>& inputs,
                   const std::vector<Proto>& outputs) {
  Proto g;
  for (const auto& n : nodes) g.message(1, n);
  g.string(2, "test");
  for (const auto& t : initializers) g.message(5, t);
  for (const auto& i : inputs) g.message(11, i);
  for (const auto& o : outputs) g.message(12, o);
  return g;
}

inline Proto model(const Proto& graph, int64_t opset = 17) {
  Proto opset_id;
  opset_id.string(1, "").varint(2, static_cast<uint64_t>(opset));
  Proto m;
  m.varint(1, 8).string(2, "framelift-test").message(7, graph).message(8, opset_id);
  return m;
}

// A network that enlarges the picture `scale` times by nearest neighbour, which ffmpeg's own scaler
// gives independently: a 3x3 convolution whose scale^2 * 3 channels copy the input's three (the
// centre tap of channel k % 3), then a DepthToSpace (DCR: output pixel (i, j) of each block,
// channel c, is input channel (scale * i + j) * 3 + c).
inline Proto nearest_upscale_graph(int scale) {
  const int channels = 3 * scale * scale;
  std::vector<float> w(size_t(channels) * 3 * 9, 0.f);
  for (int k = 0; k < channels; ++k) w[size_t((k * 3 + k % 3) * 9 + 4)] = 1.f;
  return graph({node("Conv", {"x", "w"}, {"c"}, {attr_ints("pads", {1, 1, 1, 1}), attr_ints("kernel_shape", {3, 3})}, "conv0"),
                node("DepthToSpace", {"c"}, {"y"}, {attr_int("blocksize", scale), attr_string("mode", "DCR")}, "d2s")},
               {tensor("w", {channels, 3, 3, 3}, w, true)}, {value_info("x", {1, 3, -1, -1})}, {value_info("y", {1, 3, -1, -1})});
}

}  // namespace onnx_build
}  // namespace framelift::test
