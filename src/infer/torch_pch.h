// Precompiled header for every target that uses libtorch. Parsing <torch/torch.h> costs ~20 s
// per translation unit on the CI machine; compiling it once keeps a clean build short.
#pragma once
#include <torch/torch.h>
