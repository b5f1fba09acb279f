// download_file against a local server that misbehaves on request (tests/support/http_server.py):
// interrupted transfers, servers without Range support, HTTP errors, stalls and redirects.
#include "net/http_download.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "local_http_server.h"
#include "net/sha256.h"
#include "support/test_paths.h"
#include "util/error.h"

namespace fs = std::filesystem;
namespace ft = framelift::test;
using framelift::Error;
using framelift::ErrorKind;
using framelift::net::download_file;
using framelift::net::download_part_path;
using framelift::net::DownloadOptions;

namespace {

constexpr size_t kPayloadSize = 700'001;  // odd size: no chunk boundary lines up by accident

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const fs::path& path, const std::string& data) {
  std::ofstream(path, std::ios::binary).write(data.data(), std::streamsize(data.size()));
}

std::string sha(const std::string& data) {
  framelift::net::Sha256 h;
  h.update(data);
  return h.hex();
}

// The error download_file throws, or a test failure when it returns.
Error download_error(const std::string& url, const fs::path& dest, const DownloadOptions& options = {}) {
  try {
    download_file(url, dest, options);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "download of " << url << " did not fail";
  return Error(ErrorKind::Internal, "no error");
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class HttpDownload : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ft::temp_dir("http-root");
    out_ = ft::temp_dir("http-out");
    std::mt19937 rng(7);
    payload_.resize(kPayloadSize);
    for (char& c : payload_) c = char(rng());
    write_file(root_ / "model.bin", payload_);
    write_file(root_ / "empty.bin", "");
    dest_ = out_ / "model.bin";
    part_ = download_part_path(dest_);
  }

  fs::path root_, out_, dest_, part_;
  std::string payload_;
};

}  // namespace

TEST_F(HttpDownload, FullDownloadWithMatchingHash) {
  ft::LocalHttpServer server(root_);
  std::uint64_t last_done = 0, last_total = 0;
  DownloadOptions options;
  options.expected_sha256 = sha(payload_);
  options.on_progress = [&](std::uint64_t done, std::uint64_t total) {
    EXPECT_GE(done, last_done);
    last_done = done;
    last_total = total;
  };
  auto result = download_file(server.url("model.bin"), dest_, options);
  EXPECT_EQ(result.bytes, kPayloadSize);
  EXPECT_EQ(result.resumed_from, 0u);
  EXPECT_EQ(result.sha256, sha(payload_));
  EXPECT_EQ(read_file(dest_), payload_);
  EXPECT_FALSE(fs::exists(part_));
  EXPECT_EQ(last_done, kPayloadSize);
  EXPECT_EQ(last_total, kPayloadSize);
}

TEST_F(HttpDownload, InterruptedDownloadResumesWithRange) {
  ft::LocalHttpServer server(root_, {"--drop-after", "300000"});  // drops the first request only
  DownloadOptions options;
  options.expected_sha256 = sha(payload_);
  Error e = download_error(server.url("model.bin"), dest_, options);
  EXPECT_EQ(e.kind(), ErrorKind::Input);
  EXPECT_TRUE(contains(e.what(), server.url("model.bin"))) << e.what();
  EXPECT_TRUE(contains(e.what(), "run again to resume")) << e.what();
  EXPECT_FALSE(fs::exists(dest_));
  ASSERT_TRUE(fs::exists(part_));
  EXPECT_EQ(fs::file_size(part_), 300000u);

  auto result = download_file(server.url("model.bin"), dest_, options);
  EXPECT_EQ(result.resumed_from, 300000u);
  EXPECT_EQ(result.sha256, sha(payload_));
  EXPECT_EQ(read_file(dest_), payload_);
  EXPECT_FALSE(fs::exists(part_));
  EXPECT_TRUE(contains(server.request_log(), "GET /model.bin range=bytes=300000-")) << server.request_log();
}

TEST_F(HttpDownload, HashMismatchLeavesNoFileBehind) {
  ft::LocalHttpServer server(root_);
  DownloadOptions options;
  options.expected_sha256 = sha("something else");
  Error e = download_error(server.url("model.bin"), dest_, options);
  EXPECT_EQ(e.kind(), ErrorKind::Input);
  const std::string msg = e.what();
  EXPECT_TRUE(contains(msg, dest_.string() + ": SHA-256 mismatch")) << msg;
  EXPECT_TRUE(contains(msg, "expected " + sha("something else"))) << msg;
  EXPECT_TRUE(contains(msg, "got " + sha(payload_))) << msg;
  EXPECT_FALSE(fs::exists(dest_));
  EXPECT_FALSE(fs::exists(part_));
}

TEST_F(HttpDownload, NotFoundNamesUrlAndStatus) {
  ft::LocalHttpServer server(root_);
  Error e = download_error(server.url("missing.bin"), dest_);
  EXPECT_EQ(e.kind(), ErrorKind::Input);
  EXPECT_EQ(std::string(e.what()), server.url("missing.bin") + ": HTTP 404 Not Found");
  EXPECT_FALSE(fs::exists(dest_));
  EXPECT_FALSE(fs::exists(part_));  // the 404 page must not land in the .part
}

TEST_F(HttpDownload, ServerIgnoringRangeStartsOver) {
  // A .part whose bytes are wrong: only a real restart from byte 0 can give the right hash.
  write_file(part_, std::string(5000, 'x'));
  ft::LocalHttpServer server(root_, {"--ignore-range"});
  DownloadOptions options;
  options.expected_sha256 = sha(payload_);
  auto result = download_file(server.url("model.bin"), dest_, options);
  EXPECT_EQ(result.resumed_from, 0u);
  EXPECT_EQ(read_file(dest_), payload_);
  EXPECT_FALSE(fs::exists(part_));
  EXPECT_TRUE(contains(server.request_log(), "range=bytes=5000-")) << server.request_log();
}

TEST_F(HttpDownload, PartLongerThanTheFileRestarts) {
  // 416 Range Not Satisfiable: the .part cannot be a prefix of this file.
  write_file(part_, std::string(kPayloadSize + 10, 'x'));
  ft::LocalHttpServer server(root_);
  auto result = download_file(server.url("model.bin"), dest_);
  EXPECT_EQ(read_file(dest_), payload_);
  EXPECT_EQ(result.resumed_from, 0u);
  EXPECT_FALSE(fs::exists(part_));
}

TEST_F(HttpDownload, MissingDestinationFolder) {
  fs::path dest = out_ / "no-such-folder" / "model.bin";
  Error e = download_error("http://127.0.0.1:1/model.bin", dest);
  EXPECT_EQ(e.kind(), ErrorKind::Output);
  EXPECT_EQ(std::string(e.what()),
            dest.string() + ": folder " + (out_ / "no-such-folder").string() + " does not exist");
}

TEST_F(HttpDownload, FollowsRedirects) {
  ft::LocalHttpServer server(root_);
  download_file(server.url("redirect/model.bin"), dest_);
  EXPECT_EQ(read_file(dest_), payload_);
  EXPECT_TRUE(contains(server.request_log(), "GET /redirect/model.bin")) << server.request_log();
}

TEST_F(HttpDownload, EmptyFile) {
  ft::LocalHttpServer server(root_);
  auto result = download_file(server.url("empty.bin"), dest_);
  EXPECT_EQ(result.bytes, 0u);
  EXPECT_TRUE(fs::exists(dest_));
  EXPECT_EQ(fs::file_size(dest_), 0u);
}

TEST_F(HttpDownload, ReplacesAnExistingFile) {
  write_file(dest_, "old model");
  ft::LocalHttpServer server(root_);
  download_file(server.url("model.bin"), dest_);
  EXPECT_EQ(read_file(dest_), payload_);
}

TEST_F(HttpDownload, CancelKeepsThePartForResuming) {
  ft::LocalHttpServer server(root_);
  std::atomic<bool> cancel{false};
  DownloadOptions options;
  options.cancel = &cancel;
  options.on_progress = [&](std::uint64_t done, std::uint64_t) {
    if (done > 0) cancel = true;
  };
  Error e = download_error(server.url("model.bin"), dest_, options);
  EXPECT_EQ(e.kind(), ErrorKind::Interrupted);
  EXPECT_TRUE(contains(e.what(), "download cancelled")) << e.what();
  EXPECT_FALSE(fs::exists(dest_));
  ASSERT_TRUE(fs::exists(part_));
  const auto kept = fs::file_size(part_);
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, kPayloadSize);

  cancel = false;
  options.on_progress = nullptr;
  auto result = download_file(server.url("model.bin"), dest_, options);
  EXPECT_EQ(result.resumed_from, kept);
  EXPECT_EQ(read_file(dest_), payload_);
}

TEST_F(HttpDownload, StalledServerTimesOut) {
  // libcurl measures speed over a few seconds, so a small burst before the stall keeps the
  // average below 100 kB/s almost at once: the test takes about low_speed_time.
  ft::LocalHttpServer server(root_, {"--stall-after", "10000"});
  DownloadOptions options;
  options.low_speed_bytes_per_s = 100'000;
  options.low_speed_time = std::chrono::seconds(1);
  Error e = download_error(server.url("model.bin"), dest_, options);
  EXPECT_EQ(e.kind(), ErrorKind::Input);
  EXPECT_TRUE(contains(e.what(), "run again to resume")) << e.what();
  EXPECT_FALSE(fs::exists(dest_));
  EXPECT_EQ(fs::file_size(part_), 10000u);
}

TEST_F(HttpDownload, ConnectionRefusedNamesTheUrl) {
  Error e = download_error("http://127.0.0.1:1/model.bin", dest_);
  EXPECT_EQ(e.kind(), ErrorKind::Input);
  EXPECT_TRUE(contains(e.what(), "http://127.0.0.1:1/model.bin: download failed (")) << e.what();
  EXPECT_FALSE(fs::exists(part_));
}

TEST_F(HttpDownload, MalformedExpectedHashIsAUsageError) {
  DownloadOptions options;
  options.expected_sha256 = "abc";
  Error e = download_error("http://127.0.0.1:1/model.bin", dest_, options);
  EXPECT_EQ(e.kind(), ErrorKind::Usage);
  EXPECT_FALSE(fs::exists(part_));
}
