#pragma once
// The options every model-backed stage reads: where and how the model runs (device, precision,
// tiles, batches, threads, memory). The CLI's --device, --tile, ... flags are their defaults
// (StageOptions::set_defaults), validated against this schema by each stage that declares them.
#include "pipeline/option_schema.h"

namespace framelift::pipeline {

OptionSchema model_run_options();

}  // namespace framelift::pipeline
