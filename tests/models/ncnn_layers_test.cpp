// The interpreter on small synthetic graphs: ncnn semantics that differ from PyTorch's defaults
// (broadcasting, negative crop axes, 'same' padding, DepthToSpace mode), custom layers and errors.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "models/ncnn/layer_registry.h"
#include "models/ncnn/ncnn_model.h"
#include "util/error.h"
#include "weights/ncnn_param.h"

namespace fw = framelift::weights;
namespace fn = framelift::models::ncnn;

namespace {

fn::NcnnModel make(const std::string& param, const fw::StateDict& weights = {}, bool probe = false) {
  fn::NcnnModelOptions options;
  options.probe = probe;
  return fn::NcnnModel(fw::parse_ncnn_param_text(param, "test.param"), weights, options);
}

}  // namespace

TEST(NcnnLayers, SqueezeExcitationBroadcastsPerChannel) {
  // Global pooling yields a 1-D blob of c values; BinaryOp aligns it with the channel axis.
  auto m = make(R"(7767517
4 5
Input in 0 1 x
Split s 1 2 x a b
Pooling gap 1 1 a g 0=1 4=1
BinaryOp mul 2 1 b g y 0=2
)");
  at::Tensor x = at::rand({2, 3, 4, 5});
  at::Tensor y = m.run(x);
  EXPECT_TRUE(at::allclose(y, x * x.mean({2, 3}, true)));
}

TEST(NcnnLayers, CropWithNegativeAxesAndEnds) {
  auto m = make("7767517\n2 2\nInput in 0 1 x\nCrop c 1 1 x y -23309=2,4,4 -23310=2,-4,-4 -23311=2,-2,-1\n");
  at::Tensor x = at::rand({1, 2, 12, 10});
  EXPECT_TRUE(at::equal(m.run(x), x.slice(2, 4, 8).slice(3, 4, 6)));
}

TEST(NcnnLayers, ConvolutionSamePaddingAndFusedLeakyRelu) {
  fw::StateDict w = {{"c.weight", at::randn({4, 3, 3, 3})}, {"c.bias", at::randn({4})}};
  auto m = make("7767517\n2 2\nInput in 0 1 x\nConvolution c 1 1 x y 0=4 1=3 3=2 4=-233 5=1 6=108 9=2 -23310=1,0.1\n", w);
  at::Tensor x = at::randn({1, 3, 9, 8});
  // SAME_UPPER for k=3, s=2: total pad 2 on h (9 -> 5), 1 on w split 0 / 1.
  at::Tensor ref = at::leaky_relu(
      at::conv2d(at::constant_pad_nd(x, {0, 1, 1, 1}), w["c.weight"], w["c.bias"], {2, 2}), 0.1);
  EXPECT_TRUE(at::allclose(m.run(x), ref, 1e-5, 1e-5));
}

TEST(NcnnLayers, DeconvolutionAndPixelShuffleModes) {
  fw::StateDict w = {{"d.weight", at::randn({3, 2, 4, 4})}};
  auto m = make("7767517\n2 2\nInput in 0 1 x\nDeconvolution d 1 1 x y 0=2 1=4 3=2 4=3 6=96\n", w);
  at::Tensor x = at::randn({1, 3, 5, 6});
  at::Tensor full = at::conv_transpose2d(x, w["d.weight"], {}, {2, 2});
  EXPECT_TRUE(at::allclose(m.run(x), full.slice(2, 3, full.size(2) - 3).slice(3, 3, full.size(3) - 3), 1e-5, 1e-5));

  auto ps = make("7767517\n2 2\nInput in 0 1 x\nPixelShuffle p 1 1 x y 0=2 1=1\n");
  at::Tensor z = at::arange(8, at::kFloat).view({1, 8, 1, 1});
  // DCR: output channel c at (dy, dx) comes from input channel (dy * 2 + dx) * 2 + c.
  at::Tensor y = ps.run(z);
  EXPECT_EQ(y[0][1][1][0].item<float>(), 5.f);
  EXPECT_EQ(y[0][0][0][1].item<float>(), 2.f);
}

TEST(NcnnLayers, InterpEltwiseAndProbedGeometry) {
  auto m = make(R"(7767517
5 6
Input in 0 1 x
Split s 1 2 x a b
Interp up 1 1 a u 0=2 1=2.0 2=2.0
Interp up2 1 1 b v 0=1 1=2.0 2=2.0
Eltwise e 2 1 u v y 0=1 -23301=2,0.5,0.5
)",
                {}, true);
  EXPECT_EQ(m.info().scale, 2);
  EXPECT_EQ(m.info().size_multiple, 1);
  at::Tensor x = at::rand({1, 3, 6, 7});
  at::Tensor ref = 0.5 * at::upsample_bilinear2d(x, {12, 14}, false) + 0.5 * at::upsample_nearest2d(x, {12, 14});
  EXPECT_TRUE(at::allclose(m.forward(x), ref, 1e-5, 1e-6));
}

TEST(NcnnLayers, UnknownLayerTypeIsANamedError) {
  try {
    make("7767517\n2 2\nInput in 0 1 x\nMysteryOp odd_layer 1 1 x y\n");
    FAIL() << "expected an error";
  } catch (const framelift::Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Model);
    EXPECT_NE(msg.find("MysteryOp"), std::string::npos) << msg;
    EXPECT_NE(msg.find("odd_layer"), std::string::npos) << msg;
    EXPECT_NE(msg.find("test.param"), std::string::npos) << msg;
  }
}

TEST(NcnnLayers, CustomLayerFromRegistry) {
  fn::register_layer("test.Double", [](const fn::LayerSpec&) {
    return std::make_unique<fn::LambdaOp>([](fn::Blobs in) -> fn::Blobs { return {in.at(0) * 2}; });
  });
  auto m = make("7767517\n2 2\nInput in 0 1 x\ntest.Double d 1 1 x y\n");
  at::Tensor x = at::rand({1, 1, 2, 2});
  EXPECT_TRUE(at::equal(m.run(x), x * 2));
}

TEST(NcnnLayers, ShapeMismatchNamesTheLayer) {
  auto m = make("7767517\n3 3\nInput a 0 1 x\nInput b 0 1 z\nBinaryOp add 2 1 x z y 0=0\n");
  try {
    m.run({{"x", at::rand({1, 3, 4, 4})}, {"z", at::rand({1, 3, 5, 4})}}, {"y"});
    FAIL() << "expected an error";
  } catch (const framelift::Error& e) {
    EXPECT_NE(std::string(e.what()).find("add"), std::string::npos) << e.what();
  }
}
