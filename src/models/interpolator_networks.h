#pragma once
// The native interpolation networks told apart by a state dict's keys, one row each (IFRNet, FILM):
// what opens, plans and describes an interpolator file asks this table. RIFE's flownet is not a
// row: its keys ("block0.conv0...") are the least distinctive, so it is what a dict no row claims
// is taken for (rife_native.h, which names what it expected when it is not one either).
//
// Adding one: its network with a detector in src/models/NAME.cpp, a function returning its row
// declared below, one line in interpolator_networks.cpp, and its cost walk in src/arch/.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arch/params.h"
#include "models/frame_interpolator.h"
#include "weights/state_dict.h"

namespace framelift::models {

struct InterpolatorNetwork {
  std::string arch;  // its declaration's name in src/arch ("ifrnet", "film")
  // The hyper-parameters the planner prices it by; nullopt when dict is not this network;
  // Error(Model) "<source>: ..." when it is and its shapes do not fit together.
  std::function<std::optional<arch::ArchParams>(const weights::StateDict&, const std::string& source)> detect;
  std::function<std::unique_ptr<FrameInterpolator>(const weights::StateDict&, const std::string& source)> build;
  // One line of JSON for `framelift models info`.
  std::function<std::string(const weights::StateDict&, const std::string& source)> describe;
};

InterpolatorNetwork ifrnet_interpolator();
InterpolatorNetwork film_interpolator();
InterpolatorNetwork gmfss_interpolator();

const std::vector<InterpolatorNetwork>& interpolator_networks();

// What `models info` says of an interpolator file: arch and description, variant (also among the
// hyper-parameters), scale 1 (frames, not pixels: what `models import` records), frames_per_call 2,
// the size multiple, the weights counted, the hyper-parameters, then `extra` string fields.
std::string describe_interpolator(const std::string& arch, const std::string& variant, int size_multiple,
                                  const weights::StateDict& dict, const arch::ArchParams& params,
                                  const std::vector<std::pair<std::string, std::string>>& extra = {});

// The row whose detector claims dict (its params into *params when given), or nullptr.
const InterpolatorNetwork* find_interpolator_network(const weights::StateDict& dict, const std::string& source,
                                                     arch::ArchParams* params = nullptr);

}  // namespace framelift::models
