// The hostile-input suite: each case makes a hostile file (or names a bad value), runs the CLI on
// it, and asserts what must hold for any input: the documented exit code, no signal, one error line
// that names the file or option and the problem, nothing left behind, and a peak memory bounded
// regardless of what the file claims. Add a case to the table for each new class of attack.
#include <sys/resource.h>

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <set>

#include "cli/cli_runner.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

using Maker = std::function<void(const fs::path& dir)>;

struct HostileCase {
  std::string name;      // the test's name
  Maker make;            // writes the hostile files into the case's folder
  std::string args;      // "{dir}" is the case's folder, "{clip}" a small real clip
  int exit_code;         // include/framelift/error.h: 2 usage, 3 input, 4 output, 5 model, 6 resources
  std::string named;     // what the error line must name (a file or an option)
  std::string problem;   // and what it must say
  long max_rss_mib = 700;
};

void write(const fs::path& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary) << bytes;
}

Maker files(std::vector<std::pair<std::string, std::string>> contents) {
  return [contents](const fs::path& dir) {
    for (const auto& [name, bytes] : contents) write(dir / name, bytes);
  };
}

// An ncnn model: the .param text and a .bin of `bin_bytes` zero bytes.
Maker ncnn(const std::string& param, size_t bin_bytes = 0) {
  return files({{"x.param", "7767517\n" + param}, {"x.bin", std::string(bin_bytes, '\0')}});
}

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[size_t(i)] = char(v >> (8 * i));
  return s;
}

std::string safetensors(const std::string& header, size_t data_bytes) {
  return le64(header.size()) + header + std::string(data_bytes, '\0');
}

// A zip whose end record claims 65534 entries in a 46-byte directory.
std::string zip_with_impossible_count() {
  std::string end = "PK\x05\x06";
  end += std::string(4, '\0');          // disk numbers
  end += "\xfe\xff\xfe\xff";            // entries on disk, entry count (65534 each)
  end += std::string("\x2e\0\0\0", 4);  // directory size 46
  end += std::string(4, '\0');          // directory offset 0
  end += std::string(2, '\0');          // comment length
  return std::string("PK\x03\x04", 4) + std::string(60, '\0') + end;
}

void sparse_file(const fs::path& file, uintmax_t size) {
  write(file, "");
  fs::resize_file(file, size);
}

Maker nothing() {
  return [](const fs::path&) {};
}

// A prepared job (job.json and plan.json, no segments yet) whose job.json then loses `key`.
Maker job_without(const std::string& key) {
  return [key](const fs::path& dir) {
    const CliResult r = framelift("--log-level warn run -i " + shell_quote(media("cfr_8bit.mkv")) + " -o " +
                                  shell_quote(dir / "out.mkv") + " --job-dir " + shell_quote(dir / "job") + " --prepare");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::ifstream in(dir / "job" / "job.json");
    nlohmann::json j = nlohmann::json::parse(in);
    j.erase(key);
    std::ofstream(dir / "job" / "job.json") << j.dump(1);
  };
}

std::vector<HostileCase> cases() {
  const std::string info = "models info {dir}/";
  // A run of the small clip into the case's folder; a case adds the bad value.
  const std::string run = "run -i {clip} -o {dir}/out.mkv --progress none ";
  return {
      // ncnn .param/.bin: counts and sizes are untrusted.
      {"NcnnBlobCountsNearIntMax", ncnn("1 1\nInput in 2147483647 2147483647 a b\n"), info + "x.param", 5, "x.param",
       "fewer blob names than declared"},
      {"NcnnConvolutionSizesWhoseProductWraps",  // 2^22 * 2^21 * 2^21 = 2^64 wraps to 0: was size % 0
       ncnn("2 2\nInput in 0 1 in\nConvolution conv 1 1 in out 0=4194304 1=2097152 11=2097152 6=1\n", 8),
       info + "x.param", 5, "x.bin", "does not fit num_output 4194304"},
      {"NcnnMemoryDataShapeOverflows",
       ncnn("1 1\nMemoryData md 0 1 out 0=2147483647 1=2147483647 2=2147483647 11=2147483647\n"), info + "x.param", 5,
       "x.bin", "MemoryData shape is too large"},
      {"NcnnHugeMemoryDataIsCheckedAgainstTheFile",  // 4e15 bytes claimed by a 0-byte .bin: no allocation
       ncnn("1 1\nMemoryData md 0 1 out 0=100000 1=100000 2=100000\n"), info + "x.param", 5, "x.bin",
       "file ends inside layer md"},
      {"NcnnWeightSizePastTheFile", ncnn("2 2\nInput in 0 1 in\nConvolution conv 1 1 in out 0=16 1=3 6=1999999872\n", 64),
       info + "x.param", 5, "x.bin", "file ends inside layer conv"},
      {"NcnnOutOfRangeNumbers", ncnn("2 2\nInput in 0 1 in\nConvolution conv 1 1 in out 0=1e300 1=3 6=27\n", 200),
       info + "x.param", 5, "x.bin", "does not fit"},
      {"NcnnNotANumberKernel", ncnn("2 2\nInput in 0 1 in\nConvolution conv 1 1 in out 0=3 1=nan 6=27\n", 200),
       info + "x.param", 5, "x.bin", "does not fit"},
      // Pickles (.pth): memory is bounded by the file's size.
      {"PickleListBomb",  // 20 MB of EMPTY_LIST: was 6.9 GB; now 64 MiB + 64 bytes per byte at most
       files({{"bomb.pth", "\x80\x02" + std::string(20 << 20, ']')}}), info + "bomb.pth", 5, "bomb.pth", "pickle bomb",
       2000},
      {"ZipEntryCountTheDirectoryCannotHold", files({{"count.pth", zip_with_impossible_count()}}), info + "count.pth", 5,
       "count.pth", "zip: central directory"},
      // safetensors: shapes and offsets are checked in 64 bits.
      {"SafetensorsShapeOverflows",
       files({{"big.safetensors",
               safetensors(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", 4)}}),
       info + "big.safetensors", 5, "big.safetensors", "shape is too large"},
      {"SafetensorsOffsetsPastTheData",
       files({{"short.safetensors", safetensors(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8)}}),
       info + "short.safetensors", 5, "short.safetensors", "lie outside the 8 data bytes"},
      // A 2 GB file that is no weight file is refused from its head, never read whole.
      {"HugeFileThatIsNoWeightFile", [](const fs::path& dir) { sparse_file(dir / "disk.pth", uintmax_t(2) << 30); },
       info + "disk.pth", 5, "disk.pth", "unrecognised weight file", 700},
      // Bad values: refused with the option and its allowed range before any work.
      {"ThreadsFarAboveAnyMachine", nothing(), run + "--threads 100000", 2, "--threads 100000", "out of range (1 to 1024"},
      {"InterpolateFactorOfAMillion", nothing(), run + "--pipeline interpolate:factor=1000000", 2, "factor=1000000",
       "1 <= N <= 16"},
      {"ResizeScaleNan", nothing(), run + "--pipeline resize:scale=nan", 2, "scale=nan", "0 < F <= 16"},
      {"ResizeScaleInf", nothing(), run + "--pipeline resize:scale=inf", 2, "scale=inf", "0 < F <= 16"},
      {"ResizeScaleThatLeavesNoPicture", nothing(), run + "--pipeline resize:scale=1e-9", 2, "scale=1e-09",
       "the output must be 2x2 to 16384x16384"},
      {"UpscaleScaleZero", nothing(), "upscale -i {clip} -o {dir}/out.mkv -s 0", 2, "--scale: 0", "0 < F <= 16"},
      {"FramesZero", nothing(), run + "--frames 0", 2, "--frames: 0", "a whole number >= 1"},
      {"FramesNegative", nothing(), run + "--frames -1", 2, "--frames: -1", "a whole number >= 1"},
      {"SegmentFramesZero", nothing(), run + "--segment-frames 0", 2, "--segment-frames: 0", "a whole number >= 1"},
      {"SegmentFramesNegative", nothing(), run + "--segment-frames -5", 2, "--segment-frames: -5", "a whole number >= 1"},
      // Errors people can act on: one line naming the file or option and the problem.
      {"MaxMemoryOfOneByte", nothing(), run + "--max-memory 1 --pipeline upscale", 2, "--max-memory 1",
       "too small: give at least 16M"},
      {"MaxMemoryOfOneByteInAStageOption", nothing(), run + "--pipeline upscale:max_memory=1", 2, "max_memory=1",
       "at least 16M"},
      {"Ffv1IntoMp4IsRefusedBeforeAnySegment", nothing(), "run -i {clip} -o {dir}/x.mp4 -c ffv1 --progress none", 4,
       "x.mp4", "mp4 container cannot hold ffv1 video (-c ffv1)"},
      {"X264OnAnOddSizeIn420", nothing(), run + "--pipeline resize:w=321:h=241", 2, "libx264 for 321x241 yuv420p",
       "needs a width divisible by 2 and a height divisible by 2"},
      {"VideoWithNoFrames", nothing(), "run -i {media}/zero_frames.mkv -o {dir}/out.mkv --progress none", 3,
       "zero_frames.mkv", "the video stream has no frames"},
      {"VideoWithNoFramesPlainPass", nothing(), "run --no-job -i {media}/zero_frames.mkv -o {dir}/out.mkv --progress none",
       3, "zero_frames.mkv", "the video stream has no frames"},
      {"FilterThatDropsEveryFrame", nothing(), run + "--pipeline filter:graph=select=0", 2, "cfr_8bit.mkv",
       "the pipeline made no frames"},
      {"FilterThatDropsEveryFramePlainPass", nothing(), run + "--no-job --pipeline filter:graph=select=0", 2,
       "cfr_8bit.mkv", "the pipeline made no frames"},
      {"JobJsonWithoutItsEncoder", job_without("encoder"), "resume --job-dir {dir}/job --progress none", 3, "job.json",
       "damaged (no 'encoder')"},
      {"JobJsonWithoutItsFingerprint", job_without("input_fingerprint"), "resume --job-dir {dir}/job --progress none", 3,
       "job.json", "damaged (no 'input_fingerprint')"},
  };
}

// gtest prints parameters in failure messages and test lists; the name is what identifies a case.
void PrintTo(const HostileCase& c, std::ostream* os) { *os << c.name; }

class Hostile : public testing::TestWithParam<HostileCase> {};

std::string expand(std::string args, const fs::path& dir) {
  for (auto [key, value] : {std::pair<std::string, std::string>{"{dir}", dir.string()},
                            {"{clip}", media("cfr_8bit.mkv").string()},
                            {"{media}", media_dir().string()}})
    for (size_t at; (at = args.find(key)) != std::string::npos;) args.replace(at, key.size(), value);
  return args;
}

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir)) names.insert(fs::relative(e.path(), dir).string());
  return names;
}

long peak_child_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return usage.ru_maxrss / 1024;  // KiB on Linux
}

TEST_P(Hostile, ClearErrorNoSignalNothingLeftBoundedMemory) {
  const HostileCase& c = GetParam();
  const fs::path dir = temp_dir("hostile");
  c.make(dir);
  const std::set<std::string> before = names_in(dir);
  const CliResult r = framelift("--log-level warn " + expand(c.args, dir));
  EXPECT_LT(r.exit_code, 128) << "killed by signal " << r.exit_code - 128 << "\n" << r.output;
  EXPECT_EQ(r.exit_code, c.exit_code) << r.output;
  const size_t pos = r.output.find("error: ");
  ASSERT_NE(pos, std::string::npos) << r.output;
  const std::string line = r.output.substr(pos, r.output.find('\n', pos) - pos);
  EXPECT_NE(line.find(c.named), std::string::npos) << line;
  EXPECT_NE(line.find(c.problem), std::string::npos) << line;
  EXPECT_EQ(r.output.find("error: ", pos + 1), std::string::npos) << "more than one error line:\n" << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  EXPECT_EQ(names_in(dir), before) << "files appeared or went in " << dir;
  EXPECT_LE(peak_child_rss_mib(), c.max_rss_mib) << "peak memory of the run";
}

INSTANTIATE_TEST_SUITE_P(Files, Hostile, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<HostileCase>& info) { return info.param.name; });

}  // namespace
}  // namespace framelift::test
