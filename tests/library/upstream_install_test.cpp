// Installing from upstream URLs, against tests/support/http_server.py serving real model files:
// cut connections resume, a wrong checksum installs nothing, release .zip files are searched.
#include "library/upstream_install.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>

#include "library/install.h"
#include "library_fixtures.h"
#include "net/local_http_server.h"
#include "net/sha256.h"
#include "util/error.h"

namespace fs = std::filesystem;
using namespace framelift;
using nlohmann::json;

namespace {

const char* kModel = "realesr-animevideov3-x2";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// data/models.json's entry for kModel, with its upstream sources replaced by `upstream`.
fs::path write_catalog(const fs::path& dir, const json& upstream) {
  std::ifstream in(test::source_dir() / "data" / "models.json");
  json catalog = json::parse(in);
  json models = json::array();
  for (json m : catalog["models"]) {
    if (m["name"] != kModel) continue;
    json sources = json::array({m["sources"][0]});  // the npm source, unused: no tarball here
    sources.push_back(upstream);
    m["sources"] = sources;
    models.push_back(m);
  }
  catalog["models"] = models;
  const fs::path file = dir / "catalog.json";
  std::ofstream(file) << catalog.dump(2);
  return file;
}

class UpstreamInstall : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(test::real_esrgan_models())) GTEST_SKIP() << "run scripts/setup.sh";
    dir_ = test::temp_dir("upstream");
    served_ = dir_ / "www";
    fs::create_directories(served_);
    for (const char* ext : {".param", ".bin"})
      fs::copy_file(test::real_esrgan_models() / (std::string(kModel) + ext), served_ / (std::string(kModel) + ext));
    cache_ = std::make_unique<library::ModelCache>(dir_ / "models");
  }

  json per_file_urls(const test::LocalHttpServer& server) const {
    return {{"type", "upstream"},
            {"format", "ncnn"},
            {"urls", {{std::string(kModel) + ".param", server.url(std::string(kModel) + ".param")},
                      {std::string(kModel) + ".bin", server.url(std::string(kModel) + ".bin")}}}};
  }

  library::Catalog catalog_with(const json& upstream) { return library::Catalog::load(write_catalog(dir_, upstream)); }

  fs::path dir_, served_;
  std::unique_ptr<library::ModelCache> cache_;
};

}  // namespace

TEST_F(UpstreamInstall, CutConnectionResumes) {
  // The .param arrives whole (smaller than the cut), the .bin is cut at 300000 bytes.
  test::LocalHttpServer server(served_, {"--drop-after", "300000", "--drop-requests", "2"});
  const library::Catalog catalog = catalog_with(per_file_urls(server));
  library::InstallOptions options;
  options.tarball_dir = dir_ / "no-tarballs";
  auto report = library::install_models(*cache_, catalog, {kModel}, options);
  for (auto& p : report.problems) ADD_FAILURE() << p.message;
  EXPECT_TRUE(contains(server.request_log(), "GET /realesr-animevideov3-x2.bin range=bytes=300000-")) << server.request_log();
  const auto installed = cache_->find(kModel);
  ASSERT_TRUE(installed);
  EXPECT_TRUE(cache_->verify(*installed).empty());
  EXPECT_EQ(net::sha256_file(installed->dir / "realesr-animevideov3-x2.bin"), net::sha256_file(served_ / "realesr-animevideov3-x2.bin"));
  EXPECT_TRUE(contains(installed->source, server.url("realesr-animevideov3-x2.bin")));
}

TEST_F(UpstreamInstall, InterruptedRunInstallsNothingAndTheNextRunResumes) {
  test::LocalHttpServer server(served_, {"--drop-after", "400000", "--drop-requests", "2"});
  const library::Catalog catalog = catalog_with(per_file_urls(server));
  {
    library::UpstreamInstaller one_try(*cache_, {}, 1);
    try {
      one_try.install(*catalog.find(kModel));
      FAIL() << "a cut download was installed";
    } catch (const Error& e) {
      EXPECT_TRUE(contains(e.what(), "run again to resume")) << e.what();
    }
  }
  EXPECT_TRUE(cache_->list().empty());
  EXPECT_FALSE(cache_->find(kModel));
  library::UpstreamInstaller next_run(*cache_, {}, 1);
  next_run.install(*catalog.find(kModel));
  EXPECT_TRUE(contains(server.request_log(), "range=bytes=400000-")) << server.request_log();
  EXPECT_TRUE(cache_->verify(*cache_->find(kModel)).empty());
}

TEST_F(UpstreamInstall, ChecksumMismatchInstallsNothing) {
  test::flip_byte(served_ / "realesr-animevideov3-x2.bin", 500000);
  test::LocalHttpServer server(served_);
  const library::Catalog catalog = catalog_with(per_file_urls(server));
  library::InstallOptions options;
  options.tarball_dir = dir_ / "no-tarballs";
  auto report = library::install_models(*cache_, catalog, {kModel}, options);
  ASSERT_EQ(report.problems.size(), 1u);
  EXPECT_TRUE(contains(report.problems[0].message, "SHA-256 mismatch")) << report.problems[0].message;
  EXPECT_TRUE(cache_->list().empty());
  // Nothing to resume from: the wrong bytes were discarded.
  EXPECT_TRUE(fs::is_empty(cache_->downloads_dir()));
}

TEST_F(UpstreamInstall, ReleaseZipIsSearchedByNameAndHash) {
  // A release archive holding the files in sub-folders, with a same-named file of other bytes first.
  const std::string script =
      "import sys, zipfile\n"
      "z = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)\n"
      "z.write(sys.argv[2] + '/realesr-animevideov3-x3.param', 'decoy/realesr-animevideov3-x2.param')\n"
      "z.write(sys.argv[2] + '/realesr-animevideov3-x2.param', 'release/models/realesr-animevideov3-x2.param')\n"
      "z.write(sys.argv[2] + '/realesr-animevideov3-x2.bin', 'release/models/realesr-animevideov3-x2.bin')\n";
  std::ofstream(dir_ / "zip.py") << script;
  ASSERT_EQ(test::run_command("python3 '" + (dir_ / "zip.py").string() + "' '" + (served_ / "release.zip").string() + "' '" +
                              test::real_esrgan_models().string() + "'"),
            0);
  test::LocalHttpServer server(served_);
  const library::Catalog catalog = catalog_with({{"type", "upstream"}, {"format", "ncnn"}, {"url", server.url("release.zip")}});
  library::InstallOptions options;
  options.tarball_dir = dir_ / "no-tarballs";
  auto report = library::install_models(*cache_, catalog, {kModel}, options);
  for (auto& p : report.problems) ADD_FAILURE() << p.message;
  const auto installed = cache_->find(kModel);
  ASSERT_TRUE(installed);
  EXPECT_TRUE(cache_->verify(*installed).empty());
  EXPECT_TRUE(fs::is_empty(cache_->downloads_dir()));  // the archive is gone once extracted

  // A URL that is not there: one line naming it.
  cache_->remove(kModel);
  const library::Catalog missing = catalog_with({{"type", "upstream"}, {"format", "ncnn"}, {"url", server.url("gone.zip")}});
  auto failed = library::install_models(*cache_, missing, {kModel}, options);
  ASSERT_EQ(failed.problems.size(), 1u);
  EXPECT_TRUE(contains(failed.problems[0].message, server.url("gone.zip") + ": HTTP 404")) << failed.problems[0].message;
}

// The cache's disk fills while a model downloads (a 256 KiB file size limit stands in for it, as
// tests/cli/bad_input_test.cpp does): that is the cache's Output error, which no other source
// could avoid, not the failed download (Input) that every source in turn would then report.
TEST_F(UpstreamInstall, ADiskThatFillsDuringTheDownloadIsTheCachesError) {
  test::LocalHttpServer server(served_);  // started before the limit: it serves whole files
  const library::Catalog catalog = catalog_with(per_file_urls(server));
  library::InstallOptions options;
  options.tarball_dir = dir_ / "no-tarballs";
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &before), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = before;
  small.rlim_cur = 256 * 1024;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  auto report = library::install_models(*cache_, catalog, {kModel}, options);
  setrlimit(RLIMIT_FSIZE, &before);
  std::signal(SIGXFSZ, old_handler);
  ASSERT_EQ(report.problems.size(), 1u);
  EXPECT_EQ(report.problems[0].kind, ErrorKind::Output) << report.problems[0].message;
  EXPECT_TRUE(contains(report.problems[0].message, "realesr-animevideov3-x2.bin.part: cannot write (File too large)"))
      << report.problems[0].message;
  EXPECT_TRUE(cache_->list().empty());
  for (const auto& e : fs::directory_iterator(cache_->root()))
    EXPECT_NE(e.path().filename().string().rfind(".staging-", 0), 0u) << e.path();
}
