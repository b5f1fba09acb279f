#include "library/quality.h"

#include <algorithm>

#include "util/error.h"
#include "util/str.h"

namespace framelift::library {
namespace {

struct Tier {
  const char* name;
  std::vector<std::string> architectures;
  std::vector<std::string> preferred;  // best first
};

const Tier& tier(Quality q) {
  static const Tier fast{"fast",
                         {"srvgg_compact"},
                         {"realesr-animevideov3-x2", "realesr-animevideov3-x4", "realesr-animevideov3-x3", "realesr-general-x4v3"}};
  static const Tier balanced{"balanced",
                             {"realcugan", "waifu2x_cunet", "waifu2x_upconv7"},
                             {"realcugan-se-2x-conservative", "realcugan-se-2x-no-denoise", "realcugan-se-2x-denoise1x",
                              "realcugan-se-4x-conservative", "realcugan-se-3x-conservative"}};
  static const Tier best{"best", {"rrdbnet"}, {"realesrgan-x4plus", "realesrgan-x4plus-anime"}};
  return q == Quality::Fast ? fast : q == Quality::Balanced ? balanced : best;
}

}  // namespace

Quality parse_quality(std::string_view text) {
  if (text == "fast") return Quality::Fast;
  if (text == "balanced") return Quality::Balanced;
  if (text == "best") return Quality::Best;
  throw Error(ErrorKind::Usage, str("--quality: expected fast, balanced or best, got '", text, "'"));
}

std::string pick_upscale_model(const std::vector<InstalledModel>& installed, Quality quality) {
  const Tier& t = tier(quality);
  auto fits = [&](const InstalledModel& m) {
    return m.task == "upscale" && m.scale > 1 &&
           std::find(t.architectures.begin(), t.architectures.end(), m.architecture) != t.architectures.end();
  };
  for (const std::string& name : t.preferred)
    for (const InstalledModel& m : installed)
      if (m.name == name && fits(m)) return m.name;
  std::vector<std::string> others;
  for (const InstalledModel& m : installed)
    if (fits(m)) others.push_back(m.name);
  if (!others.empty()) return *std::min_element(others.begin(), others.end());
  throw Error(ErrorKind::Model, str("--quality ", t.name, ": no installed upscale model of that kind (", t.architectures.front(),
                                    "); install one: framelift models install ", t.preferred.front()));
}

}  // namespace framelift::library
