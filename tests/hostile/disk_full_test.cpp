// A job on a disk too small for it, on a real tmpfs (the kernel's own ENOSPC): the disk fills
// in the middle of a segment, at a journal commit (the disk is roomy there, and the record's
// write fails with ENOSPC by fault injection, FRAMELIFT_FAIL_AT=write:4:28) and in the middle of
// the assembly (and at the job's first write, job.json). Each time: exit 4 and one error line that says the disk was full and how much
// more the job needs (within 25% of what the job really went on to take), nothing under the
// output's name, and after the disk is grown the same command resumes to the frames of a run that
// was never short. A job that starts short says so first, in one warning line naming the folder.
#include <gtest/gtest.h>

#include <sys/statvfs.h>

#include <regex>

#include "cli/cli_runner.h"
#include "support/media_check.h"
#include "support/small_disk.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

std::vector<std::string> lines_starting(const std::string& output, const std::string& prefix) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < output.size()) {
    const size_t end = std::min(output.find('\n', at), output.size());
    if (output.compare(at, prefix.size(), prefix) == 0) lines.push_back(output.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

// "12.4 MB" after `lead` in `line`, in bytes; -1 when the line has none.
double amount_after(const std::string& line, const std::string& lead) {
  const std::regex amount(lead + " ([0-9.]+) (kB|MB|GB)");
  std::smatch m;
  if (!std::regex_search(line, m, amount)) return -1;
  const double unit = m[2] == "kB" ? 1e3 : m[2] == "MB" ? 1e6 : 1e9;
  return std::stod(m[1]) * unit;
}

int64_t free_on(const fs::path& dir) {
  struct statvfs s {};
  return ::statvfs(dir.c_str(), &s) == 0 ? int64_t(s.f_bavail) * int64_t(s.f_frsize) : -1;
}

std::vector<std::string> frames_of(const fs::path& file) {
  std::vector<std::string> md5s;
  for (const FrameHash& h : framemd5(file, "0:v", false)) md5s.push_back(h.md5);
  return md5s;
}

// The job every test runs: 24 frames of real footage, doubled in size, lossless, in four
// segments; and what it takes, measured on an ordinary folder with its job folder kept.
struct Job {
  fs::path input;
  int64_t segment = 0, segments = 0, output = 0, peak = 0;
  std::vector<std::string> frames;

  std::string command(const fs::path& out) const {
    return shell_quote(cli_path()) + " --log-level warn run -i " + shell_quote(input) + " -o " + shell_quote(out) +
           " --pipeline resize:scale=2 -c ffv1 --segment-frames 6 --progress none";
  }
};

const Job& the_job() {
  static const Job job = [] {
    Job j;
    const fs::path dir = temp_dir("disk-full-reference");
    j.input = dir / "in.mkv";
    EXPECT_EQ(run_command("ffmpeg -nostdin -v error -i " + shell_quote(media("real_megamind.mkv")) +
                          " -frames:v 24 -vf scale=360:264 -c:v ffv1 " + shell_quote(j.input)),
              0);
    EXPECT_EQ(run_command(j.command(dir / "out.mkv") + " --job-dir " + shell_quote(dir / "job")), 0);
    j.segment = int64_t(fs::file_size(dir / "job" / "segments" / "000001.mkv"));
    j.segments = bytes_under(dir / "job" / "segments");
    j.output = int64_t(fs::file_size(dir / "out.mkv"));
    j.peak = bytes_under(dir / "job") + j.output;
    j.frames = frames_of(dir / "out.mkv");
    EXPECT_EQ(j.frames.size(), 24u);
    return j;
  }();
  return job;
}

// The run that met the full disk: its one error line, checked; returns that line.
std::string expect_stopped_for_disk(const Job& job, const SmallDisk& disk, int rc, const std::string& said) {
  EXPECT_EQ(rc, 4) << said;
  const std::vector<std::string> errors = lines_starting(said, "error: ");
  EXPECT_EQ(errors.size(), 1u) << said;
  const std::string line = errors.empty() ? "" : errors[0];
  EXPECT_NE(line.find("(disk full)"), std::string::npos) << line;
  EXPECT_NE(line.find("run the same command again to resume"), std::string::npos) << line;
  // How much more it needs: what it will really take from here, the peak less what it holds now.
  const double stated = amount_after(line, "the job needs about");
  const double truth = double(job.peak - bytes_under(disk.dir()));
  EXPECT_NEAR(stated, truth, 0.25 * truth) << line;
  const fs::path out = disk.dir() / "out.mkv";
  EXPECT_FALSE(fs::exists(out)) << "half-written output under the final name";
  for (const auto& e : fs::directory_iterator(disk.dir()))
    EXPECT_EQ(e.path().filename().string().find(".partial-"), std::string::npos) << e.path();
  return line;
}

void expect_resumes(const Job& job, SmallDisk& disk) {
  ASSERT_TRUE(disk.resize(4 * job.peak));
  std::string said;
  ASSERT_EQ(run_command(job.command(disk.dir() / "out.mkv"), &said), 0) << said;
  EXPECT_EQ(frames_of(disk.dir() / "out.mkv"), job.frames);
  EXPECT_FALSE(fs::exists(disk.dir() / "out.mkv.framelift-job")) << "the job folder goes once assembled";
}

TEST(DiskFull, MidSegment) {
  const Job& job = the_job();
  SmallDisk disk("disk-full-segment", job.segment * 3 / 2);  // the first segment fits, the second does not
  if (!disk.available()) GTEST_SKIP() << disk.why();
  std::string said;
  const int rc = run_command(job.command(disk.dir() / "out.mkv"), &said);
  const std::string line = expect_stopped_for_disk(job, disk, rc, said);
  EXPECT_NE(line.find(".framelift-job/tmp/"), std::string::npos) << "the segment being written: " << line;
  // Short by what is needed less what is free.
  const double short_by = amount_after(line, "short by");
  const double truth = double(job.peak - bytes_under(disk.dir()) - free_on(disk.dir()));
  EXPECT_NEAR(short_by, truth, 0.25 * truth) << line;
  // It said so before it started: one line naming the folder, needed and free.
  const std::vector<std::string> warnings = lines_starting(said, "warning: not enough disk space: " + disk.dir().string() + " has ");
  ASSERT_GE(warnings.size(), 1u) << said;
  EXPECT_LT(said.find(warnings[0]), said.find("error: ")) << said;
  EXPECT_GT(amount_after(warnings[0], "the job needs about"), 0) << warnings[0];
  EXPECT_NE(warnings[0].find("(estimated: the first segment will tell)"), std::string::npos) << warnings[0];
  // After its first segment the job checked again with that segment's real size.
  ASSERT_GE(warnings.size(), 2u) << said;
  EXPECT_NE(warnings[1].find("(sized by the finished segments)"), std::string::npos) << warnings[1];
  // Run again without room: the check before the start is sized by the segment kept last time.
  ASSERT_EQ(run_command(job.command(disk.dir() / "out.mkv"), &said), 4) << said;
  const std::vector<std::string> again = lines_starting(said, "warning: not enough disk space: ");
  ASSERT_GE(again.size(), 1u) << said;
  EXPECT_NE(again[0].find("(sized by the finished segments)"), std::string::npos) << again[0];
  expect_resumes(job, disk);
}

TEST(DiskFull, AtTheJobsFirstWrite) {
  const Job& job = the_job();
  SmallDisk disk("disk-full-job", 64 << 20);
  if (!disk.available()) GTEST_SKIP() << disk.why();
  std::string said;
  // job.json cannot be written: there is no plan yet to size the job by, only the free space.
  ASSERT_EQ(run_command("FRAMELIFT_FAIL_AT=write:1:28 " + job.command(disk.dir() / "out.mkv"), &said), 4) << said;
  const std::vector<std::string> errors = lines_starting(said, "error: ");
  ASSERT_EQ(errors.size(), 1u) << said;
  const std::string job_dir = (disk.dir() / "out.mkv.framelift-job").string();
  EXPECT_NE(errors[0].find("job.json: write failed (no space left on device (disk full)); " + job_dir + " has "),
            std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("run the same command again"), std::string::npos) << errors[0];
  EXPECT_FALSE(fs::exists(disk.dir() / "out.mkv"));
  expect_resumes(job, disk);
}

TEST(DiskFull, MidCommit) {
  const Job& job = the_job();
  SmallDisk disk("disk-full-commit", 64 << 20);  // room enough: no warning before the start
  if (!disk.available()) GTEST_SKIP() << disk.why();
  std::string said;
  // Writes through util/fs.h: job.json, plan.json, then one record per segment: the second's.
  const int rc = run_command("FRAMELIFT_FAIL_AT=write:4:28 " + job.command(disk.dir() / "out.mkv"), &said);
  const std::string line = expect_stopped_for_disk(job, disk, rc, said);
  EXPECT_NE(line.find("journal/000001.json"), std::string::npos) << line;
  EXPECT_EQ(said.find("not enough disk space"), std::string::npos) << said;
  EXPECT_EQ(line.find("short by"), std::string::npos) << "the disk has room: " << line;
  expect_resumes(job, disk);
}

TEST(DiskFull, MidAssembly) {
  const Job& job = the_job();
  // Every segment fits; the output, written while they are all still there, only half.
  SmallDisk disk("disk-full-assembly", job.segments + job.output / 2);
  if (!disk.available()) GTEST_SKIP() << disk.why();
  std::string said;
  const int rc = run_command(job.command(disk.dir() / "out.mkv"), &said);
  const std::string line = expect_stopped_for_disk(job, disk, rc, said);
  EXPECT_EQ(line.rfind("error: " + (disk.dir() / "out.mkv").string() + ": write failed", 0), 0u) << line;
  EXPECT_EQ(bytes_under(disk.dir() / "out.mkv.framelift-job" / "segments"), job.segments) << "every segment is kept";
  const double short_by = amount_after(line, "short by");
  const double truth = double(job.output - free_on(disk.dir()));
  EXPECT_NEAR(short_by, truth, 0.25 * truth) << line;
  expect_resumes(job, disk);
}

}  // namespace
}  // namespace framelift::test
