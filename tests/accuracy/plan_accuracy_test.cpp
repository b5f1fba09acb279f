// The planner, calibrated with one resolution's `framelift profile` manifest, predicts another
// resolution's measured inference time and activation memory.
//
// Memory is deterministic and held within 25% everywhere. Time is two tests in one:
// - the default run (ctest -LE 'soak|timing') holds it within a factor of 2 either way. That still
//   fails on a wrong model: a power of the pixels where the work is linear, tiles or calls miscounted,
//   cloud start-up added to --local, bf16 calibrated against fp32;
// - the `plan_accuracy_timing` entry (label timing, FRAMELIFT_TIMING_STRICT=1) holds issue 8's
//   target, 25% (RIFE's 35%, see RifeX2). A target for time on a shared machine belongs with the
//   benchmarks, not in the default run: on CI machines two of three profiles of one side have read
//   50% slow while the other side's did not (Compact: 0.060, 0.064, 0.039 s/call at 160x120).
// These tests run alone (RUN_SERIAL): another test on the same two cores would slow one of the two
// measured runs and not the other.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cli/profile_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace framelift::test {
namespace {

bool strict_timing() {
  const char* v = std::getenv("FRAMELIFT_TIMING_STRICT");
  return v && std::string(v) == "1";
}

struct Predicted {
  double seconds_per_call = 0, activation_bytes = 0;
};

// The planner's estimate for this machine's CPU of `stage` (0-based among model stages).
Predicted predict(const fs::path& clip, const std::string& pipeline, const std::string& extra, const fs::path& calibration,
                  size_t stage) {
  auto r = framelift("--log-level warn plan -i " + shell_quote(clip) + " --pipeline '" + pipeline +
                     "' --local --gpu cpu --json -c ffv1 --calibration " + shell_quote(calibration) + " " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const json plan = json::parse(r.output.substr(r.output.find('{')));
  for (const auto& row : plan["rows"])
    if (row["gpu"] == "cpu" && row["stages"].size() > stage)
      return {row["stages"][stage]["seconds_per_frame"].get<double>() / row["stages"][stage]["calls_per_frame"].get<double>(),
              row["stages"][stage]["activation_bytes"].get<double>()};
  ADD_FAILURE() << "no cpu row in " << r.output;
  return {};
}

// Calibrate with one resolution's manifest, predict the other's measured figures, both ways. Time
// is compared per network call: how many calls a frame takes (tiles, interpolated frames, a cut
// held instead of morphed) is bookkeeping the planner does exactly (see TilerGeometry), the time
// of a call is its model.
void expect_predicted_within(const std::string& name, const std::string& pipeline, const std::string& extra, int frames,
                             std::pair<int, int> a, std::pair<int, int> b, double time_tolerance = 0.25) {
  const fs::path dir = temp_dir("profile-accuracy");
  struct Profiled {
    fs::path manifest;
    json m;
    double call_s() const { return m["stages"][0]["call_s"]; }
  };
  struct Side {
    fs::path clip;
    std::vector<Profiled> rounds;
    const Profiled& median() const { return rounds[rounds.size() / 2]; }
  } sides[2];
  // Each side is profiled three times, the two sides alternating, and each side's median profile is
  // kept. The median over calls inside one profile cannot remove a stretch of the shared machine that
  // lasts through the whole profile, in either direction: a slow stretch (two rounds kept the faster
  // profile, which once read +29%/-23% for RRDB on CI) or a quiet one that only one side saw (keeping
  // the fastest of three once paired a quiet 0.075 s/call with two rounds of 0.105 for RIFE on CI,
  // a 4.1x pixel-rate ratio where every other round read 3.1-3.3x). One odd round of a side, either
  // way, cannot decide its median.
  constexpr int kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    int k = 0;
    for (auto [w, h] : {a, b}) {
      Side& s = sides[k++];
      s.clip = footage(dir, w, h, 24);
      const fs::path manifest = dir / (name + "-" + std::to_string(w) + "-" + std::to_string(round) + ".json");
      Profiled p{manifest, profile(s.clip, pipeline, extra + " --frames " + std::to_string(frames) + " --stretches 2 --warmup 1", manifest)};
      std::printf("%s %dx%d round %d: %.3f s/call\n", name.c_str(), w, h, round + 1, p.call_s());
      s.rounds.push_back(std::move(p));
    }
  }
  for (Side& s : sides)
    std::sort(s.rounds.begin(), s.rounds.end(), [](const Profiled& x, const Profiled& y) { return x.call_s() < y.call_s(); });
  for (int i = 0; i < 2; ++i) {
    const Side &measured = sides[i], &calibrating = sides[1 - i];
    const Predicted p = predict(measured.clip, pipeline, extra, calibrating.median().manifest, 0);
    const json& m = measured.median().m;
    const json& st = m["stages"][0];
    const double seconds = st["call_s"];  // the median pixel rate x the mean call, as calibration reads
    const double bytes = st["peak_activation_bytes"];
    std::printf("%s %dx%d: inference %.3f s/call predicted %.3f (%+.0f%%); activations %.1f MiB predicted %.1f (%+.0f%%)\n",
                name.c_str(), m["input"]["width"].get<int>(), m["input"]["height"].get<int>(), seconds,
                p.seconds_per_call, 100 * (p.seconds_per_call / seconds - 1), bytes / 1048576, p.activation_bytes / 1048576,
                100 * (p.activation_bytes / bytes - 1));
    const double ratio = p.seconds_per_call / seconds;
    if (strict_timing())
      EXPECT_NEAR(ratio, 1.0, time_tolerance) << name << " time, calibrated at the other resolution";
    else
      EXPECT_LT(std::abs(std::log2(ratio)), 1.0) << name << " time off by more than 2x, calibrated at the other resolution";
    EXPECT_NEAR(p.activation_bytes / bytes, 1.0, 0.25) << name << " memory, calibrated at the other resolution";
  }
}

TEST(PlanAccuracy, CompactX2) {
  if (!have_weights()) GTEST_SKIP() << "npm weights missing (scripts/setup.sh)";
  expect_predicted_within("compact-x2", "upscale:model=realesr-animevideov3-x2", "", 4, {160, 120}, {320, 240});
}

TEST(PlanAccuracy, RrdbX4OnTiles) {
  if (!have_weights()) GTEST_SKIP() << "npm weights missing (scripts/setup.sh)";
  expect_predicted_within("rrdb-x4-tiles", "upscale:model=realesrgan-x4plus", "--tile 48", 2, {96, 72}, {160, 120});
}

TEST(PlanAccuracy, RifeX2) {
  if (!have_weights()) GTEST_SKIP() << "npm weights missing (scripts/setup.sh)";
  // RIFE's call time does not grow with the pixels alike on every machine: between 480x352 and
  // 960x704 it grew 2.8x and 3.1-3.3x on this machine's runs and 4.0-4.4x on a CI machine. The
  // planner's fixed cost per call (40 000 px of work) sits in the middle, which leaves about +-22%
  // at either end before noise; 35% is the bound it keeps (docs/planner.md).
  expect_predicted_within("rife-x2", "interpolate:model=rife-v4.6:factor=2", "", 5, {480, 352}, {960, 704}, 0.35);
}

}  // namespace
}  // namespace framelift::test
