#pragma once
// What a native architecture tells the registry: how to recognise its state dicts and how to
// build a network from one. Each architecture file defines one of these (see
// arch/architecture_list.h); other code may register more with register_architecture().
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arch/params.h"
#include "infer/image_model.h"
#include "weights/state_dict.h"

namespace framelift::models {

// The hyper-parameters inferred from a state dict's keys and shapes.
struct DetectedArch {
  std::string arch;  // registry name: "srvgg_compact", "rrdbnet", ...
  int scale = 1;
  int in_channels = 3;
  int out_channels = 3;
  // Hyper-parameters in inference order ("num_feat" 64, "pe" 1), typed: what the builder, the
  // declaration's cost walk (arch/declaration.h) and describe_model() read.
  arch::ArchParams params;
  // A layout or flavour that changes no shape ("esrgan_old" keys, Real-CUGAN "pro"); "" if none.
  std::string variant;
};

// The network half of an architecture; what it is (description, scales, precisions, cost, tile
// geometry) is its declaration in src/arch/, found by the same name.
struct Architecture {
  std::string name;         // DetectedArch::arch; must have an arch::Declaration
  // nullopt when the keys are not this architecture's. When they are but the shapes do not fit,
  // throws Error(Model) "<source>: ..." rather than letting another architecture guess.
  std::function<std::optional<DetectedArch>(const weights::StateDict&, const std::string& source)> detect;
  std::function<std::unique_ptr<ImageModel>(const weights::StateDict&, const DetectedArch&, const std::string& source)>
      build;
};

// Thread-safe. Detection asks every registered architecture and takes the one claim (two claims
// are refused: models::detect); a name registered again replaces the earlier entry. Throws std::logic_error for a name without a declaration.
void register_architecture(Architecture arch);

}  // namespace framelift::models
