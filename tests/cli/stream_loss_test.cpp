// Issue 29, item 1: every way found for an output to lose an input stream, or some of its
// packets, without a word, each closed and checked here on real clips with the real CLI:
//   (a) the input replaced between the job's plan and its assembly: refused, exit 3;
//   (b) other streams that yield another number of packets at assembly than when planned: exit 3;
//   (c) a stream that starts mid-file (MPEG-TS): refused with a remux hint, in a job and --no-job;
//   (d) the last defence: the written output is read back before it takes its final name; a
//       stream lost on the way (a fault hook leaves it out) is exit 4 naming the output and the
//       stream, nothing under the final name, the segments kept, and a rerun completes it.
// The packets of the outputs are read by ffmpeg (framemd5, tests/support/media_check.h), never by
// framelift.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <future>
#include <thread>

#include "cli/cli_runner.h"
#include "support/media_check.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;

// 1 s of 320x180 H.264 with AAC (a sine at `hz`) and two SRT subtitles, in Matroska: the
// report's input.
fs::path av_clip(const fs::path& dir, const std::string& name, int hz) {
  const fs::path srt = dir / (name + ".srt"), clip = dir / (name + ".mkv");
  std::ofstream(srt) << "1\n00:00:00,100 --> 00:00:00,600\nfirst line\n\n2\n00:00:00,600 --> 00:00:00,950\nsecond\n";
  std::string out;
  const int rc = run_command(
      "ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=320x180:rate=24 -f lavfi -i sine=frequency=" + std::to_string(hz) +
          ":sample_rate=48000 -i " + shell_quote(srt) + " -map 0:v -map 1:a -map 2:s -t 1 -c:v libx264 -preset ultrafast "
          "-g 12 -c:a aac -b:a 64k -c:s srt " + shell_quote(clip),
      &out);
  EXPECT_EQ(rc, 0) << out;
  return clip;
}

std::vector<std::string> md5s(const fs::path& file, const std::string& map) {
  std::vector<std::string> out;
  for (const FrameHash& h : framemd5(file, map, true)) out.push_back(h.md5);
  return out;
}

// plan.json's seal as the job folder's files carry it: SHA-256 of the object's dump without it.
void reseal(nlohmann::json& object, const fs::path& scratch) {
  object.erase("seal");
  std::ofstream(scratch) << object.dump();
  std::string out;
  ASSERT_EQ(run_command("sha256sum " + shell_quote(scratch), &out), 0) << out;
  object["seal"] = out.substr(0, 64);
}

CliResult framelift_with(const std::string& env, const std::string& args) {
  CliResult r;
  r.exit_code = run_command(env + " '" + cli_path().string() + "' " + args, &r.output);
  return r;
}

// Neither the output nor its temporary file (".NAME.partial...") in the output's folder.
void expect_nothing_at(const fs::path& out) {
  EXPECT_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(out.parent_path()))
    EXPECT_EQ(e.path().filename().string().find(out.filename().string() + ".partial"), std::string::npos) << e.path();
}

constexpr const char* kChain = "deinterlace,denoise:method=hqdn3d,resize:scale=0.5,interpolate:factor=2";

std::string run_args(const fs::path& in, const fs::path& out, const std::string& extra = "") {
  return "run -i " + shell_quote(in) + " -o " + shell_quote(out) + " --pipeline " + shell_quote(kChain) +
         " -c libx264 --preset ultrafast --progress none " + extra;
}

// (a) The input is replaced by another file (same video, other audio) while the job's segments
// are being made, after plan.json was written: the job's own run must not assemble the new audio
// with the old plan. Before the fix it did, exit 0.
TEST(StreamLoss, AnInputReplacedAfterThePlanIsRefusedAtAssembly) {
  const fs::path dir = temp_dir("loss-replaced");
  const fs::path in = av_clip(dir, "in", 440), other = av_clip(dir, "other", 880);
  const fs::path out = dir / "out.mkv", job = dir / "job";
  auto run = std::async(std::launch::async, [&] {
    return framelift(run_args(in, out, "--segment-frames 6 --job-dir " + shell_quote(job)));
  });
  // plan.json comes before any segment; the RIFE segments take seconds after it.
  while (!fs::exists(job / "plan.json") && run.wait_for(std::chrono::milliseconds(2)) != std::future_status::ready) {
  }
  ASSERT_TRUE(fs::exists(job / "plan.json"));
  fs::rename(other, in);
  const CliResult r = run.get();
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("changed since the job was planned"), std::string::npos) << r.output;
  expect_nothing_at(out);
}

// (b) At assembly the input's other streams yield another number of packets than the plan
// counted (a file rewritten in its middle, which the head+tail fingerprint does not see, or a
// read that ends early). Played here by raising the plan's count by one, sealed again: the
// output must not be written, and with the count put back it is, complete.
TEST(StreamLoss, OtherStreamsThatYieldOtherPacketsThanPlannedAreRefused) {
  const fs::path dir = temp_dir("loss-count");
  const fs::path in = av_clip(dir, "in", 440);
  const fs::path out = dir / "out.mkv", job = dir / "job";
  CliResult r = framelift(run_args(in, out, "--no-assemble --job-dir " + shell_quote(job)));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path plan_file = job / "plan.json";
  nlohmann::json plan = nlohmann::json::parse(std::ifstream(plan_file));
  ASSERT_TRUE(plan.contains("other_packets")) << plan.dump();
  // The plan's own count of the audio stream, checked against ffmpeg's reading of the input.
  const std::vector<std::string> audio = md5s(in, "0:a"), subtitles = md5s(in, "0:s");
  ASSERT_EQ(plan["other_packets"]["1"].get<int64_t>(), int64_t(audio.size()));
  ASSERT_EQ(plan["other_packets"]["2"].get<int64_t>(), int64_t(subtitles.size()));
  const nlohmann::json original = plan;
  nlohmann::json same = plan;
  reseal(same, dir / "plan.dump");
  ASSERT_EQ(same, original);  // the test's seal is the job's own
  plan["other_packets"]["1"] = audio.size() + 1;
  reseal(plan, dir / "plan.dump");
  std::ofstream(plan_file) << plan.dump();
  r = framelift("assemble --job-dir " + shell_quote(job));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("stream #1 yields " + std::to_string(audio.size()) + " packets now, " +
                          std::to_string(audio.size() + 1) + " when the job was planned"),
            std::string::npos)
      << r.output;
  expect_nothing_at(out);

  std::ofstream(plan_file) << original.dump();
  r = framelift("assemble --job-dir " + shell_quote(job));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(md5s(out, "0:a"), audio);
  EXPECT_EQ(md5s(out, "0:s"), subtitles);
}

// (c) An MPEG-TS whose audio appears only mid-file (8 s of video alone, then 1 s with AAC, then
// 30 s of video alone again, joined with cat): the demuxer lists only the video when it opens,
// and ffmpeg itself reports "New audio stream" later. Refused by the job's plan and by one pass,
// naming the stream and how to remux; the remux the line suggests then keeps the audio.
TEST(StreamLoss, AStreamThatStartsMidFileIsRefusedWithARemuxHint) {
  const fs::path dir = temp_dir("loss-midfile");
  std::string log;
  const std::string base = "ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=64x48:rate=24 ";
  ASSERT_EQ(run_command(base + "-t 8 -c:v libx264 -preset ultrafast -g 12 -bf 0 " + shell_quote(dir / "a.ts"), &log), 0) << log;
  ASSERT_EQ(run_command(base + "-f lavfi -i sine=frequency=440:sample_rate=48000 -t 1 -c:v libx264 -preset ultrafast -g 12 "
                               "-bf 0 -c:a aac -b:a 64k -output_ts_offset 8 " + shell_quote(dir / "b.ts"), &log), 0) << log;
  ASSERT_EQ(run_command(base + "-t 30 -c:v libx264 -preset ultrafast -g 12 -bf 0 -output_ts_offset 9 " +
                               shell_quote(dir / "c.ts"), &log), 0) << log;
  const fs::path in = dir / "mid.ts";
  ASSERT_EQ(run_command("cat " + shell_quote(dir / "a.ts") + " " + shell_quote(dir / "b.ts") + " " + shell_quote(dir / "c.ts") +
                        " > " + shell_quote(in), &log), 0);
  // The input as the test's own reader sees it: the audio is not listed at the start.
  ASSERT_EQ(ffprobe(in)["streams"].size(), 1u);

  for (const std::string mode : {"", "--no-job"}) {
    SCOPED_TRACE(mode);
    const fs::path out = dir / "out.mkv";
    const CliResult r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) +
                                  " --pipeline resize:scale=2 -c libx264 --preset ultrafast --progress none " + mode);
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_NE(r.output.find("audio stream #1"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("starts mid-file"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("ffmpeg -probesize 2G -analyzeduration 2G -i INPUT -map 0 -c copy"), std::string::npos) << r.output;
    expect_nothing_at(out);
  }

  // The suggested remux lists the audio from the start; the run then keeps all of its packets.
  const fs::path fixed = dir / "fixed.mkv", out = dir / "fixed-out.mkv";
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y -probesize 2G -analyzeduration 2G -i " + shell_quote(in) +
                        " -map 0 -c copy " + shell_quote(fixed), &log), 0) << log;
  const std::vector<std::string> fixed_audio = md5s(fixed, "0:a");
  ASSERT_GE(fixed_audio.size(), 40u);
  const CliResult r = framelift("run -i " + shell_quote(fixed) + " -o " + shell_quote(out) +
                                " --pipeline resize:scale=2 -c libx264 --preset ultrafast --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(md5s(out, "0:a"), fixed_audio);
}

// (d) The audio stream is lost on the way into the output (FRAMELIFT_FAIL_AT=lose-stream:1 leaves
// the first copied stream out, as the report's output was): the read-back of the written file
// refuses it, exit 4, one line naming the output and the stream; nothing under the final name;
// the finished segments are kept, and the same command without the fault resumes from them and
// writes an output with every stream of the input, packet for packet.
TEST(StreamLoss, AnOutputThatLostAStreamIsNeverRenamedIntoPlace) {
  const fs::path dir = temp_dir("loss-readback");
  const fs::path in = av_clip(dir, "in", 440);
  const fs::path out = dir / "out.mkv";
  const fs::path job = dir / "out.mkv.framelift-job";
  const std::vector<std::string> audio = md5s(in, "0:a"), subtitles = md5s(in, "0:s");
  ASSERT_GE(audio.size(), 40u);
  CliResult r = framelift_with("FRAMELIFT_FAIL_AT=lose-stream:1", run_args(in, out, "--segment-frames 12"));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find(out.string() + ": the audio stream #1 of the input (aac) is missing from the written file"),
            std::string::npos)
      << r.output;
  expect_nothing_at(out);
  ASSERT_TRUE(fs::exists(job / "segments")) << r.output;
  EXPECT_FALSE(fs::is_empty(job / "segments"));

  r = framelift(run_args(in, out, "--segment-frames 12"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("already done"), std::string::npos) << r.output;  // resumed, not redone
  const nlohmann::json probe = ffprobe(out);
  ASSERT_EQ(probe["streams"].size(), 3u) << probe.dump();
  EXPECT_EQ(md5s(out, "0:a"), audio);
  EXPECT_EQ(md5s(out, "0:s"), subtitles);
  EXPECT_EQ(count_frames(out), 48);
}

// (d) in one pass (--no-job) the output is read back too: a complete one passes, with every
// stream and packet of the input (the check must not refuse good outputs).
TEST(StreamLoss, OnePassOutputsPassTheReadBackWithEveryStream) {
  const fs::path dir = temp_dir("loss-onepass");
  const fs::path in = av_clip(dir, "in", 440);
  const fs::path out = dir / "out.mkv";
  const CliResult r = framelift(run_args(in, out, "--no-job"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(md5s(out, "0:a"), md5s(in, "0:a"));
  EXPECT_EQ(md5s(out, "0:s"), md5s(in, "0:s"));
}

}  // namespace
}  // namespace framelift::test
