#include <gtest/gtest.h>

#include <torch/torch.h>

#include "support/test_paths.h"
#include "util/error.h"
#include "weight_file_builder.h"
#include "weights/load_weights.h"
#include "weights/safetensors.h"

namespace framelift::weights {
namespace {

using test::ByteString;

// header JSON + data bytes -> a safetensors file image
ByteString safetensors_image(const std::string& header, const ByteString& data) {
  ByteString out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::string error_of(const ByteString& bytes, const std::string& label = "bad.safetensors") {
  try {
    load_safetensors_bytes(bytes, label);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Model);
    EXPECT_NE(std::string(e.what()).find(label), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

TEST(Safetensors, RoundTripIsBitExactForEveryDtype) {
  torch::manual_seed(1);
  StateDict dict;
  dict["f32"] = torch::randn({3, 4, 5});
  dict["f32.nan"] = torch::tensor({std::nanf(""), -0.f, INFINITY});
  dict["f16"] = torch::randn({7}).to(at::kHalf);
  dict["bf16"] = torch::randn({2, 2}).to(at::kBFloat16);
  dict["f64"] = torch::randn({5}, at::kDouble);
  dict["i64"] = torch::tensor({int64_t{-1}, INT64_MAX, INT64_MIN});
  dict["i32"] = torch::randint(-1000, 1000, {6}, at::kInt);
  dict["i8"] = torch::randint(-128, 127, {6}, at::kChar);
  dict["u8"] = torch::randint(0, 255, {2, 3}, at::kByte);
  dict["bool"] = torch::tensor({true, false, true});
  dict["scalar"] = torch::tensor(3.5f);
  dict["empty"] = torch::zeros({0, 4});
  dict["transposed"] = torch::arange(6, at::kFloat).view({2, 3}).t();  // saved contiguous
  const auto path = test::temp_dir("safetensors") / "roundtrip.safetensors";
  save_safetensors(path, dict);
  const StateDict back = load_safetensors(path);
  ASSERT_EQ(back.size(), dict.size());
  for (const auto& [key, tensor] : dict) {
    const auto& got = back.at(key);
    EXPECT_EQ(got.scalar_type(), tensor.scalar_type()) << key;
    EXPECT_EQ(got.sizes(), tensor.sizes()) << key;
    EXPECT_TRUE(got.is_contiguous()) << key;
    auto want = tensor.contiguous();
    ASSERT_EQ(got.numel() * got.element_size(), want.numel() * want.element_size());
    EXPECT_EQ(std::memcmp(got.data_ptr(), want.data_ptr(), want.numel() * want.element_size()), 0) << key;
  }
  // The header is padded so tensor data starts 8-byte aligned, as the reference writer does.
  const auto bytes = test::read_bytes(path);
  uint64_t header = 0;
  for (int i = 0; i < 8; ++i) header |= uint64_t{bytes[i]} << (8 * i);
  EXPECT_EQ(header % 8, 0u);
  EXPECT_EQ(detect_weight_format(bytes), WeightFormat::Safetensors);
  EXPECT_EQ(load_weights(path).size(), dict.size());
}

// A header length whose low byte is 0x80 (128, 384, 640, ...: one length in 32 a writer pads to)
// makes the file's first byte the pickle PROTO opcode; the file is still a safetensors file.
TEST(Safetensors, AHeaderLengthStartingWith0x80IsNotTakenForAPickle) {
  for (const size_t length : {size_t{128}, size_t{384}, size_t{640}}) {
    std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
    header.append(length - header.size(), ' ');  // the reference writer pads with spaces too
    const ByteString image = safetensors_image(header, test::float_bytes({1.5f, -2.f}));
    ASSERT_EQ(image[0], 0x80);
    EXPECT_EQ(detect_weight_format(image), WeightFormat::Safetensors) << length;
    const auto path = test::temp_dir("st-0x80") / ("len" + std::to_string(length) + ".safetensors");
    test::write_bytes(path, image);
    const StateDict dict = load_weights(path);
    ASSERT_EQ(dict.count("a"), 1u) << length;
    EXPECT_FLOAT_EQ(dict.at("a")[1].item<float>(), -2.f);
  }
}

TEST(Safetensors, ReadsAHandWrittenFile) {
  auto image = safetensors_image(
      R"({"__metadata__":{"format":"pt"},"b":{"dtype":"I32","shape":[2],"data_offsets":[8,16]},)"
      R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
      test::float_bytes({1.5f, -2.f, 0.f, 0.f}));
  image[8 + image.size() - 8 - 16 + 8] = 7;  // b[0] = 7 (little-endian int32)
  const StateDict dict = load_safetensors_bytes(image, "hand.safetensors");
  EXPECT_TRUE(torch::equal(dict.at("a"), torch::tensor({1.5f, -2.f})));
  EXPECT_TRUE(torch::equal(dict.at("b"), torch::tensor({7, 0}, at::kInt)));
}

TEST(Safetensors, RefusesInconsistentFiles) {
  const ByteString data = test::float_bytes({1, 2, 3, 4});
  auto with = [&](const std::string& header) { return safetensors_image(header, data); };
  EXPECT_NE(error_of(with(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,32]}})")).find("outside"),
            std::string::npos);
  EXPECT_NE(error_of(with(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[8,4]}})")).find("outside"),
            std::string::npos);
  EXPECT_NE(error_of(with(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})")).find("need 12"),
            std::string::npos);
  EXPECT_NE(error_of(with(R"({"a":{"dtype":"F16","shape":[4],"data_offsets":[0,16]}})")).find("need 8"),
            std::string::npos);
  EXPECT_NE(error_of(with(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})"))
                .find("overlap"),
            std::string::npos);
  EXPECT_NE(error_of(with(R"({"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,16]}})"))
                .find("too large"),
            std::string::npos);
  EXPECT_NE(error_of(with(R"({"a":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}})")).find("negative"),
            std::string::npos);
  EXPECT_NE(error_of(with(R"({"a":{"dtype":"C64","shape":[2],"data_offsets":[0,16]}})")).find("C64"),
            std::string::npos);
  EXPECT_NE(error_of(with(R"({"a":{"dtype":"F32","shape":[4]}})")).find("data_offsets"), std::string::npos);
  EXPECT_NE(error_of(with(R"({"a":[1,2]})")).find("not an object"), std::string::npos);
  EXPECT_NE(error_of(with(R"([1,2])")).find("JSON object"), std::string::npos);
  EXPECT_NE(error_of(with(R"({"a":)")).find("JSON object"), std::string::npos);
}

TEST(Safetensors, RefusesBadHeaderLengths) {
  EXPECT_NE(error_of({1, 2, 3}).find("truncated"), std::string::npos);
  auto image = safetensors_image("{}", {});
  image[0] = 200;  // header claims 200 bytes, file has 2
  EXPECT_NE(error_of(image).find("exceeds the file"), std::string::npos);
  ByteString huge(16, 0xff);  // 2^64-1
  EXPECT_NE(error_of(huge).find("too large"), std::string::npos);
}

TEST(Safetensors, UnknownFormatNamesTheFile) {
  const auto path = test::temp_dir("weights-unknown") / "notes.bin";
  test::write_bytes(path, {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'});
  try {
    load_weights(path);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + ": unrecognised weight file"), std::string::npos);
  }
  EXPECT_THROW(load_weights(path.parent_path() / "absent.pth"), Error);
}

}  // namespace
}  // namespace framelift::weights
