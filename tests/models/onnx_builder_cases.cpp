// Graphs PyTorch 1.13 cannot export (every Resize coordinate and nearest mode, cubic's other
// coefficient and exclude_outside, Gelu of opset 20, Mish of 18, SpaceToDepth, legacy Softmax,
// Pad wrap, ConvTranspose by output_shape or auto_pad),
// written with tests/support/onnx_builder.h into the cases folder for ONNX Runtime to run
// (onnx_ort_check.sh calls this test with FRAMELIFT_ONNX_WRITE set; it skips otherwise). Only
// graphs and inputs are written here: the expected outputs are ONNX Runtime's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "support/onnx_builder.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;
namespace ob = onnx_build;

struct Writer {
  fs::path dir;
  nlohmann::json cases;

  void add(const std::string& name, const Proto& graph, int64_t opset, std::vector<int64_t> shape, int tile = 0) {
    const auto bytes = ob::model(graph, opset).bytes();
    std::ofstream(dir / (name + ".onnx"), std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                                 static_cast<std::streamsize>(bytes.size()));
    at::manual_seed(static_cast<uint64_t>(cases.size()) + 11);
    const at::Tensor x = at::rand(shape);
    std::ofstream(dir / (name + ".in.f32"), std::ios::binary).write(static_cast<const char*>(x.data_ptr()),
                                                                   static_cast<std::streamsize>(x.numel() * 4));
    cases.push_back({{"case", name}, {"network", name}, {"opset", opset}, {"model", name + ".onnx"}, {"input", name + ".in.f32"},
                     {"shape", shape}, {"tile", tile}, {"overlap", -1}, {"bf16_db", 30}, {"builder", true}});
  }
};

Proto one_node(const std::string& op, const std::vector<std::string>& inputs, const std::vector<Proto>& attributes,
               const std::vector<Proto>& initializers) {
  return ob::graph({ob::node(op, inputs, {"y"}, attributes)}, initializers, {ob::value_info("x", {1, 3, -1, -1})},
                   {ob::value_info("y", {1, -1, -1, -1})});
}

Proto resize(const std::vector<Proto>& attributes, float scale) {
  return one_node("Resize", {"x", "", "scales"}, attributes, {ob::tensor("scales", {4}, {1, 1, scale, scale})});
}

TEST(OnnxBuilderCases, WriteGraphsForOnnxRuntime) {
  const char* out = std::getenv("FRAMELIFT_ONNX_WRITE");
  if (!out) GTEST_SKIP() << "FRAMELIFT_ONNX_WRITE not set (onnx_ort_check.sh sets it)";
  Writer w{out, nlohmann::json::array()};
  const std::vector<int64_t> odd = {1, 3, 29, 37};
  const std::vector<std::string> coordinates = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                                "half_pixel_symmetric"};
  for (const std::string nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
    for (const std::string coord : {"asymmetric", "half_pixel", "align_corners"})
      for (float scale : {2.f, 3.f})
        w.add("resize_nearest_" + nearest + "_" + coord + "_x" + std::to_string(static_cast<int>(scale)),
              resize({ob::attr_string("mode", "nearest"), ob::attr_string("nearest_mode", nearest),
                      ob::attr_string("coordinate_transformation_mode", coord)}, scale),
              19, odd, coord == "align_corners" ? 0 : 16);
  for (const auto& coord : coordinates) {
    w.add("resize_linear_" + coord + "_x3", resize({ob::attr_string("mode", "linear"), ob::attr_string("coordinate_transformation_mode", coord)}, 3.f),
          19, odd);
    w.add("resize_cubic_" + coord + "_x2", resize({ob::attr_string("mode", "cubic"), ob::attr_string("coordinate_transformation_mode", coord)}, 2.f),
          19, odd);
    w.add("resize_cubic_a05_exclude_" + coord + "_x2",
          resize({ob::attr_string("mode", "cubic"), ob::attr_string("coordinate_transformation_mode", coord), ob::attr_float("cubic_coeff_a", -0.5f),
                  ob::attr_int("exclude_outside", 1)}, 2.f),
          19, odd);
  }
  // tf_crop_and_resize: a region shifted past the top and right edges (those outputs are the
  // extrapolation value), enlarged 2x. Its extent stays the frame's (end - start = 1), where the
  // spec's output size floor(in * (end - start) * scale) and a plain floor(in * scale) agree; whole
  // pictures only, since the region is the frame's.
  for (const std::string mode : {"nearest", "linear", "cubic"})
    w.add("resize_" + mode + "_tf_crop_and_resize",
          one_node("Resize", {"x", "roi", "scales"},
                   {ob::attr_string("mode", mode), ob::attr_string("coordinate_transformation_mode", "tf_crop_and_resize"),
                    ob::attr_float("extrapolation_value", -0.25f)},
                   {ob::tensor("roi", {8}, {0, 0, -0.1f, 0.2f, 1, 1, 0.9f, 1.2f}), ob::tensor("scales", {4}, {1, 1, 2, 2})}),
          19, odd);
  w.add("gelu_none_op20", one_node("Gelu", {"x"}, {}, {}), 20, odd);
  w.add("gelu_tanh_op20", one_node("Gelu", {"x"}, {ob::attr_string("approximate", "tanh")}, {}), 20, odd);
  w.add("mish_op18", one_node("Mish", {"x"}, {}, {}), 18, odd);
  // SpaceToDepth, a 1x1 mix of the 12 channels, then DepthToSpace DCR back: size multiple 2.
  {
    std::vector<float> mix(12 * 12);
    for (size_t k = 0; k < mix.size(); ++k) mix[k] = static_cast<float>((k * 29) % 13) / 13.f - 0.4f;
    Proto g = ob::graph({ob::node("SpaceToDepth", {"x"}, {"s"}, {ob::attr_int("blocksize", 2)}), ob::node("Conv", {"s", "m"}, {"c"}),
                         ob::node("DepthToSpace", {"c"}, {"y"}, {ob::attr_int("blocksize", 2), ob::attr_string("mode", "DCR")})},
                        {ob::tensor("m", {12, 12, 1, 1}, mix)}, {ob::value_info("x", {1, 3, -1, -1})}, {ob::value_info("y", {1, 3, -1, -1})});
    w.add("space_to_depth_dcr_op13", g, 13, {1, 3, 28, 36}, 16);
  }
  // Softmax before opset 13 normalises over everything from `axis` on; from 13, over one axis.
  w.add("softmax_axis1_op11", one_node("Softmax", {"x"}, {ob::attr_int("axis", 1)}, {}), 11, odd);
  w.add("softmax_axis1_op13", one_node("Softmax", {"x"}, {ob::attr_int("axis", 1)}, {}), 13, odd);
  // Pad with the opset 18 axes input, edge mode, H and W only (2 top, 1 left, 0 bottom, 3 right),
  // then a 3x5 convolution without padding brings the picture back to its size.
  {
    std::vector<float> k(3 * 3 * 15);
    for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<float>((i * 31) % 11) / 22.f - 0.2f;
    Proto g = ob::graph({ob::node("Pad", {"x", "pads", "", "axes"}, {"p"}, {ob::attr_string("mode", "edge")}), ob::node("Conv", {"p", "k"}, {"y"})},
                        {ob::int64_tensor("pads", {4}, {2, 1, 0, 3}), ob::int64_tensor("axes", {2}, {2, 3}), ob::tensor("k", {3, 3, 3, 5}, k)},
                        {ob::value_info("x", {1, 3, -1, -1})}, {ob::value_info("y", {1, 3, -1, -1})});
    w.add("pad_edge_axes_op18", g, 18, odd);
  }
  // Pad wrap (opset 19): the far edge comes round (2 top, 1 left, 0 bottom, 3 right), then a 3x5
  // convolution brings the size back; a second graph crops with negative pads what the other side
  // gains (a roll by 3 rows down and 2 columns left: the probe needs the size kept). Wrapping
  // reads the picture's far edge, so these run whole only.
  {
    std::vector<float> k(3 * 3 * 15);
    for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<float>((i * 37) % 13) / 26.f - 0.2f;
    Proto g = ob::graph({ob::node("Pad", {"x", "pads"}, {"p"}, {ob::attr_string("mode", "wrap")}), ob::node("Conv", {"p", "k"}, {"y"})},
                        {ob::int64_tensor("pads", {8}, {0, 0, 2, 1, 0, 0, 0, 3}), ob::tensor("k", {3, 3, 3, 5}, k)},
                        {ob::value_info("x", {1, 3, -1, -1})}, {ob::value_info("y", {1, 3, -1, -1})});
    w.add("pad_wrap_op19", g, 19, odd);
    w.add("pad_wrap_crop_op19",
          one_node("Pad", {"x", "pads"}, {ob::attr_string("mode", "wrap")}, {ob::int64_tensor("pads", {8}, {0, 0, 3, -2, 0, 0, -3, 2})}), 19, odd);
  }
  // ConvTranspose whose size comes from output_shape (the pads the total leaves, an odd total on
  // one axis) or from auto_pad SAME_UPPER / SAME_LOWER (input times stride; the odd pixel at the
  // end, or at the start), stride 2, 4x3 kernels.
  {
    std::vector<float> k(3 * 3 * 4 * 3);
    for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<float>((i * 41) % 17) / 34.f - 0.25f;
    const auto transpose = [&](const std::vector<Proto>& attributes) {
      std::vector<Proto> all = {ob::attr_ints("strides", {2, 2})};
      all.insert(all.end(), attributes.begin(), attributes.end());
      return one_node("ConvTranspose", {"x", "k", "b"}, all, {ob::tensor("k", {3, 3, 4, 3}, k), ob::tensor("b", {3}, {0.1f, -0.2f, 0.05f})});
    };
    // output_shape fixes the output's size, so such a ConvTranspose only runs on one input size:
    // here on the picture's top-left 3x2 corner (which gives 8x5 in full; 5x4 leaves totals of 3 and
    // 1), its 60 values mixed by a 1x1 convolution into one value per channel, added to the picture.
    {
      std::vector<float> mix(3 * 60);
      for (size_t i = 0; i < mix.size(); ++i) mix[i] = static_cast<float>((i * 53) % 19) / 19.f - 0.45f;
      Proto g = ob::graph(
          {ob::node("Slice", {"x", "starts", "ends", "axes"}, {"corner"}),
           ob::node("ConvTranspose", {"corner", "k", "b"}, {"z"},
                    {ob::attr_ints("strides", {2, 2}), ob::attr_ints("output_shape", {5, 4})}),
           ob::node("Reshape", {"z", "flat"}, {"r"}), ob::node("Conv", {"r", "mix"}, {"c"}), ob::node("Add", {"x", "c"}, {"y"})},
          {ob::int64_tensor("starts", {2}, {0, 0}), ob::int64_tensor("ends", {2}, {3, 2}), ob::int64_tensor("axes", {2}, {2, 3}),
           ob::tensor("k", {3, 3, 4, 3}, k), ob::tensor("b", {3}, {0.1f, -0.2f, 0.05f}), ob::int64_tensor("flat", {4}, {1, 60, 1, 1}),
           ob::tensor("mix", {3, 60, 1, 1}, mix)},
          {ob::value_info("x", {1, 3, -1, -1})}, {ob::value_info("y", {1, 3, -1, -1})});
      w.add("conv_transpose_output_shape_op13", g, 13, odd);
    }
    w.add("conv_transpose_same_upper_op13", transpose({ob::attr_string("auto_pad", "SAME_UPPER")}), 13, odd);
    w.add("conv_transpose_same_lower_op13", transpose({ob::attr_string("auto_pad", "SAME_LOWER")}), 13, odd);
  }
  nlohmann::json all = nlohmann::json::array();
  if (std::ifstream in(w.dir / "cases.json"); in) all = nlohmann::json::parse(in);
  for (const auto& c : w.cases) all.push_back(c);
  std::ofstream(w.dir / "cases.json") << all.dump(1);
  std::cout << "onnx_builder_cases: " << w.cases.size() << " graphs in " << w.dir << "\n";
}

}  // namespace
}  // namespace framelift::test
