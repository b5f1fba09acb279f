// SHA-256 against the FIPS 180-2 test vectors and against sha256sum on a real file.
#include "net/sha256.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "support/test_paths.h"
#include "util/error.h"

namespace fs = std::filesystem;
using framelift::net::Sha256;
using framelift::net::sha256_file;

namespace {

std::string sha(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.hex();
}

}  // namespace

TEST(Sha256, Fips180Vectors) {
  EXPECT_EQ(sha("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, OneMillionA) {
  // Fed in uneven pieces so that the buffered and the direct block paths both run.
  Sha256 h;
  std::string chunk(997, 'a');
  size_t left = 1'000'000;
  while (left > 0) {
    size_t n = std::min(left, chunk.size());
    h.update(chunk.data(), n);
    left -= n;
  }
  EXPECT_EQ(h.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, EverySplitPointGivesTheOneShotDigest) {
  // Lengths around the 55/56/64-byte padding boundaries are where streaming hashers break.
  for (size_t len : {0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 200}) {
    std::string msg(len, '\0');
    for (size_t i = 0; i < len; ++i) msg[i] = char(i * 7 + 3);
    const std::string whole = sha(msg);
    for (size_t cut = 0; cut <= len; ++cut) {
      Sha256 h;
      h.update(std::string_view(msg).substr(0, cut));
      h.update(std::string_view(msg).substr(cut));
      ASSERT_EQ(h.hex(), whole) << "len " << len << " cut " << cut;
    }
  }
}

TEST(Sha256, HexMidStreamLeavesTheHasherUsable) {
  Sha256 h;
  h.update("ab");
  EXPECT_EQ(h.hex(), sha("ab"));
  h.update("c");
  EXPECT_EQ(h.hex(), sha("abc"));
}

TEST(Sha256, FileMatchesSha256sum) {
  // A little over the 1 MiB read buffer, so the last read is a short one.
  fs::path file = framelift::test::temp_dir("sha256") / "random.bin";
  std::mt19937 rng(42);
  std::string data((1 << 20) + 12345, '\0');
  for (char& c : data) c = char(rng());
  std::ofstream(file, std::ios::binary).write(data.data(), std::streamsize(data.size()));

  std::string out;
  ASSERT_EQ(framelift::test::run_command("sha256sum '" + file.string() + "'", &out), 0) << out;
  EXPECT_EQ(sha256_file(file), out.substr(0, 64));
  EXPECT_EQ(sha(data), out.substr(0, 64));
}

TEST(Sha256, MissingFileNamesThePath) {
  try {
    sha256_file("/nonexistent/framelift-model.bin");
    FAIL() << "no error";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/framelift-model.bin: "), std::string::npos) << e.what();
  }
}
