#include "arch/rife_versions.h"

#include <cmath>

namespace framelift::arch {

const std::vector<RifeVersion>& published_rife_versions() {
  // From Practical-RIFE's flownet files as vs-rife runs them (IFNet_HDv3_v4_*.py, and the modulo
  // in its __init__). 4.23 has 4.22's shapes, 4.26 has 4.25's: the weights differ, not the network.
  static const std::vector<RifeVersion> table = {
      {"4.22 / 4.23", 8, {256, 192, 96, 48}, {8, 4, 2, 1}, 32},
      {"4.22 lite", 4, {192, 128, 64, 32}, {8, 4, 2, 1}, 32},
      {"4.25 / 4.26", 4, {192, 128, 96, 64, 32}, {16, 8, 4, 2, 1}, 64},
      {"4.25 lite", 4, {192, 128, 96, 64, 24}, {32, 16, 8, 4, 1}, 128},
      {"4.25 heavy", 4, {384, 256, 192, 128, 64}, {16, 8, 4, 2, 1}, 64},
      {"4.26 heavy", 16, {192, 128, 96, 64, 32}, {16, 8, 4, 2, 1}, 64},
  };
  return table;
}

RifeVersion rife_version_for(int features, const std::vector<int>& widths) {
  for (const RifeVersion& v : published_rife_versions())
    if (v.features == features && v.widths == widths) return v;
  RifeVersion v{"4.7+ (unrecognised widths)", features, widths, {}, widths.size() > 4 ? 64 : 32};
  for (size_t i = 0; i < widths.size(); ++i) v.divisors.push_back(std::ldexp(1.0, int(widths.size() - 1 - i)));
  return v;
}

}  // namespace framelift::arch
