#include "deploy/prepared_job.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/test_paths.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace framelift::deploy {
namespace {

TEST(PreparedJob, ReadsSpecAndPlan) {
  fs::path dir = test::temp_dir("deploy-job");
  std::ofstream(dir / "job.json") << R"({"input": "/data/in.mkv", "output": "/data/out/o.mkv", "pipeline": ""})";
  std::ofstream(dir / "plan.json") << R"({"segments": [[0, 12], [12, 12], [24, 5]]})";
  PreparedJob job = read_prepared_job(dir);
  EXPECT_EQ(job.input, "/data/in.mkv");
  EXPECT_EQ(job.output, "/data/out/o.mkv");
  EXPECT_EQ(job.segments, 3);
}

TEST(PreparedJob, RefusesAFolderThatWasNeverPrepared) {
  fs::path dir = test::temp_dir("deploy-job");
  try {
    read_prepared_job(dir);
    FAIL() << "no job.json accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("no job.json"), std::string::npos) << e.what();
  }
  std::ofstream(dir / "job.json") << "{not json";
  EXPECT_THROW(read_prepared_job(dir), Error);
}

TEST(PreparedJob, SharedFolderHoldsJobInputAndOutput) {
  PreparedJob job{"/data/in/clip.mkv", "/data/out/clip.mkv", 0};
  EXPECT_EQ(shared_folder("/data/jobs/clip", job), "/data");
  job.input = "https://example.com/clip.mkv";
  job.output = "/data/jobs/out.mkv";
  EXPECT_EQ(shared_folder("/data/jobs/clip", job), "/data/jobs");
  job.input = "relative.mkv";
  job.output = "/srv/out.mkv";
  EXPECT_EQ(shared_folder("/data/jobs/clip", job), "/");
}

}  // namespace
}  // namespace framelift::deploy
