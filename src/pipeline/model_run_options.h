#pragma once
// The options every model-backed stage reads: where and how the model runs (device, precision,
// tiles, batches, threads, memory). The CLI's --device, --tile, ... flags are their defaults
// (StageOptions::set_defaults), validated against this schema by each stage that declares them.
#include <memory>
#include <string>
#include <vector>

#include "infer/device.h"
#include "infer/image_model.h"
#include "pipeline/option_schema.h"
#include "pipeline/option_values.h"

namespace framelift::pipeline {

OptionSchema model_run_options();

// device=, precision= and threads= alone: for stages that run the network once a frame on a
// region or size of their own (no tiles, no batches).
OptionSchema model_device_options();

// The required model= of a stage that runs one architecture (style, inpaint, colorize): opened,
// or Error(Usage) "stage STAGE: model=FILE (WHAT) is required" when absent, and "stage STAGE: F is
// a ARCH network, not KIND; use upscale or denoise for it" when it is another kind of network.
std::unique_ptr<models::ImageModel> open_stage_model(const std::string& stage, const OptionValues& options, const std::string& arch,
                                                     const std::string& what, const std::string& kind);
// The same for a stage that runs any of several architectures (faces: GFPGAN, CodeFormer, ...).
std::unique_ptr<models::ImageModel> open_stage_model(const std::string& stage, const OptionValues& options,
                                                     const std::vector<std::string>& archs, const std::string& what,
                                                     const std::string& kind);

// The stage's device and precision from its options, `auto` resolved for what the network's
// architecture declares (a network without a declaration, a TorchScript module or an ncnn graph
// no native architecture matches, stays fp32 under auto). A precision the declaration does not
// list is refused before any frame: Error(Usage, "stage STAGE: ARCH runs in fp32 or fp16, not
// bf16 (--precision)").
infer::ExecutionTarget resolve_stage_target(const std::string& stage, const OptionValues& options, const std::string& arch);

}  // namespace framelift::pipeline
