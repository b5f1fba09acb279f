#include "cli/inference_options.h"

#include "framelift/values.h"
#include "framelift/error.h"
#include "util/str.h"

namespace framelift::cli {

void add_inference_options(CLI::App* cmd, InferenceArgs& a) {
  auto* g = "Inference (defaults for every AI stage)";
  cmd->add_option("--device", a.device, "auto (CUDA when present), cpu, cuda, cuda:N")->capture_default_str()->group(g);
  cmd->add_option("--precision", a.precision, "auto (default: fp16 on CUDA, bf16 on CPUs with AMX-BF16 or AVX512-BF16, else fp32 with Winograd 3x3 convolutions), fp32 (the exact reference), fp16 or bf16")->group(g);
  cmd->add_option("--threads", a.threads, "CPU threads (default: the CPUs this process may use)")->group(g);
  cmd->add_option("--tile", a.tile, "Tile size in input pixels (0: from the memory available)")->capture_default_str()->group(g);
  cmd->add_option("--tile-overlap", a.tile_overlap, "Context pixels around each tile (default: the model's)")->group(g);
  cmd->add_option("--tile-batch", a.tile_batch, "Tiles of one frame per forward pass (GPUs: fewer, fuller calls)")
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--batch", a.batch, "Frames per forward pass")->capture_default_str()->group(g);
  cmd->add_option("--max-memory", a.max_memory, "Memory budget for inference, e.g. 4G (CPU: host memory; CUDA: device memory)")
      ->group(g);
  cmd->add_option("--color-conversion", a.color_conversion,
                  "auto (on the GPU when the first/last AI stage runs there), swscale, or tensor (tensor ops, any device)")
      ->capture_default_str()
      ->group(g);
}

std::map<std::string, std::string> stage_defaults(const InferenceArgs& a) {
  // Bounded like the stages' threads= option: a typo such as 100000 would start that many threads.
  if (a.threads < 0 || a.threads > 1024)
    throw Error(ErrorKind::Usage, str("--threads ", a.threads, " is out of range (1 to 1024; 0 or absent: the CPUs this process may use)"));
  std::map<std::string, std::string> d{{"device", a.device}, {"tile", str(a.tile)}, {"batch", str(a.batch)}};
  if (!a.precision.empty()) d["precision"] = a.precision;
  if (a.threads > 0) d["threads"] = str(a.threads);
  if (a.tile_overlap >= 0) d["tile_overlap"] = str(a.tile_overlap);
  // Only when asked for: a job's saved defaults (its fingerprint) stay those of older versions.
  if (a.tile_batch != 1) d["tile_batch"] = str(a.tile_batch);
  if (!a.max_memory.empty()) {
    // The floor of the stages' max_memory option (pipeline/option_schema.cpp), said in the
    // option's own name, and checked when no stage would read it too.
    constexpr int64_t kMinBudget = int64_t(16) << 20;
    int64_t bytes = 0;
    try {
      bytes = parse_byte_size(a.max_memory);
    } catch (const Error&) {
      throw Error(ErrorKind::Usage, str("--max-memory ", a.max_memory, ": expected a size such as 512M or 4G"));
    }
    if (bytes < kMinBudget)
      throw Error(ErrorKind::Usage, str("--max-memory ", a.max_memory, " is too small: give at least 16M (e.g. 4G)"));
    d["max_memory"] = a.max_memory;
  }
  return d;
}

void add_encoder_options(CLI::App* cmd, EncoderArgs& a) {
  cmd->add_option("--crf", a.crf, "Constant quality for encoders that have it");
  cmd->add_option("-e,--encoder-option", a.options, "Encoder option KEY=VALUE (repeatable)");
}

void apply_encoder_options(const EncoderArgs& a, RunRequest& request) {
  if (a.crf >= 0) request.crf = a.crf;
  for (const std::string& kv : a.options) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw Error(ErrorKind::Usage, str("-e expects KEY=VALUE, got '", kv, "'"));
    request.encoder_options[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
}

}  // namespace framelift::cli
