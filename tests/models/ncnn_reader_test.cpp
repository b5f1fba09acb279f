// The .param parser and the .bin reader, on small hand-written networks.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cstring>

#include "util/error.h"
#include "weights/ncnn_bin.h"
#include "weights/ncnn_param.h"

namespace fw = framelift::weights;

namespace {

const char* kParam = R"(7767517
4 5
Input            in0      0 1 data 0=8 1=6 2=3
Convolution      conv0    1 1 data c0 0=4 1=3 11=1 4=-233 5=1 6=36 9=2 -23310=1,1.000000e-01
PReLU            prelu0   1 1 c0 p0 0=4
Crop             crop0    1 1 p0 out -23309=2,1,1 -23310=2,-1,-1 -23311=2,-2,-1
)";

void put_u32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
void put_f32(std::string& s, float v) { s.append(reinterpret_cast<const char*>(&v), 4); }

}  // namespace

TEST(NcnnParam, ParsesLayersBlobsAndArrays) {
  auto g = fw::parse_ncnn_param_text(kParam, "t.param");
  ASSERT_EQ(g.layers.size(), 4u);
  EXPECT_EQ(g.blob_count, 5);
  const auto& conv = g.layers[1];
  EXPECT_EQ(conv.type, "Convolution");
  EXPECT_EQ(conv.name, "conv0");
  EXPECT_EQ(conv.inputs, std::vector<std::string>{"data"});
  EXPECT_EQ(conv.outputs, std::vector<std::string>{"c0"});
  EXPECT_EQ(conv.params.get_int(0, 0), 4);
  EXPECT_EQ(conv.params.get_int(4, 0), -233);
  EXPECT_EQ(conv.params.get_int(13, 7), 7);  // absent -> default
  ASSERT_EQ(conv.params.get_floats(10).size(), 1u);
  EXPECT_FLOAT_EQ(conv.params.get_floats(10)[0], 0.1f);
  EXPECT_EQ(g.layers[3].params.get_ints(11), (std::vector<int>{-2, -1}));
}

TEST(NcnnParam, RejectsBadMagicAndShortFiles) {
  EXPECT_THROW(fw::parse_ncnn_param_text("1234\n1 1\n", "bad.param"), framelift::Error);
  try {
    fw::parse_ncnn_param_text("7767517\n3 3\nInput in0 0 1 data\n", "short.param");
    FAIL() << "expected an error";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Model);
    EXPECT_NE(std::string(e.what()).find("short.param"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1 of 3 layers"), std::string::npos) << e.what();
  }
  EXPECT_THROW(fw::parse_ncnn_param_text("7767517\n1 1\nCrop c 1 1 a b -23309=3,1,2\n", "arr.param"),
               framelift::Error);
}

TEST(NcnnBin, ReadsTaggedFp16AndRawBlobsInPyTorchLayout) {
  auto g = fw::parse_ncnn_param_text(kParam, "t.param");
  std::string bin;
  // conv0 weight: fp16 tag + 36 halves (4 out, 3 in, kh 1, kw 3), bias 4 fp32, PReLU 4 fp32.
  put_u32(bin, 0x01306B47);
  at::Tensor w = at::arange(36, at::kFloat).div(8).to(at::kHalf);
  bin.append(static_cast<const char*>(w.data_ptr()), 72);
  for (int i = 0; i < 4; ++i) put_f32(bin, 0.5f * i);
  for (int i = 0; i < 4; ++i) put_f32(bin, -0.25f);
  auto sd = fw::ncnn_to_state_dict(g, bin, "t.bin");
  ASSERT_TRUE(sd.count("conv0.weight"));
  EXPECT_EQ(sd["conv0.weight"].sizes(), (at::IntArrayRef{4, 3, 1, 3}));
  EXPECT_EQ(sd["conv0.weight"].scalar_type(), at::kHalf);
  EXPECT_TRUE(at::equal(sd["conv0.weight"].flatten(), w));
  EXPECT_FLOAT_EQ(sd["conv0.bias"][3].item<float>(), 1.5f);
  EXPECT_EQ(sd["prelu0.weight"].numel(), 4);
}

TEST(NcnnBin, DeconvolutionWeightsBecomeConvTransposeLayout) {
  auto g = fw::parse_ncnn_param_text("7767517\n2 2\nInput in 0 1 a\nDeconvolution d 1 1 a b 0=2 1=2 3=2 6=24\n", "d.param");
  std::string bin;
  put_u32(bin, 0);  // raw fp32
  for (int i = 0; i < 24; ++i) put_f32(bin, static_cast<float>(i));
  auto sd = fw::ncnn_to_state_dict(g, bin, "d.bin");
  // ncnn [out=2][in=3][2][2] -> PyTorch [in=3][out=2][2][2]
  at::Tensor expect = at::arange(24, at::kFloat).view({2, 3, 2, 2}).transpose(0, 1);
  EXPECT_TRUE(at::equal(sd["d.weight"], expect));
}

TEST(NcnnBin, TruncatedFileNamesLayerAndOffset) {
  auto g = fw::parse_ncnn_param_text(kParam, "t.param");
  std::string bin;
  put_u32(bin, 0);
  for (int i = 0; i < 20; ++i) put_f32(bin, 1.f);  // 36 needed
  try {
    fw::ncnn_to_state_dict(g, bin, "short.bin");
    FAIL() << "expected an error";
  } catch (const framelift::Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("short.bin"), std::string::npos) << msg;
    EXPECT_NE(msg.find("conv0"), std::string::npos) << msg;
  }
}

TEST(NcnnBin, UnknownTypeAndInt8AreRefused) {
  auto g = fw::parse_ncnn_param_text("7767517\n2 2\nInput in 0 1 a\nFancyOp f 1 1 a b\n", "u.param");
  try {
    fw::ncnn_to_state_dict(g, std::string(), "u.bin");
    FAIL() << "expected an error";
  } catch (const framelift::Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown type FancyOp"), std::string::npos) << e.what();
  }
  fw::NcnnBinOptions custom;
  custom.weightless_custom_types = {"FancyOp"};
  EXPECT_TRUE(fw::ncnn_to_state_dict(g, std::string(), "u.bin", custom).empty());

  auto q = fw::parse_ncnn_param_text("7767517\n2 2\nInput in 0 1 a\nConvolution c 1 1 a b 0=1 1=1 6=1\n", "q.param");
  std::string bin;
  put_u32(bin, 0x000D4B38);
  put_u32(bin, 0);
  EXPECT_THROW(fw::ncnn_to_state_dict(q, bin, "q.bin"), framelift::Error);
}
