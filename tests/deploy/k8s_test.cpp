#include "deploy/k8s.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "deploy_test_util.h"
#include "deploy/quote.h"
#include "support/test_paths.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace framelift::deploy {
namespace {

K8sOptions options(const fs::path& job_dir = "/data/jobs/clip", int workers = 4) {
  K8sOptions o;
  o.job_dir = job_dir;
  o.workers = workers;
  o.image = "registry.example/framelift:0.1";
  o.pvc = "media";
  o.mount_path = "/data";
  return o;
}

bool have_python_yaml() { return test::run_command("python3 -c 'import yaml'") == 0; }

// The documents of a YAML file as JSON, read by PyYAML: a parser that owes us nothing.
nlohmann::json parse_yaml(const std::string& text) {
  fs::path file = test::temp_dir("deploy-k8s") / "doc.yaml";
  std::ofstream(file) << text;
  std::string out;
  int rc = test::run_command("python3 -c 'import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))' " +
                                 shell_quote(file.string()),
                             &out);
  EXPECT_EQ(rc, 0) << out;
  return rc == 0 ? nlohmann::json::parse(out) : nlohmann::json::array();
}

TEST(K8sFiles, Paths) {
  auto files = k8s_files(options());
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].path, "/data/jobs/clip/deploy/k8s/job.yaml");
  EXPECT_EQ(files[1].path, "/data/jobs/clip/deploy/k8s/assemble.yaml");
}

// Structural checks that need no YAML parser.
TEST(K8sFiles, WorkerJobText) {
  std::string job = test::content_of(k8s_files(options()), "job.yaml");
  for (const char* line : {"kind: Job\n", "  completionMode: Indexed\n", "  completions: 4\n", "  parallelism: 4\n",
                           "  backoffLimitPerIndex: 3\n", "      restartPolicy: Never\n", "      terminationGracePeriodSeconds: 60\n",
                           "\"$(JOB_COMPLETION_INDEX)/4\"", "\"nvidia.com/gpu\": 1\n", "claimName: \"media\"\n",
                           "# Apply both files", "kubectl apply -f /data/jobs/clip/deploy/k8s/job.yaml"})
    EXPECT_NE(job.find(line), std::string::npos) << line << " missing from\n" << job;
  EXPECT_EQ(job.find('\t'), std::string::npos) << "YAML forbids tabs in indentation";
}

TEST(K8sFiles, ParsesAsIndexedJob) {
  if (!have_python_yaml()) GTEST_SKIP() << "python3-yaml is not installed: the YAML is not parsed (apt-get install python3-yaml)";
  K8sOptions o = options("/data/jobs/it's a \"clip\" $(x) é", 3);
  o.namespace_name = "render";
  o.cpu = "8";
  o.memory = "32Gi";
  o.name = "clip";
  auto files = k8s_files(o);
  nlohmann::json docs = parse_yaml(test::content_of(files, "job.yaml"));
  ASSERT_EQ(docs.size(), 1u);
  const nlohmann::json& job = docs[0];
  EXPECT_EQ(job["apiVersion"], "batch/v1");
  EXPECT_EQ(job["kind"], "Job");
  EXPECT_EQ(job["metadata"]["name"], "clip");
  EXPECT_EQ(job["metadata"]["namespace"], "render");
  const nlohmann::json& spec = job["spec"];
  EXPECT_EQ(spec["completionMode"], "Indexed");
  EXPECT_EQ(spec["completions"], 3);
  EXPECT_EQ(spec["parallelism"], 3);
  EXPECT_EQ(spec["backoffLimitPerIndex"], 3);
  EXPECT_EQ(spec["template"]["metadata"]["labels"]["framelift.io/job"], "clip");
  const nlohmann::json& pod = spec["template"]["spec"];
  EXPECT_EQ(pod["restartPolicy"], "Never");
  EXPECT_EQ(pod["terminationGracePeriodSeconds"], 60);
  EXPECT_EQ(pod["volumes"][0]["persistentVolumeClaim"]["claimName"], "media");
  ASSERT_EQ(pod["containers"].size(), 1u);
  const nlohmann::json& c = pod["containers"][0];
  EXPECT_EQ(c["image"], o.image);
  EXPECT_EQ(c["command"], nlohmann::json::array({"framelift"}));
  EXPECT_EQ(c["args"], nlohmann::json::array({"resume", "--job-dir", o.job_dir.string(), "--shard", "$(JOB_COMPLETION_INDEX)/3",
                                              "--no-assemble"}));
  EXPECT_EQ(c["volumeMounts"][0]["name"], pod["volumes"][0]["name"]);
  EXPECT_EQ(c["volumeMounts"][0]["mountPath"], "/data");
  EXPECT_EQ(c["resources"]["limits"]["nvidia.com/gpu"], 1);
  EXPECT_EQ(c["resources"]["limits"]["cpu"], "8");
  EXPECT_EQ(c["resources"]["requests"]["memory"], "32Gi");

  nlohmann::json assemble = parse_yaml(test::content_of(files, "assemble.yaml"));
  ASSERT_EQ(assemble.size(), 1u);
  EXPECT_EQ(assemble[0]["metadata"]["name"], "clip-assemble");
  EXPECT_EQ(assemble[0]["spec"].count("completionMode"), 0u);
  const nlohmann::json& ac = assemble[0]["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(ac["args"], nlohmann::json::array({"assemble", "--job-dir", o.job_dir.string(), "--wait", "604800"}));
  EXPECT_EQ(ac.count("resources"), 0u) << "the assembly needs no GPU";
  EXPECT_EQ(ac["volumeMounts"][0]["mountPath"], "/data");
}

TEST(K8sFiles, NoGpuNoResources) {
  if (!have_python_yaml()) GTEST_SKIP() << "python3-yaml is not installed: the YAML is not parsed (apt-get install python3-yaml)";
  K8sOptions o = options();
  o.gpus = 0;
  nlohmann::json job = parse_yaml(test::content_of(k8s_files(o), "job.yaml"));
  ASSERT_EQ(job.size(), 1u);
  EXPECT_EQ(job[0]["spec"]["template"]["spec"]["containers"][0].count("resources"), 0u);
  EXPECT_EQ(job[0]["metadata"].count("namespace"), 0u);
  EXPECT_EQ(job[0]["metadata"]["name"], "framelift-clip");
}

TEST(K8sFiles, RefusesBadOptions) {
  K8sOptions o = options("/elsewhere/job");
  EXPECT_THROW(k8s_files(o), Error) << "job folder outside the mount";
  o = options();
  o.image = "";
  EXPECT_THROW(k8s_files(o), Error);
  o = options();
  o.pvc = "";
  EXPECT_THROW(k8s_files(o), Error);
  o = options();
  o.mount_path = "data";
  EXPECT_THROW(k8s_files(o), Error);
  o = options();
  o.name = "Bad_Name";
  EXPECT_THROW(k8s_files(o), Error);
  o = options();
  o.workers = 0;
  EXPECT_THROW(k8s_files(o), Error);
}

TEST(DeployFiles, WritesAtomicallyWithModes) {
  fs::path dir = test::temp_dir("deploy-files");
  write_deploy_files({{dir / "a" / "b.sh", "echo hi\n", true}, {dir / "a" / "c.yaml", "x: 1\n", false}});
  EXPECT_EQ(test::read_text(dir / "a" / "b.sh"), "echo hi\n");
  EXPECT_NE(fs::status(dir / "a" / "b.sh").permissions() & fs::perms::owner_exec, fs::perms::none);
  EXPECT_EQ(fs::status(dir / "a" / "c.yaml").permissions() & fs::perms::owner_exec, fs::perms::none);
}

}  // namespace
}  // namespace framelift::deploy
