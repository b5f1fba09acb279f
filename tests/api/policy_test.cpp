// framelift/policy.h as an embedder uses it: a pipeline text from someone else held to a
// PipelinePolicy by check_pipeline(), by Pipeline's policy constructor and by RunRequest::policy.
// Each refusal is Error(Usage), one line, and happens before anything opens, loads or writes.
#include <gtest/gtest.h>

#include <framelift/framelift.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/test_paths.h"

namespace framelift::test {
namespace {
namespace fs = std::filesystem;

// The Error(Usage) line `pipeline` gets from `policy`, or "" when it is allowed.
std::string refusal(const std::string& pipeline, const PipelinePolicy& policy) {
  try {
    check_pipeline(pipeline, policy);
    return "";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage) << pipeline;
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
    return e.what();
  }
}

struct Folders {
  fs::path dir = temp_dir("policy");
  fs::path root = dir / "root", outside = dir / "outside";
  Folders() {
    fs::create_directories(root / "sub");
    fs::create_directories(outside);
    std::ofstream(root / "sub" / "model.pt") << "x";
    std::ofstream(outside / "secret.pt") << "x";
    fs::create_symlink(outside / "secret.pt", root / "link.pt");
    fs::create_symlink(outside, root / "escape");
  }
  PipelinePolicy policy() const {
    PipelinePolicy p;
    p.file_roots = {root};
    return p;
  }
};

TEST(ApiPolicy, FiltersThatOpenLoadOrCommandAreRefusedHoweverTheyAreSpelt) {
  const PipelinePolicy p;
  for (const std::string& graph : std::vector<std::string>{
           "filter:graph=movie=/etc/passwd",
           "filter:graph='movie=filename=/etc/passwd'",
           "filter:graph='mov\\ie=/etc/passwd'",      // libavfilter's tokenizer drops the backslash
           "filter:graph=\"'movie'=/etc/passwd\"",      // and the quotes
           "filter:graph='movie@x=/etc/passwd'",        // an instance name
           "filter:graph='hflip, movie=/etc/passwd'",
           "filter:graph='[in]split[a][b];[b]movie=/etc/passwd[m];[a][m]overlay'",
           "filter:graph='sws_flags=bicubic;movie=/etc/passwd'",
           "filter:graph='ladspa=file=/tmp/x.so'",
           "filter:graph=amovie=/etc/passwd",
           "filter:graph='drawtext=textfile=/etc/passwd'",
           "filter:graph='sendcmd=f=/etc/passwd'",
           "filter:graph=zmq",
           "filter:graph='lut3d=/etc/passwd'",
           "filter:graph='subtitles=/etc/passwd'"}) {
    const std::string why = refusal(graph, p);
    EXPECT_NE(why.find("is not allowed here"), std::string::npos) << graph << ": " << why;
    EXPECT_EQ(why.rfind("stage filter: ", 0), 0u) << why;
  }
}

TEST(ApiPolicy, OptionsThatNameFilesAreRefusedInAllowedFilters) {
  const PipelinePolicy p;
  const std::string why = refusal("filter:graph='curves=psfile=/etc/passwd'", p);
  EXPECT_NE(why.find("'curves' option 'psfile' names a file"), std::string::npos) << why;
  EXPECT_NE(refusal("filter:graph='selectivecolor=psfile=/x.asv'", p), "");
  // curves' plot= writes a file.
  EXPECT_NE(refusal("filter:graph='curves=preset=lighter:plot=/tmp/x.plt'", p).find("option 'plot' names a file"), std::string::npos);
  // Positional, as libavfilter assigns them (preset, master, red, green, blue, all, psfile):
  // the seventh value is psfile.
  const std::string positional = refusal("filter:graph='curves=none:0/0 1/1:0/0 1/1:0/0 1/1:0/0 1/1:0/0 1/1:/etc/passwd'", p);
  EXPECT_NE(positional.find("option 'psfile' names a file"), std::string::npos) << positional;
}

// The check creates no filter: metadata's init would create (or truncate) the file it names.
TEST(ApiPolicy, ARefusedGraphTouchesNothing) {
  const fs::path dir = temp_dir("policy-metadata");
  const fs::path target = dir / "made.txt";
  const std::string text = "filter:graph='metadata=mode=print:file=" + target.string() + "'";
  EXPECT_NE(refusal(text, PipelinePolicy{}), "");
  EXPECT_THROW(Pipeline(text, {}, PipelinePolicy{}), Error);
  EXPECT_FALSE(fs::exists(target)) << "the policy must refuse before libavfilter creates the filter";
  // Without a policy the same text is the CLI user's own, and libavfilter does create the file:
  // what the policy is there to stop.
  try {
    Pipeline open(text);
    open.configure({.width = 64, .height = 48, .frame_rate_num = 25});
  } catch (const Error&) {
  }
  EXPECT_TRUE(fs::exists(target)) << "metadata=file= creates its file when nothing stops it";
}

TEST(ApiPolicy, PlainFiltersAndStagesAreAllowed) {
  const PipelinePolicy p;
  for (const std::string& ok : std::vector<std::string>{
           "filter:graph=hflip", "filter:graph='eq=contrast=1.2:brightness=0.05,unsharp'", "filter:graph=[crop=iw-8:ih-8,hqdn3d]",
           "filter:graph='split[a][b];[a][b]hstack,scale=640:-2'", "filter:graph='curves=preset=lighter'", "resize:w=1280:h=720",
           "upscale:model=realesr-animevideov3-x2:tile=256:batch=2", "denoise:method=hqdn3d:level=2", "interpolate:factor=2", "",
           "filter:graph=''"})  // an empty graph is the stage's own error to give
    EXPECT_EQ(refusal(ok, p), "") << ok;
}

TEST(ApiPolicy, FilesMustLieInsideTheRootsAfterLinksAndDotDot) {
  const Folders f;
  const PipelinePolicy p = f.policy();
  EXPECT_EQ(refusal("model:file=" + (f.root / "sub" / "model.pt").string(), p), "");
  EXPECT_EQ(refusal("model:file=" + (f.root / "sub" / ".." / "sub" / "model.pt").string(), p), "");
  for (const fs::path& bad : {f.outside / "secret.pt", f.root / ".." / "outside" / "secret.pt", f.root / "link.pt",
                              f.root / "escape" / "secret.pt", fs::path("/etc/passwd")}) {
    for (const std::string& stage : std::vector<std::string>{"model:file=", "model:file=" + (f.root / "sub" / "model.pt").string() + ":mask=",
                                     "upscale:model=", "denoise:model=", "interpolate:model="}) {
      const std::string why = refusal(stage + bad.string(), p);
      EXPECT_NE(why.find("names a file outside the folders allowed here"), std::string::npos) << stage << bad << ": " << why;
      EXPECT_EQ(why.find(f.dir.string()), std::string::npos) << "the refusal does not echo the path: " << why;
    }
  }
  // With no roots at all, no file is allowed; model names still are.
  EXPECT_NE(refusal("model:file=" + (f.root / "sub" / "model.pt").string(), PipelinePolicy{}), "");
  EXPECT_EQ(refusal("upscale:model=realesr-animevideov3-x2", PipelinePolicy{}), "");
}

TEST(ApiPolicy, DevicesAndSizesAreBounded) {
  PipelinePolicy p;
  const std::string device = refusal("upscale:device='cuda:7'", p);
  EXPECT_NE(device.find("device= cannot be set here"), std::string::npos) << device;
  p.devices = {"cpu"};
  EXPECT_EQ(refusal("upscale:device=cpu", p), "");
  EXPECT_NE(refusal("upscale:device=cuda", p), "");
  EXPECT_NE(refusal("resize:w=9000:h=720", p).find("w=9000 is over the limit here, 8192"), std::string::npos);
  EXPECT_NE(refusal("upscale:tile=4096", p), "");
  EXPECT_NE(refusal("upscale:batch=64", p), "");
  EXPECT_NE(refusal("upscale:tile_batch=64", p), "");
  p.max_frame_size = 0;
  EXPECT_EQ(refusal("resize:w=9000:h=720", p), "");
}

TEST(ApiPolicy, PipelineAndRunHoldTextToThePolicy) {
  const PipelinePolicy p;
  Pipeline ok("filter:graph=hflip", {}, p);
  const VideoShape out = ok.configure({.width = 32, .height = 16, .frame_rate_num = 25});
  EXPECT_EQ(out.width, 32);
  try {
    Pipeline bad("resize:scale=0.5,filter:graph=movie=/etc/passwd", {}, p);
    ADD_FAILURE() << "built";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_EQ(exit_code(e.kind()), 2);
  }
  // A frame size known only once the input is: checked as the stages are configured.
  Pipeline big("resize:scale=16", {}, p);
  EXPECT_THROW(big.configure({.width = 1024, .height = 1024, .frame_rate_num = 25}), Error);
  Pipeline graph("filter:graph='scale=16000:9000'", {}, p);
  try {
    graph.configure({.width = 64, .height = 48, .frame_rate_num = 25});
    ADD_FAILURE() << "configured";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("makes 16000x9000 frames; the limit here is 67108864 pixels a frame"), std::string::npos)
        << e.what();
  }
  const fs::path dir = temp_dir("policy-run");
  RunRequest r;
  r.input = media("cfr_8bit.mkv").string();
  r.output = (dir / "out.mkv").string();
  r.pipeline = "filter:graph='drawtext=textfile=/etc/passwd'";
  r.policy = p;
  EXPECT_THROW(run(r), Error);
  EXPECT_FALSE(fs::exists(r.output));
  EXPECT_TRUE(fs::is_empty(dir)) << "no job folder either";
}

}  // namespace
}  // namespace framelift::test
