// The ONNX reader on hand-built protobuf bytes (tests/support/onnx_builder.h): typed and raw
// tensor data, shapes with symbolic dims, external data, and hostile files, each refused with one
// line naming the file.
#include <gtest/gtest.h>

#include <fstream>

#include <ATen/ATen.h>

#include "support/onnx_builder.h"
#include "support/test_paths.h"
#include "util/error.h"
#include "weights/onnx_proto.h"
#include "weights/onnx_tensor.h"

namespace framelift::weights::onnx {
namespace {

using test::Proto;
namespace ob = test::onnx_build;

Proto one_node_graph(const Proto& initializer) {
  return ob::graph({ob::node("Add", {"x", "w"}, {"y"})}, {initializer}, {ob::value_info("x", {1, 3, -1, -1})},
                   {ob::value_info("y", {1, 3, -1, -1})});
}

std::string error_of(const std::vector<uint8_t>& bytes, const std::string& label = "bad.onnx") {
  try {
    Model m = parse_onnx_bytes(bytes, label);
    initializers(m);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Model);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(label + ": ", 0), 0u) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return what;
  }
  ADD_FAILURE() << "accepted";
  return "";
}

void write(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

TEST(OnnxReader, ReadsGraphNodesAttributesAndShapes) {
  Proto conv = ob::node("Conv", {"x", "w"}, {"y"}, {ob::attr_ints("pads", {1, 1, 1, 1}), ob::attr_int("group", 1),
                                                     ob::attr_float("alpha", 0.25f), ob::attr_string("mode", "nearest")});
  Proto g = ob::graph({conv}, {ob::tensor("w", {2, 3, 1, 1}, {1, 2, 3, 4, 5, 6})}, {ob::value_info("x", {1, 3, -1, 7})},
                      {ob::value_info("y", {1, 2, -1, 7})});
  const auto bytes = ob::model(g, 13).bytes();
  EXPECT_TRUE(looks_like_onnx(bytes));
  Model m = parse_onnx_bytes(bytes, "m.onnx");
  EXPECT_EQ(m.ir_version, 8);
  EXPECT_EQ(m.opset(), 13);
  ASSERT_EQ(m.graph.nodes.size(), 1u);
  const Node& n = m.graph.nodes[0];
  EXPECT_EQ(n.op_type, "Conv");
  EXPECT_EQ(n.inputs, (std::vector<std::string>{"x", "w"}));
  ASSERT_NE(n.find("pads"), nullptr);
  EXPECT_EQ(n.find("pads")->ints, (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(n.find("pads")->type, AttributeType::Ints);
  EXPECT_EQ(n.find("group")->i, 1);
  EXPECT_FLOAT_EQ(n.find("alpha")->f, 0.25f);
  EXPECT_EQ(n.find("mode")->s, "nearest");
  ASSERT_EQ(m.graph.inputs.size(), 1u);
  const auto& shape = *m.graph.inputs[0].shape;
  ASSERT_EQ(shape.size(), 4u);
  EXPECT_EQ(std::get<int64_t>(shape[1]), 3);
  EXPECT_EQ(std::get<std::string>(shape[2]), "d2");
  EXPECT_EQ(std::get<int64_t>(shape[3]), 7);
}

TEST(OnnxReader, TypedAndRawFloatDataGiveTheSameTensor) {
  const std::vector<float> v = {1.5f, -2.f, 3.25f, 0.f, 1e-3f, 7.f};
  for (bool raw : {false, true}) {
    Model m = parse_onnx_bytes(ob::model(one_node_graph(ob::tensor("w", {1, 2, 3}, v, raw))).bytes(), "m.onnx");
    at::Tensor w = initializers(m).at("w");
    EXPECT_EQ(w.sizes(), at::IntArrayRef({1, 2, 3}));
    EXPECT_TRUE(at::equal(w.flatten(), at::tensor(v))) << (raw ? "raw" : "typed");
  }
}

TEST(OnnxReader, ReadsInt64Int32HalfAndDoubleFields) {
  Proto i64 = ob::int64_tensor("shape", {3}, {1, -1, 64});
  Proto i32;
  i32.packed_varints(1, {2}).varint(2, 6).string(8, "i32").packed_varints(5, {-5, 9});
  Proto half;  // fp16 bit patterns of 1.0 and -2.0 in int32_data
  half.packed_varints(1, {2}).varint(2, 10).string(8, "half").packed_varints(5, {0x3c00, 0xc000});
  Proto dbl;
  dbl.packed_varints(1, {1}).varint(2, 11).string(8, "dbl");
  {
    std::vector<uint8_t> b(8);
    const double d = 0.125;
    std::memcpy(b.data(), &d, 8);
    dbl.bytes(10, b);
  }
  Proto unpacked;  // repeated int64 written one field per value (proto2 style)
  unpacked.varint(1, 2).varint(2, 7).string(8, "unpacked").varint(7, 4).varint(7, 5);
  Proto g = ob::graph({ob::node("Identity", {"x"}, {"y"})}, {i64, i32, half, dbl, unpacked}, {ob::value_info("x", {1})},
                      {ob::value_info("y", {1})});
  StateDict d = initializers(parse_onnx_bytes(ob::model(g).bytes(), "m.onnx"));
  EXPECT_TRUE(at::equal(d.at("shape"), at::tensor({1, -1, 64}, at::kLong)));
  EXPECT_TRUE(at::equal(d.at("i32"), at::tensor({-5, 9}, at::kInt)));
  EXPECT_TRUE(at::equal(d.at("half").to(at::kFloat), at::tensor({1.f, -2.f})));
  EXPECT_EQ(d.at("dbl").item<double>(), 0.125);
  EXPECT_TRUE(at::equal(d.at("unpacked"), at::tensor({4, 5}, at::kLong)));
}

TEST(OnnxReader, TruncatedFilesAreRefusedAtEveryLength) {
  const auto bytes = ob::model(one_node_graph(ob::tensor("w", {1, 3, 1, 1}, {1, 2, 3}))).bytes();
  for (size_t n = 1; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    try {
      Model m = parse_onnx_bytes(cut, "cut.onnx");
      initializers(m);
      // A cut between whole top-level fields is a valid, smaller model only if its graph is whole.
      EXPECT_EQ(m.graph.nodes.size(), 1u) << n;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("cut.onnx: ", 0), 0u) << e.what();
    }
  }
}

TEST(OnnxReader, HostileTensorsAreRefusedWithOneLine) {
  // Dims far larger than the data.
  EXPECT_NE(error_of(ob::model(one_node_graph(ob::tensor("w", {1 << 30, 1 << 30}, {1.f}))).bytes()).find("too large"),
            std::string::npos);
  EXPECT_NE(error_of(ob::model(one_node_graph(ob::tensor("w", {1000, 1000}, {1.f}, true))).bytes()).find("needs 4000000 bytes"),
            std::string::npos);
  // A negative dim.
  EXPECT_NE(error_of(ob::model(one_node_graph(ob::tensor("w", {-4}, {1, 2, 3, 4}))).bytes()).find("negative dimension"),
            std::string::npos);
  // A length prefix past the end of the file.
  Proto liar;
  liar.varint(1, 8).key(7, 2).raw_varint(1u << 30);
  EXPECT_NE(error_of(liar.bytes()).find("truncated"), std::string::npos);
  // An 11-byte varint.
  Proto long_varint;
  long_varint.key(1, 0).raw(std::vector<uint8_t>(11, 0xff));
  EXPECT_NE(error_of(long_varint.bytes()).find("varint"), std::string::npos);
  // Group wire types and field number 0.
  EXPECT_NE(error_of({0x0b, 0x0c}).find("wire type 3"), std::string::npos);
  EXPECT_NE(error_of({0x00, 0x01}).find("field number"), std::string::npos);
  // No graph at all, and a string tensor we cannot hold.
  EXPECT_NE(error_of(Proto().varint(1, 8).bytes()).find("no graph"), std::string::npos);
  Proto strings;
  strings.packed_varints(1, {1}).varint(2, 8).string(8, "w").string(6, "hello");
  EXPECT_NE(error_of(ob::model(one_node_graph(strings)).bytes()).find("unsupported type string"), std::string::npos);
  // Data in the field another type uses.
  Proto wrong_field;
  wrong_field.packed_varints(1, {2}).varint(2, 7).string(8, "w").packed_floats(4, {1.f, 2.f});
  EXPECT_NE(error_of(ob::model(one_node_graph(wrong_field)).bytes()).find("int64_data"), std::string::npos);
  // Too many dims.
  EXPECT_NE(error_of(ob::model(one_node_graph(ob::tensor("w", std::vector<int64_t>(65, 1), {1.f}))).bytes()).find("dims"),
            std::string::npos);
}

Proto external_tensor(const std::string& location, uint64_t offset, uint64_t length) {
  auto entry = [](const std::string& k, const std::string& v) { return Proto().string(1, k).string(2, v); };
  Proto t;
  t.packed_varints(1, {1, 3, 1, 1}).varint(2, 1).string(8, "w");
  t.message(13, entry("location", location)).message(13, entry("offset", std::to_string(offset)));
  t.message(13, entry("length", std::to_string(length))).varint(14, 1);
  return t;
}

std::string external_error(const std::filesystem::path& model) {
  try {
    parse_onnx(model);
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(model.string() + ": ", 0), 0u) << what;
    return what;
  }
  ADD_FAILURE() << "accepted " << model;
  return "";
}

TEST(OnnxReader, ExternalDataIsReadOnlyFromInsideTheModelsFolder) {
  const auto dir = test::temp_dir("onnx_external");
  std::filesystem::create_directories(dir / "model" / "sub");
  const std::vector<float> w = {1.f, 2.f, 3.f};
  std::vector<uint8_t> data(16, 0);
  std::memcpy(data.data() + 4, w.data(), 12);
  write(dir / "model" / "sub" / "weights.bin", data);
  write(dir / "outside.bin", data);
  std::filesystem::create_symlink(dir / "outside.bin", dir / "model" / "link.bin");

  auto model_with = [&](const std::string& name, const Proto& t) {
    const auto path = dir / "model" / name;
    write(path, ob::model(one_node_graph(t)).bytes());
    return path;
  };
  Model ok = parse_onnx(model_with("ok.onnx", external_tensor("sub/weights.bin", 4, 12)));
  EXPECT_TRUE(at::equal(initializers(ok).at("w").flatten(), at::tensor(w)));

  EXPECT_NE(external_error(model_with("up.onnx", external_tensor("../outside.bin", 4, 12))).find("'..'"), std::string::npos);
  EXPECT_NE(external_error(model_with("abs.onnx", external_tensor((dir / "outside.bin").string(), 4, 12))).find("absolute"),
            std::string::npos);
  EXPECT_NE(external_error(model_with("link.onnx", external_tensor("link.bin", 4, 12))).find("outside the model's folder"),
            std::string::npos);
  EXPECT_NE(external_error(model_with("past.onnx", external_tensor("sub/weights.bin", 8, 12))).find("past the end"),
            std::string::npos);
  EXPECT_NE(external_error(model_with("len.onnx", external_tensor("sub/weights.bin", 0, 8))).find("length 8"),
            std::string::npos);
  EXPECT_NE(external_error(model_with("missing.onnx", external_tensor("nope.bin", 0, 12))).find("not a file"),
            std::string::npos);
}

}  // namespace
}  // namespace framelift::weights::onnx
