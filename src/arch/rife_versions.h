#pragma once
// The RIFE versions after 4.6 that framelift runs natively, told apart by their shapes: the
// feature encoder's output channels and the widths of the flow blocks. Each fixes what the
// shapes do not say: the scale of every block (1/16 .. 1/1 of the frame, and 4.25 lite's own
// 1/32, 1/16, 1/8, 1/4, 1/1) and the multiple the frame is padded to (Practical-RIFE's and
// vs-rife's per-version "modulo"). Adding a version: one row in rife_versions.cpp. Torch-free: the planner prices by it too.
#include <string>
#include <vector>

namespace framelift::arch {

struct RifeVersion {
  std::string name;             // "4.25" (shapes shared by several releases name them all)
  int features = 0;             // encoder output channels per frame
  std::vector<int> widths;      // block0.. channels (block{i}.conv0.1.0 outputs)
  std::vector<double> divisors; // block i runs at 1 / (divisors[i] / flow scale) of the frame
  int modulo = 32;              // padded frame multiple at flow scale 1
};

// The published version with these shapes, or a generic one for other widths (a fine-tune or an
// unreleased layout): blocks at 1/2^(n-1) .. 1/1, modulo 32 for 4 blocks and 64 for 5, named
// "4.7+ (unrecognised widths)". Pure.
RifeVersion rife_version_for(int features, const std::vector<int>& widths);

// The published versions, in release order.
const std::vector<RifeVersion>& published_rife_versions();

}  // namespace framelift::arch
