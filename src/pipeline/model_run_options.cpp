#include "pipeline/model_run_options.h"

#include <algorithm>

#include "arch/declaration.h"
#include "models/model_files.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::pipeline {

namespace {

OptionSpec precision_option() {
  OptionSpec o = choice_option("precision", "auto", {"auto", "fp32", "fp16", "bf16"},
                               "auto: fp16 on CUDA, bf16 on CPUs with AMX-BF16 or AVX512-BF16, else fp32 with Winograd 3x3 convolutions; fp32 is the exact reference");
  o.aliases = {"float32", "float16", "half", "bfloat16"};
  return o;
}

// Refuses, before any frame, a precision the architecture's declaration (src/arch/) does not
// list; networks without a declaration are not checked.
void check_declared_precision(const std::string& stage, const std::string& arch_name, c10::ScalarType dtype) {
  const arch::Declaration* d = arch::find_declaration(arch_name);
  if (!d) return;
  const arch::Precision p = dtype == c10::kBFloat16 ? arch::Precision::Bf16
                            : dtype == c10::kHalf   ? arch::Precision::Fp16
                                                    : arch::Precision::Fp32;
  if (d->runs_in(p)) return;
  std::string listed;
  for (size_t i = 0; i < d->precisions.size(); ++i)
    listed += (i == 0 ? "" : i + 1 == d->precisions.size() ? " or " : ", ") + std::string(arch::precision_name(d->precisions[i]));
  throw Error(ErrorKind::Usage, str("stage ", stage, ": ", d->description, " runs in ", listed, ", not ", arch::precision_name(p),
                                    " (--precision)"));
}

}  // namespace

OptionSchema model_device_options() {
  OptionSchema run = model_run_options();
  std::erase_if(run, [](const OptionSpec& s) { return s.name != "device" && s.name != "precision" && s.name != "threads"; });
  return run;
}

std::unique_ptr<models::ImageModel> open_stage_model(const std::string& stage, const OptionValues& options,
                                                     const std::vector<std::string>& archs, const std::string& what,
                                                     const std::string& kind) {
  const std::string file = options.has("model") ? options.text("model") : "";
  if (file.empty()) throw Error(ErrorKind::Usage, str("stage ", stage, ": model=FILE (", what, ") is required"));
  std::unique_ptr<models::ImageModel> model = models::open_model(file);
  if (std::find(archs.begin(), archs.end(), model->info().arch) == archs.end())
    throw Error(ErrorKind::Usage, str("stage ", stage, ": ", file, " is a ", model->info().arch, " network, not ", kind,
                                      "; use upscale or denoise for it"));
  return model;
}

std::unique_ptr<models::ImageModel> open_stage_model(const std::string& stage, const OptionValues& options, const std::string& arch,
                                                     const std::string& what, const std::string& kind) {
  return open_stage_model(stage, options, std::vector<std::string>{arch}, what, kind);
}

OptionSchema model_run_options() {
  return {with_role(text_option("device", "auto", "auto|cpu|cuda|cuda:N"), OptionRole::Device),
          precision_option(),
          with_role(integer_option("tile", "0", 0, 16384, "tile size in input pixels; 0: from memory"), OptionRole::Tile),
          integer_option("tile_overlap", "", 0, 1024, "context pixels around a tile; default the model's"),
          with_role(integer_option("tile_batch", "1", 1, 256, "same-size tiles per forward call"), OptionRole::Batch),
          with_role(integer_option("batch", "1", 1, 256, "frames per forward call"), OptionRole::Batch),
          integer_option("threads", "", 1, 1024, "CPU threads; default the CPUs this process may use"),
          size_option("max_memory", "memory budget, e.g. 4G")};
}

infer::ExecutionTarget resolve_stage_target(const std::string& stage, const OptionValues& o, const std::string& arch_name) {
  const arch::Declaration* d = arch::find_declaration(arch_name);
  const infer::ReducedPrecisions reduced =
      d ? infer::ReducedPrecisions{d->runs_in(arch::Precision::Bf16), d->runs_in(arch::Precision::Fp16)}
        : infer::ReducedPrecisions{false, false};
  infer::ExecutionTarget t = infer::resolve_target(o.text("device"), o.text("precision"), reduced);
  check_declared_precision(stage, arch_name, t.dtype);
  return t;
}

}  // namespace framelift::pipeline
