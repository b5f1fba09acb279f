// `framelift plan`'s disk estimate against the real peak of the job it plans, lossless and lossy:
// the job is run twice, once as by default (its folder removed after assembly) while another
// thread sums the folder's files every millisecond, and once with --job-dir kept, whose folder
// after assembly holds what the default job held just before it removed its folder: every
// segment and the whole output, the peak (the poll must never see more). The plan, calibrated by
// a profile of the same pipeline and codec, must be within 25% of that peak.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <thread>

#include "cli/cli_runner.h"
#include "support/small_disk.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

const char* kPipeline = "resize:scale=2";

// The bundled real footage at half its size (a quick test on two cores), with a FLAC track
// besides: the output copies the audio too.
fs::path footage_with_audio(const fs::path& dir) {
  const fs::path out = dir / "in.mkv";
  EXPECT_EQ(run_command("ffmpeg -nostdin -v error -i " + shell_quote(media("real_megamind.mkv")) +
                        " -f lavfi -i sine=frequency=440:duration=2 -map 0:v -map 1:a -vf scale=360:264 -c:v ffv1"
                        " -c:a flac -shortest " + shell_quote(out)),
            0);
  return out;
}

nlohmann::json plan_json(const std::string& args) {
  auto r = framelift("--log-level warn plan --gpu l4 --json " + args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.exit_code == 0 ? nlohmann::json::parse(r.output.substr(r.output.find('{'))) : nlohmann::json::object();
}

// The most the folder held at once while `command` ran, polled every millisecond.
int64_t polled_peak(const fs::path& dir, const std::string& command) {
  std::atomic<bool> done{false};
  std::atomic<int64_t> peak{0};
  std::thread poll([&] {
    while (!done) {
      peak = std::max<int64_t>(peak, bytes_under(dir));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::string said;
  EXPECT_EQ(run_command(command, &said), 0) << said;
  done = true;
  poll.join();
  return peak;
}

class PlanDisk : public ::testing::TestWithParam<const char*> {};

TEST_P(PlanDisk, EstimateIsWithinAQuarterOfTheMeasuredPeak) {
  const std::string codec = GetParam();
  const fs::path dir = temp_dir("plan-disk-" + codec);
  const fs::path in = footage_with_audio(dir), manifest = dir / "profile.json";
  auto profiled = framelift("--log-level warn profile -i " + shell_quote(in) + " --pipeline " + kPipeline + " -c " + codec +
                            " -y -o " + shell_quote(manifest));
  ASSERT_EQ(profiled.exit_code, 0) << profiled.output;
  // 12-frame segments: four of them, each starting with a keyframe.
  const nlohmann::json plan = plan_json("-i " + shell_quote(in) + " --pipeline " + kPipeline + " -c " + codec +
                                        " --segment-seconds 0.5 --calibration " + shell_quote(manifest));
  ASSERT_TRUE(plan.contains("disk_bytes")) << plan.dump();
  EXPECT_EQ(plan["disk"]["bits_from"], manifest.string());
  const double estimate = plan["disk_bytes"].get<double>();
  // What the table would have said: for this cartoon footage, lossless, several times too much.
  const nlohmann::json table = plan_json("-i " + shell_quote(in) + " --pipeline " + kPipeline + " -c " + codec);
  const double measured_bits = plan["disk"]["bits_per_pixel"].get<double>(), table_bits = table["disk"]["bits_per_pixel"].get<double>();
  std::printf("%s: %.3f bits per pixel measured, %.3f in the table\n", codec.c_str(), measured_bits, table_bits);
  if (codec == "ffv1") {
    EXPECT_LT(measured_bits, table_bits / 3);
  }

  const std::string run = shell_quote(cli_path()) + " --log-level warn run -i " + shell_quote(in) + " --pipeline " + kPipeline +
                          " -c " + codec + " --segment-frames 12 --progress none -o ";
  fs::create_directories(dir / "default");
  const int64_t polled = polled_peak(dir / "default", run + shell_quote(dir / "default" / "out.mkv"));
  fs::create_directories(dir / "kept");
  ASSERT_EQ(run_command(run + shell_quote(dir / "kept" / "out.mkv") + " --job-dir " + shell_quote(dir / "kept" / "job")), 0);
  const int64_t peak = bytes_under(dir / "kept");
  const int64_t output = int64_t(fs::file_size(dir / "kept" / "out.mkv"));
  std::printf("%s: estimate %.0f, peak %lld (output %lld), polled %lld: %+.1f%%\n", codec.c_str(), estimate, (long long)peak,
              (long long)output, (long long)polled, 100 * (estimate - double(peak)) / double(peak));
  EXPECT_NEAR(estimate, double(peak), 0.25 * double(peak));
  EXPECT_NEAR(plan["disk"]["output_bytes"].get<double>(), double(output), 0.25 * double(output));
  // Nothing else (a temporary copy, a part file) ever made the folder hold more.
  EXPECT_LE(polled, peak + 64 * 1024);
  EXPECT_GT(polled, output) << "the poll saw the output and the segments at once";
}

INSTANTIATE_TEST_SUITE_P(Codecs, PlanDisk, ::testing::Values("ffv1", "libx264"));

// Without a calibration the table stands in, and says so.
TEST(PlanDiskTable, WithoutACalibrationTheTableIsNamed) {
  const nlohmann::json plan = plan_json("-i " + shell_quote(media("real_megamind.mkv")) + " --pipeline resize:scale=2 -c ffv1");
  EXPECT_EQ(plan["disk"]["bits_from"], "table");
  bool noted = false;
  for (const auto& n : plan["notes"]) noted |= n.get<std::string>().find("bits-per-pixel table") != std::string::npos;
  EXPECT_TRUE(noted) << plan["notes"].dump();
}

// A catalog model that is nowhere on this machine is installed first: its files count; and the
// output's folder's free space is what its file system says, with a note when the peak is more.
TEST(PlanDiskTable, ModelsToInstallAndTheOutputFoldersFreeSpace) {
  const fs::path no_models = temp_dir("no-models");
  std::ifstream catalog_file(source_dir() / "data" / "models.json");
  const nlohmann::json catalog = nlohmann::json::parse(catalog_file);
  double swinir = 0;
  for (const auto& m : catalog["models"])
    if (m["name"] == "swinir-m-x2-classical")
      for (const auto& f : m["files"]) swinir += f["size"].get<double>();
  ASSERT_GT(swinir, 0);
  const std::string env = "FRAMELIFT_MODELS=" + shell_quote(no_models) + " ";  // an empty model cache
  std::string said;
  ASSERT_EQ(run_command(env + shell_quote(cli_path()) + " --log-level warn plan --gpu l4 --json -i " +
                            shell_quote(media("real_megamind.mkv")) + " --pipeline upscale:model=swinir-m-x2-classical",
                        &said),
            0)
      << said;
  const nlohmann::json plan = nlohmann::json::parse(said.substr(said.find('{')));
  EXPECT_DOUBLE_EQ(plan["disk"]["model_bytes"].get<double>(), swinir);
  EXPECT_DOUBLE_EQ(plan["disk_bytes"].get<double>(),
                   plan["disk"]["segments_bytes"].get<double>() + plan["disk"]["output_bytes"].get<double>() + swinir);

  // Without -o, the folder the command runs in.
  const fs::path here = temp_dir("plan-here");
  ASSERT_EQ(run_command("cd " + shell_quote(here) + " && " + shell_quote(cli_path()) + " --log-level warn plan --gpu l4 --json -i " +
                            shell_quote(media("real_megamind.mkv")),
                        &said),
            0)
      << said;
  EXPECT_EQ(nlohmann::json::parse(said.substr(said.find('{')))["disk"]["folder"], here.string());

  SmallDisk disk("plan-free", 1 << 20);
  if (!disk.available()) GTEST_SKIP() << disk.why();
  const nlohmann::json tight = plan_json("-i " + shell_quote(media("real_megamind.mkv")) + " --pipeline resize:scale=2 -o " +
                                         shell_quote(disk.dir() / "out.mkv"));
  EXPECT_EQ(tight["disk"]["folder"], disk.dir().string());
  EXPECT_EQ(tight["disk"]["free_bytes"].get<double>(), double(1 << 20));
  EXPECT_EQ(tight["disk"]["fits"], tight["disk_bytes"].get<double>() <= double(1 << 20));
  auto text = framelift("--log-level warn plan --gpu l4 -i " + shell_quote(media("real_megamind.mkv")) +
                        " --pipeline resize:scale=4 -c ffv1 -o " + shell_quote(disk.dir() / "out.mkv"));
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("note: disk: " + disk.dir().string() + " has 1.0 MB free; the job needs about"), std::string::npos)
      << text.output;
}

}  // namespace
}  // namespace framelift::test
