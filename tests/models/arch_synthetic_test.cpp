// Detection, key layouts and errors of the native architectures on small synthetic state dicts:
// variants no community file in the test data covers (Compact x3, Real-ESRGAN x2/x1 with pixel
// unshuffle, old-layout ESRGAN x2), the equivalence of the key layouts, and the messages for
// wrong shapes, missing, unexpected and unknown tensors.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <nlohmann/json.hpp>

#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "util/error.h"
#include "util/str.h"

namespace fm = framelift::models;
namespace ft = framelift::test;
using framelift::str;
using framelift::weights::StateDict;
using framelift::test::refusal_of;

namespace {

void add_conv(StateDict& d, const std::string& prefix, int64_t in, int64_t out) {
  d[prefix + ".weight"] = ft::random_weight({out, in, 3, 3});
  d[prefix + ".bias"] = ft::random_weight({out});
}

StateDict compact(int64_t feat, int num_conv, int64_t scale) {
  StateDict d;
  for (int i = 0; i <= num_conv; ++i) {
    add_conv(d, str("body.", 2 * i), i == 0 ? 3 : feat, feat);
    d[str("body.", 2 * i + 1, ".weight")] = at::full({feat}, 0.25);
  }
  add_conv(d, str("body.", 2 * num_conv + 2), feat, 3 * scale * scale);
  return d;
}

// Real-ESRGAN key names; in_channels 12 or 48 for the pixel-unshuffle variants.
StateDict rrdb_new(int64_t in, int64_t nf, int nb, int64_t gc, int ups) {
  StateDict d;
  add_conv(d, "conv_first", in, nf);
  for (int b = 0; b < nb; ++b)
    for (int j = 1; j <= 3; ++j)
      for (int k = 1; k <= 5; ++k) add_conv(d, str("body.", b, ".rdb", j, ".conv", k), nf + (k - 1) * gc, k == 5 ? nf : gc);
  add_conv(d, "conv_body", nf, nf);
  for (int u = 1; u <= ups; ++u) add_conv(d, str("conv_up", u), nf, nf);
  add_conv(d, "conv_hr", nf, nf);
  add_conv(d, "conv_last", nf, 3);
  return d;
}

// The same tensors under the original ESRGAN names (Sequential indices, Upsample/LeakyReLU gaps).
StateDict rrdb_old_from_new(const StateDict& n, int nb, int ups) {
  StateDict d;
  auto copy = [&](const std::string& from, const std::string& to) {
    d[to + ".weight"] = n.at(from + ".weight");
    d[to + ".bias"] = n.at(from + ".bias");
  };
  copy("conv_first", "model.0");
  for (int b = 0; b < nb; ++b)
    for (int j = 1; j <= 3; ++j)
      for (int k = 1; k <= 5; ++k)
        copy(str("body.", b, ".rdb", j, ".conv", k), str("model.1.sub.", b, ".RDB", j, ".conv", k, ".0"));
  copy("conv_body", str("model.1.sub.", nb));
  int index = 3;
  for (int u = 1; u <= ups; ++u, index += 3) copy(str("conv_up", u), str("model.", index));
  copy("conv_hr", str("model.", index - 1));
  copy("conv_last", str("model.", index + 1));
  return d;
}

}  // namespace

TEST(ArchSynthetic, CompactX3ShapesAndResidual) {
  StateDict d = compact(8, 2, 3);
  auto found = fm::detect(d);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->arch, "srvgg_compact");
  EXPECT_EQ(found->scale, 3);
  at::Tensor x = at::rand({1, 3, 10, 14});
  auto model = fm::build_model(d);
  EXPECT_EQ(model->forward(x).sizes(), (std::vector<int64_t>{1, 3, 30, 42}));
  // A zero last convolution leaves only the nearest-upscaled input.
  d["body.6.weight"].zero_();
  d["body.6.bias"].zero_();
  at::Tensor y = fm::build_model(d)->forward(x);
  EXPECT_TRUE(at::allclose(y, x.repeat_interleave(3, 2).repeat_interleave(3, 3)));
}

TEST(ArchSynthetic, RealEsrganPixelUnshuffleVariants) {
  for (auto [in, scale, multiple] : {std::tuple{12, 2, 2}, std::tuple{48, 1, 4}, std::tuple{3, 4, 1}}) {
    StateDict d = rrdb_new(in, 8, 1, 4, 2);
    auto found = fm::detect(d);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->arch, "rrdbnet");
    EXPECT_EQ(found->scale, scale);
    EXPECT_EQ(found->in_channels, 3);
    auto model = fm::build_model(d);
    EXPECT_EQ(model->info().size_multiple, multiple);
    EXPECT_EQ(model->forward(at::rand({1, 3, 8, 12})).sizes(), (std::vector<int64_t>{1, 3, 8 * scale, 12 * scale}));
  }
}

TEST(ArchSynthetic, OldEsrganLayoutMatchesNewLayout) {
  for (int ups : {1, 2, 3}) {
    StateDict n = rrdb_new(3, 8, 2, 4, ups);
    StateDict o = rrdb_old_from_new(n, 2, ups);
    auto found = fm::detect(o);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->scale, 1 << ups);
    at::Tensor x = at::rand({1, 3, 6, 7});
    at::Tensor a = fm::build_model(n)->forward(x), b = fm::build_model(o)->forward(x);
    EXPECT_TRUE(at::equal(a, b)) << "ups=" << ups;
  }
}

TEST(ArchSynthetic, WrongShapeNamesTensorAndShapes) {
  StateDict d = compact(8, 2, 2);
  d["body.4.weight"] = ft::random_weight({8, 4, 3, 3});
  EXPECT_EQ(refusal_of(d), "test.pth: tensor body.4.weight has shape [8, 4, 3, 3], expected [8, 8, 3, 3]");
  StateDict r = rrdb_new(3, 8, 1, 4, 2);
  r["body.0.rdb2.conv3.weight"] = ft::random_weight({4, 12, 3, 3});
  EXPECT_EQ(refusal_of(r), "test.pth: tensor body.0.rdb2.conv3.weight has shape [4, 12, 3, 3], expected [4, 16, 3, 3]");
}

TEST(ArchSynthetic, MissingUnexpectedAndUnknownTensors) {
  StateDict d = compact(8, 2, 2);
  d.erase("body.3.weight");
  EXPECT_EQ(refusal_of(d), "test.pth: missing tensor body.3.weight");
  StateDict e = rrdb_new(3, 8, 1, 4, 2);
  e["conv_up3.bias"] = ft::random_weight({8});
  EXPECT_EQ(refusal_of(e), "test.pth: unexpected tensor conv_up3.bias for this architecture");
  StateDict u{{"encoder.0.weight", ft::random_weight({4, 3, 3, 3})}};
  std::string msg = refusal_of(u);
  EXPECT_NE(msg.find("test.pth: unsupported architecture"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tried srvgg_compact, rrdbnet, realcugan"), std::string::npos) << msg;
  StateDict bad_scale = compact(8, 1, 2);
  bad_scale["body.4.weight"] = ft::random_weight({10, 8, 3, 3});
  msg = refusal_of(bad_scale);
  EXPECT_NE(msg.find("not in_channels (3) times a square scale"), std::string::npos) << msg;
}

// waifu2x's luma models (1 -> 1 channel) have the same layout; "net.N" keys are common, so any
// other index set is not UpConv7.
TEST(ArchSynthetic, UpConv7LumaAndStrictKeys) {
  StateDict d;
  int64_t in = 1;
  for (int64_t i = 0; i < 6; ++i) {
    const int64_t out = std::vector<int64_t>{16, 32, 64, 128, 128, 256}[i];
    add_conv(d, str("net.", 2 * i), in, out);
    in = out;
  }
  d["net.12.weight"] = ft::random_weight({256, 1, 4, 4});
  d["net.12.bias"] = ft::random_weight({1});
  auto found = fm::detect(d);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->arch, "waifu2x_upconv7");
  EXPECT_EQ(found->scale, 2);
  EXPECT_EQ(found->in_channels, 1);
  auto model = fm::build_model(d, "test.pth");
  EXPECT_EQ(model->forward(at::rand({1, 1, 9, 11})).sizes(), (std::vector<int64_t>{1, 1, 18, 22}));
  try {
    model->forward(at::rand({1, 1, 7, 20}));
    FAIL() << "expected an error for a 20x7 input";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(std::string(e.what()), "test.pth: input 20x7 is too small for UpConv7's 7-pixel reflect padding (use at least 8x8)");
  }
  add_conv(d, "net.14", 1, 1);
  const std::string msg = refusal_of(d);
  EXPECT_NE(msg.find("unsupported architecture"), std::string::npos) << msg;
}

TEST(ArchSynthetic, DescribeModelIsJson) {
  auto j = nlohmann::json::parse(fm::describe_model(rrdb_new(12, 8, 1, 4, 2)));
  EXPECT_EQ(j["arch"], "rrdbnet");
  EXPECT_EQ(j["scale"], 2);
  EXPECT_EQ(j["hyperparameters"]["nb"], 1);  // typed numbers, not strings
  EXPECT_EQ(j["hyperparameters"]["pixel_unshuffle"], 2);
  EXPECT_EQ(j["hyperparameters"]["variant"], "realesrgan");
  EXPECT_GT(j["params"].get<int64_t>(), 0);
}
