#pragma once
// Networks that take one input size only, the size_multiple S their weights say (face restorers
// at their face size, MAT at its resolution): wrapped so that any other size is refused as
// Error(Usage) "<source>: ARCH VERB SxS NOUN, not WxH", before NativeModel's own check (any
// multiple of S) would let 2S x 2S through or call a wrong size a broken model.
#include <memory>
#include <string>

#include "infer/image_model.h"

namespace framelift::models {

// verb and noun say what the network does with its input: "restores", "aligned face crops".
std::unique_ptr<ImageModel> exact_size_only(std::unique_ptr<ImageModel> net, std::string source, std::string verb, std::string noun);

// The network behind exact_size_only's wrapper (model itself when it is not wrapped): what a
// dynamic_cast for a network's own interface (FidelityWeighted) must look at.
ImageModel& inner_network(ImageModel& model);

}  // namespace framelift::models
