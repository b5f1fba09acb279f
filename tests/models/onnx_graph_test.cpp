// The ONNX interpreter on hand-built graphs (tests/support/onnx_builder.h): what is refused at
// load and how, constant folding, and operators checked against their ATen equivalents. The
// agreement with ONNX Runtime on real exports is onnx_ort_test.cpp.
#include <gtest/gtest.h>

#include <fstream>

#include <ATen/ATen.h>

#include "models/model_files.h"
#include "models/onnx/onnx_model.h"
#include "models/onnx/op_registry.h"
#include "support/onnx_builder.h"
#include "support/test_paths.h"
#include "util/error.h"
#include "weights/onnx_proto.h"

namespace framelift::models::onnx {
namespace {

using test::Proto;
namespace ob = test::onnx_build;

OnnxModel model_of(const Proto& graph, int64_t opset = 17) {
  return OnnxModel(weights::onnx::parse_onnx_bytes(ob::model(graph, opset).bytes(), "g.onnx"));
}

std::string refusal(const Proto& graph, int64_t opset = 17) {
  try {
    model_of(graph, opset);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Model);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("g.onnx: ", 0), 0u) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return what;
  }
  ADD_FAILURE() << "accepted";
  return "";
}

// x [1, 3, h, w] -> Conv 3x3 (3 -> 12) -> DepthToSpace 2: a 2x network.
Proto conv_d2s_graph(const std::string& mode = "CRD", const std::string& extra_op = "") {
  std::vector<float> w(12 * 3 * 9);
  for (size_t k = 0; k < w.size(); ++k) w[k] = static_cast<float>((k * 37) % 17) / 17.f - 0.5f;
  std::vector<Proto> nodes = {ob::node("Conv", {"x", "w"}, {"c"}, {ob::attr_ints("pads", {1, 1, 1, 1}), ob::attr_ints("kernel_shape", {3, 3})}, "conv0"),
                              ob::node("DepthToSpace", {"c"}, {extra_op.empty() ? "y" : "d"}, {ob::attr_int("blocksize", 2), ob::attr_string("mode", mode)}, "d2s")};
  if (!extra_op.empty()) nodes.push_back(ob::node(extra_op, {"d"}, {"y"}, {}, "mystery"));
  return ob::graph(nodes, {ob::tensor("w", {12, 3, 3, 3}, w, true)}, {ob::value_info("x", {1, 3, -1, -1})},
                   {ob::value_info("y", {1, 3, -1, -1})});
}

TEST(OnnxGraph, UnknownOperatorIsRefusedAtLoadByNodeOpAndFile) {
  const std::string e = refusal(conv_d2s_graph("CRD", "FancyUpscale"));
  EXPECT_NE(e.find("node mystery (FancyUpscale)"), std::string::npos) << e;
  EXPECT_NE(e.find("operator FancyUpscale is not supported"), std::string::npos) << e;
}

TEST(OnnxGraph, UnsupportedAttributeValueAndDomainAndOpsetAreRefused) {
  EXPECT_NE(refusal(conv_d2s_graph("XYZ")).find("node d2s (DepthToSpace): mode='XYZ' is not supported (DCR, CRD)"), std::string::npos);
  Proto resize = ob::graph({ob::node("Resize", {"x", "", "s"}, {"y"}, {ob::attr_string("mode", "linear"),
                                                                        ob::attr_int("antialias", 1)}, "r")},
                           {ob::tensor("s", {4}, {1, 1, 2, 2})}, {ob::value_info("x", {1, 3, -1, -1})}, {ob::value_info("y", {1, 3, -1, -1})});
  EXPECT_NE(refusal(resize).find("node r (Resize): antialias=1 is not supported"),
            std::string::npos);
  Proto custom = ob::graph({ob::node("Relu", {"x"}, {"y"}, {}, "r")}, {}, {ob::value_info("x", {1, 3, -1, -1})},
                           {ob::value_info("y", {1, 3, -1, -1})});
  // A node of another domain (onnxruntime's com.microsoft fused ops) is refused, not run as the default op.
  Proto domain_graph = custom;
  {
    Proto n = ob::node("Relu", {"x"}, {"y"}, {}, "fused");
    n.string(7, "com.microsoft");
    domain_graph = ob::graph({n}, {}, {ob::value_info("x", {1, 3, -1, -1})}, {ob::value_info("y", {1, 3, -1, -1})});
  }
  EXPECT_NE(refusal(domain_graph).find("domain 'com.microsoft'"), std::string::npos);
  EXPECT_NE(refusal(custom, 9).find("opset 9 is not supported"), std::string::npos);
  EXPECT_NE(refusal(custom, 21).find("opset 21 is not supported"), std::string::npos);
  // Two image inputs: framelift runs one-image networks.
  Proto two = ob::graph({ob::node("Add", {"x", "z"}, {"y"})}, {}, {ob::value_info("x", {1, 3, -1, -1}), ob::value_info("z", {1, 3, -1, -1})},
                        {ob::value_info("y", {1, 3, -1, -1})});
  EXPECT_NE(refusal(two).find("2 inputs besides its weights"), std::string::npos);
  // A node reading a value nothing makes.
  Proto dangling = ob::graph({ob::node("Add", {"x", "ghost"}, {"y"}, {}, "a")}, {}, {ob::value_info("x", {1, 3, -1, -1})},
                             {ob::value_info("y", {1, 3, -1, -1})});
  EXPECT_NE(refusal(dangling).find("node a (Add): reads ghost before any node makes it"), std::string::npos);
}

TEST(OnnxGraph, ProbesScaleAndMatchesAtenOnOddSizes) {
  OnnxModel m = model_of(conv_d2s_graph("CRD"));
  EXPECT_EQ(m.info().scale, 2);
  EXPECT_EQ(m.info().size_multiple, 1);
  EXPECT_EQ(m.info().in_channels, 3);
  EXPECT_EQ(m.info().out_channels, 3);
  at::manual_seed(3);
  const at::Tensor x = at::rand({1, 3, 29, 37});
  OnnxModel dcr = model_of(conv_d2s_graph("DCR"));
  const at::Tensor crd = m.forward(x), d = dcr.forward(x);
  EXPECT_EQ(crd.sizes(), at::IntArrayRef({1, 3, 58, 74}));
  // The same convolution, rearranged two ways: CRD is PyTorch's pixel shuffle; DCR reads channel
  // c + C * (i * b + j) for offset (i, j).
  std::vector<float> wv(12 * 3 * 9);
  for (size_t k = 0; k < wv.size(); ++k) wv[k] = static_cast<float>((k * 37) % 17) / 17.f - 0.5f;
  const at::Tensor w = at::tensor(wv).reshape({12, 3, 3, 3});
  const at::Tensor c = at::conv2d(x, w, {}, 1, 1);
  EXPECT_TRUE(at::allclose(crd, at::pixel_shuffle(c, 2), 1e-5, 1e-6));
  const at::Tensor dcr_ref = c.reshape({1, 2, 2, 3, 29, 37}).permute({0, 3, 4, 1, 5, 2}).reshape({1, 3, 58, 74});
  EXPECT_TRUE(at::allclose(d, dcr_ref, 1e-5, 1e-6));
}

// Shape -> Gather -> Concat -> Reshape, as dynamic exports write a flatten: the part computable
// from initializers alone is folded at load, the rest runs per frame on the real input.
TEST(OnnxGraph, ConstantsFoldAtLoadAndShapeChainsFollowTheInput) {
  Proto g = ob::graph(
      {ob::node("Shape", {"x"}, {"s"}), ob::node("Gather", {"s", "i0"}, {"n"}, {ob::attr_int("axis", 0)}),
       ob::node("Unsqueeze", {"n", "ax"}, {"nu"}), ob::node("Add", {"k1", "k2"}, {"k"}),  // foldable
       ob::node("Concat", {"nu", "k"}, {"shape"}, {ob::attr_int("axis", 0)}), ob::node("Reshape", {"x", "shape"}, {"flat"}),
       ob::node("Reshape", {"flat", "s"}, {"y"})},
      {ob::int64_tensor("i0", {}, {0}), ob::int64_tensor("ax", {1}, {0}), ob::int64_tensor("k1", {1}, {-2}),
       ob::int64_tensor("k2", {1}, {1})},
      {ob::value_info("x", {1, 3, -1, -1})}, {ob::value_info("y", {1, 3, -1, -1})});
  OnnxModel m = model_of(g);
  EXPECT_EQ(m.stats().folded, 1u);
  EXPECT_EQ(m.stats().op_counts.count("Add"), 0u);
  EXPECT_EQ(m.stats().op_counts.at("Reshape"), 2);
  const at::Tensor x = at::rand({1, 3, 29, 37});
  EXPECT_TRUE(at::equal(m.forward(x), x));
}

// Nodes the output does not depend on are dropped; whole-picture statistics make the graph
// untiled; the deprecated Upsample runs as an asymmetric nearest Resize.
TEST(OnnxGraph, DeadNodesAreDroppedInstanceNormIsUntiledUpsampleRuns) {
  Proto g = ob::graph({ob::node("Relu", {"x"}, {"unused"}), ob::node("InstanceNormalization", {"x", "s", "b"}, {"n"}),
                       ob::node("Upsample", {"n", "scales"}, {"y"}, {ob::attr_string("mode", "nearest")})},
                      {ob::tensor("s", {3}, {1, 2, 3}), ob::tensor("b", {3}, {0, 0.5f, -1}), ob::tensor("scales", {4}, {1, 1, 2, 2})},
                      {ob::value_info("x", {1, 3, -1, -1})}, {ob::value_info("y", {1, 3, -1, -1})});
  OnnxModel m = model_of(g);
  EXPECT_EQ(m.stats().op_counts.count("Relu"), 0u);
  EXPECT_FALSE(m.info().tiled);
  EXPECT_EQ(m.info().scale, 2);
  const at::Tensor x = at::rand({1, 3, 9, 11});
  const at::Tensor n = at::instance_norm(x, at::tensor({1.f, 2.f, 3.f}), at::tensor({0.f, 0.5f, -1.f}), {}, {}, true, 0, 1e-5, false);
  EXPECT_TRUE(at::allclose(m.forward(x), at::upsample_nearest2d(n, {18, 22}), 1e-5, 1e-5));
}

// A mean over H and W (squeeze-excitation, channel attention) is a whole-picture statistic
// too; a mean over the last axis alone (a LayerNorm written out) is not.
TEST(OnnxGraph, AMeanOverHAndWMakesTheGraphUntiled) {
  auto with_axes = [](std::vector<int64_t> axes) {
    return ob::graph({ob::node("ReduceMean", {"x"}, {"m"}, {ob::attr_ints("axes", axes)}), ob::node("Mul", {"x", "m"}, {"y"})}, {},
                     {ob::value_info("x", {1, 3, -1, -1})}, {ob::value_info("y", {1, 3, -1, -1})});
  };
  EXPECT_FALSE(model_of(with_axes({2, 3}), 13).info().tiled);
  EXPECT_FALSE(model_of(with_axes({-2, -1}), 13).info().tiled);
  EXPECT_TRUE(model_of(with_axes({-1}), 13).info().tiled);
  EXPECT_TRUE(model_of(with_axes({1}), 13).info().tiled);
}

TEST(OnnxGraph, ATfCropAndResizeMakesTheGraphUntiled) {
  // Its roi is a fraction of the whole picture; a tile would crop a region of its own.
  auto with_coordinates = [](const std::string& coordinates) {
    return ob::graph({ob::node("Resize", {"x", "roi", "s"}, {"y"}, {ob::attr_string("mode", "linear"),
                                                                   ob::attr_string("coordinate_transformation_mode", coordinates)})},
                     {ob::tensor("roi", {8}, {0, 0, 0, 0, 1, 1, 1, 1}), ob::tensor("s", {4}, {1, 1, 2, 2})},
                     {ob::value_info("x", {1, 3, -1, -1})}, {ob::value_info("y", {1, 3, -1, -1})});
  };
  EXPECT_FALSE(model_of(with_coordinates("tf_crop_and_resize"), 13).info().tiled);
  EXPECT_TRUE(model_of(with_coordinates("half_pixel"), 13).info().tiled);
}

TEST(OnnxGraph, AWrapPadOfHOrWMakesTheGraphUntiledAndNeedsOpset19) {
  // It reads the picture's far edge, which a tile does not hold; wrapping the channels does not.
  auto with_pads = [](std::vector<int64_t> pads) {
    return ob::graph({ob::node("Pad", {"x", "p"}, {"y"}, {ob::attr_string("mode", "wrap")}, "pad")}, {ob::int64_tensor("p", {8}, pads)},
                     {ob::value_info("x", {1, 3, -1, -1})}, {ob::value_info("y", {1, -1, -1, -1})});
  };
  // A roll by one row (a pad of 1 on top, a crop of 1 at the bottom) keeps the size.
  EXPECT_FALSE(model_of(with_pads({0, 0, 1, 0, 0, 0, -1, 0}), 19).info().tiled);
  EXPECT_TRUE(model_of(with_pads({0, 0, 0, 0, 0, 0, 0, 0}), 19).info().tiled);
  EXPECT_NE(refusal(with_pads({0, 0, 1, 0, 0, 0, -1, 0}), 18).find("node pad (Pad): mode='wrap' is not supported (constant, reflect, edge)"),
            std::string::npos);
}

TEST(OnnxGraph, Bf16RunsComputeInBf16AndReturnTheCallersType) {
  // Resize by a constant scale 3 (nearest), then Clip to [0, 0.999]: the scale and bounds are
  // parameters, kept fp32 when the model moves to bf16.
  Proto g = ob::graph({ob::node("Resize", {"x", "", "s"}, {"r"}, {ob::attr_string("mode", "nearest"),
                                                                    ob::attr_string("coordinate_transformation_mode", "asymmetric"),
                                                                    ob::attr_string("nearest_mode", "floor")}),
                       ob::node("Clip", {"r", "lo", "hi"}, {"y"})},
                      {ob::tensor("s", {4}, {1, 1, 3, 3}), ob::tensor("lo", {}, {0.f}), ob::tensor("hi", {}, {0.999f})},
                      {ob::value_info("x", {1, 3, -1, -1})}, {ob::value_info("y", {1, 3, -1, -1})});
  OnnxModel m = model_of(g);
  EXPECT_EQ(m.info().scale, 3);
  const at::Tensor x = at::rand({1, 3, 7, 5});
  const at::Tensor ref = at::clamp(at::upsample_nearest2d(x, {21, 15}), 0.0, 0.999);
  EXPECT_TRUE(at::equal(m.forward(x), ref));
  m.to(at::kCPU, at::kBFloat16);
  const at::Tensor y = m.forward(x);
  EXPECT_EQ(y.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::allclose(y, ref.to(at::kBFloat16).to(at::kFloat)));
}

// The planner's cost of a graph comes from its operators' real shapes: a 3 -> 12 3x3 convolution
// is 324 multiply-accumulates per input pixel; the pixel shuffle after it costs none.
TEST(OnnxGraph, CostModelCountsConvolutionMacsPerPixel) {
  OnnxModel m = model_of(conv_d2s_graph());
  const arch::ArchCost c = m.cost_model();
  EXPECT_EQ(c.arch, "onnx_graph");
  EXPECT_EQ(c.scale, 2);
  EXPECT_DOUBLE_EQ(c.macs_per_px, 12 * 3 * 9);
  EXPECT_EQ(c.params, 12 * 3 * 9);
  EXPECT_GE(c.peak_elems_per_px, 12);
  EXPECT_GT(c.traffic_elems_per_px, 0);
}

TEST(OnnxGraph, OpenModelAndDescribeTakeOnnxFilesByExtensionAndByContent) {
  const auto dir = test::temp_dir("onnx_graph");
  const auto bytes = ob::model(conv_d2s_graph()).bytes();
  for (const std::string name : {"x2.onnx", "x2.model"}) {
    std::ofstream(dir / name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    auto model = open_model((dir / name).string());
    EXPECT_EQ(model->info().scale, 2) << name;
    EXPECT_EQ(model->info().arch, "onnx_graph");
    const ModelFileNetwork network = detect_model_file(dir / name);
    EXPECT_EQ(network.output_scale, 2);
    ASSERT_TRUE(network.graph_cost);  // what the planner prices the file by
    EXPECT_DOUBLE_EQ(network.graph_cost->macs_per_px, 12 * 3 * 9);
  }
  const std::string info = describe_model_file((dir / "x2.onnx").string());
  EXPECT_NE(info.find("\"format\": \"onnx\""), std::string::npos) << info;
  EXPECT_NE(info.find("\"DepthToSpace\": 1"), std::string::npos) << info;
  std::ofstream(dir / "junk.onnx") << "not a model";
  try {
    open_model((dir / "junk.onnx").string());
    ADD_FAILURE() << "accepted junk";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind((dir / "junk.onnx").string() + ": ", 0), 0u) << e.what();
  }
}

TEST(OnnxGraph, TheOperatorTableHasWhatTheDocsList) {
  const auto ops = supported_ops();
  for (const char* op : {"Conv", "ConvTranspose", "Add", "Sub", "Mul", "Div", "Relu", "LeakyRelu", "PRelu", "Sigmoid", "Tanh", "Gelu",
                         "Erf", "Clip", "Concat", "Split", "Slice", "Reshape", "Transpose", "Flatten", "DepthToSpace", "SpaceToDepth",
                         "Resize", "Upsample", "Pad", "MatMul", "Gemm", "Softmax", "LayerNormalization", "ReduceMean", "Pow", "Sqrt",
                         "InstanceNormalization", "BatchNormalization", "GridSample", "Where", "Expand", "Gather", "Shape", "Cast",
                         "Constant", "ConstantOfShape", "Unsqueeze", "Squeeze", "Range", "Equal"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
}

}  // namespace
}  // namespace framelift::models::onnx
