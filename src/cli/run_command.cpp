#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>

#include "cli/commands.h"
#include "library/model_cache.h"
#include "library/quality.h"
#include "cli/job_options.h"
#include "pipeline/batch_runner.h"
#include "pipeline/job_runner.h"
#include "pipeline/runner.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::cli {
namespace {

struct RunArgs {
  pipeline::RunOptions options;
  std::vector<std::string> encoder_options;
  std::string hwaccel = "none";
  std::string on_decode_error = "skip";
  std::string progress = "auto";
  double crf = -1;
  // Inference settings, passed to every stage as defaults (RunOptions::stage_defaults).
  std::string device = "auto", precision, max_memory;
  int threads = 0, tile = 0, tile_overlap = -1, batch = 1;
  JobArgs job;
};

// Output files that are still images get the matching image encoder unless -c says otherwise.
std::string image_codec_for(const std::filesystem::path& output) {
  std::string ext = output.extension().string();
  for (auto& c : ext) c = char(std::tolower(c));
  if (ext == ".png") return "png";
  if (ext == ".jpg" || ext == ".jpeg") return "mjpeg";
  if (ext == ".webp") return "libwebp";
  if (ext == ".tif" || ext == ".tiff") return "tiff";
  return "";
}

// Options shared by `run` and `upscale`.
void add_common_options(CLI::App* cmd, RunArgs& a) {
  auto& o = a.options;
  cmd->add_option("-i,--input", o.input, "Input file or URL; a folder or a .txt list: a batch (then -o is a folder)")->required();
  cmd->add_option("-o,--output", o.output, "Output file (the extension picks the container), or folder for a batch")->required();
  cmd->add_flag("-y,--overwrite", o.overwrite, "Replace an existing output file");
  cmd->add_option("-c,--codec", o.encoder.codec, "Video encoder: libx264 (default), libx265, libsvtav1, ffv1, prores_ks, h264_nvenc, ...");
  cmd->add_option("--crf", a.crf, "Constant quality for encoders that have it");
  cmd->add_option("--preset", o.encoder.preset, "Encoder preset");
  cmd->add_option("--pix-fmt", o.encoder.pix_fmt, "Output pixel format (default: the input's, so its bit depth is kept)");
  cmd->add_option("-e,--encoder-option", a.encoder_options, "Encoder option KEY=VALUE (repeatable)");
  cmd->add_option("--hwaccel", a.hwaccel, "Hardware decoding: none, auto, cuda, vaapi, ...")->capture_default_str();
  cmd->add_option("--on-decode-error", a.on_decode_error, "skip: drop corrupt frames and report them; fail: stop")
      ->capture_default_str();
  cmd->add_option("--progress", a.progress, "auto (bar on a terminal), bar, json (lines on stdout), none")
      ->capture_default_str();
  cmd->add_option("--queue-depth", o.queue_depth, "Frames buffered between decode, stages and encode")
      ->capture_default_str();
  cmd->add_option("--frames", o.max_frames, "Process only the first N frames (a quick sample)");
  cmd->add_option("-f,--format", o.container, "Force the output container (e.g. matroska, mp4)");
  auto* g = "Inference (defaults for every AI stage)";
  cmd->add_option("--device", a.device, "auto (CUDA when present), cpu, cuda, cuda:N")->capture_default_str()->group(g);
  cmd->add_option("--precision", a.precision, "fp32, fp16 or bf16 (default: fp16 on CUDA, fp32 on CPU)")->group(g);
  cmd->add_option("--threads", a.threads, "CPU threads (default: the CPUs this process may use)")->group(g);
  cmd->add_option("--tile", a.tile, "Tile size in input pixels (0: from the memory available)")->capture_default_str()->group(g);
  cmd->add_option("--tile-overlap", a.tile_overlap, "Context pixels around each tile (default: the model's)")->group(g);
  cmd->add_option("--batch", a.batch, "Frames per forward pass")->capture_default_str()->group(g);
  cmd->add_option("--max-memory", a.max_memory, "Memory budget for inference, e.g. 4G (CPU: host memory; CUDA: device memory)")
      ->group(g);
  add_job_options(cmd, a.job);
}

std::map<std::string, std::string> stage_defaults(const RunArgs& a) {
  std::map<std::string, std::string> d{{"device", a.device}, {"tile", str(a.tile)}, {"batch", str(a.batch)}};
  if (!a.precision.empty()) d["precision"] = a.precision;
  if (a.threads > 0) d["threads"] = str(a.threads);
  if (a.tile_overlap >= 0) d["tile_overlap"] = str(a.tile_overlap);
  if (!a.max_memory.empty()) d["max_memory"] = a.max_memory;
  return d;
}

int execute(RunArgs& a) {
  auto& o = a.options;
  if (a.crf >= 0) o.encoder.crf = a.crf;
  for (const std::string& kv : a.encoder_options) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw Error(ErrorKind::Usage, str("-e expects KEY=VALUE, got '", kv, "'"));
    o.encoder.options[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  if (o.encoder.codec.empty()) o.encoder.codec = image_codec_for(o.output);
  o.decoder.hwaccel = a.hwaccel;
  if (a.on_decode_error == "skip") o.decoder.on_error = media::DecodeErrorPolicy::Skip;
  else if (a.on_decode_error == "fail") o.decoder.on_error = media::DecodeErrorPolicy::Fail;
  else throw Error(ErrorKind::Usage, str("--on-decode-error: expected skip or fail, got '", a.on_decode_error, "'"));
  o.progress = pipeline::parse_progress_mode(a.progress);
  if (o.queue_depth < 1) throw Error(ErrorKind::Usage, "--queue-depth must be at least 1");
  if (a.threads < 0) throw Error(ErrorKind::Usage, "--threads must be positive");
  o.stage_defaults = stage_defaults(a);
  // Still images and image sequences are written file by file: nothing to segment or resume.
  const bool images = !image_codec_for(o.output).empty() || o.output.filename().string().find('%') != std::string::npos;
  if ((a.job.no_job || images) && !pipeline::is_batch_input(o.input)) {
    pipeline::RunReport report = pipeline::run_pipeline(o);
    if (report.decode_errors) log::warn(o.input, ": ", report.decode_errors, " corrupt frame(s) or packet(s) were skipped");
    log::info(report.summary());
    return 0;
  }
  return run_as_job(o, a.job);
}

}  // namespace

void add_run_command(CLI::App& app, Command& selected) {
  auto* cmd = app.add_subcommand("run", "Run a pipeline of stages over a video and encode the result");
  auto a = std::make_shared<RunArgs>();
  add_common_options(cmd, *a);
  cmd->add_option("--pipeline", a->options.pipeline, "Stages, comma-separated: NAME:KEY=VALUE:... (see `framelift stages`)");
  cmd->footer(
      "Examples:\n"
      "  framelift run -i in.mkv -o out.mkv                                  # pass-through re-encode\n"
      "  framelift run -i in.mp4 -o out.mkv --pipeline \"resize:scale=2\" -c libx265 --crf 18\n"
      "  framelift run -i in.mkv -o out.mkv --pipeline \"upscale:model=realesr-animevideov3-x2\"\n"
      "  framelift run -i in.mkv -o out.mkv -c ffv1 --progress json");
  cmd->callback([a, &selected] { selected = [a] { return execute(*a); }; });
}

void add_upscale_command(CLI::App& app, Command& selected) {
  auto* cmd = app.add_subcommand("upscale", "AI-upscale a video or a still image (png/jpg/webp) with a model");
  auto a = std::make_shared<RunArgs>();
  auto model = std::make_shared<std::string>("realesr-animevideov3-x2");
  auto scale = std::make_shared<double>(0);
  add_common_options(cmd, *a);
  auto* model_option = cmd->add_option("-m,--model", *model, "Model name or file (.param, .pth, .safetensors)")->capture_default_str();
  auto quality = std::make_shared<std::string>();
  cmd->add_option("--quality", *quality, "fast, balanced or best: pick among installed models (see `framelift models list`)")
      ->excludes(model_option);
  cmd->add_option("-s,--scale", *scale, "Output scale; differs from the model's -> final lanczos resize (default: the model's)");
  cmd->footer(
      "Examples:\n"
      "  framelift upscale -i clip.mkv -o clip_x2.mkv\n"
      "  framelift upscale -i photo.png -o photo_x4.png -m realesrgan-x4plus\n"
      "  framelift upscale -i clip.mp4 -o out.mkv -m 4x-model.pth -s 2 -c libx265 --crf 18\n"
      "  framelift upscale -i big.mkv -o out.mkv -m realesrgan-x4plus --device cuda --precision fp16 --batch 4\n"
      "  framelift upscale -i clip.mkv -o out.mkv --quality best\n"
      "--quality: fast = Compact (realesr-animevideov3), balanced = Real-CUGAN, best = ESRGAN (realesrgan-x4plus).");
  cmd->callback([=, &selected] {
    selected = [=] {
      if (!quality->empty()) {
        *model = library::pick_upscale_model(library::ModelCache::open_default().list(), library::parse_quality(*quality));
        log::info("--quality ", *quality, ": model ", *model);
      }
      a->options.pipeline = str("upscale:model=", *model, *scale > 0 ? str(":scale=", *scale) : "");
      return execute(*a);
    };
  });
}

void add_interpolate_command(CLI::App& app, Command& selected) {
  auto* cmd = app.add_subcommand("interpolate", "Raise or convert a video's frame rate with RIFE frame interpolation");
  auto a = std::make_shared<RunArgs>();
  auto stage = std::make_shared<std::map<std::string, std::string>>();
  auto model = std::make_shared<std::string>("rife-v4.6");
  add_common_options(cmd, *a);
  cmd->add_option("-m,--model", *model, "RIFE model: name, flownet.param, folder, or a flownet.pkl")->capture_default_str();
  auto* factor = cmd->add_option_function<int>("--factor", [stage](int n) { (*stage)["factor"] = str(n); },
                                               "Multiply the frame rate by N (default 2)");
  cmd->add_option_function<std::string>("--fps", [stage](const std::string& f) { (*stage)["fps"] = f; },
                                        "Target frame rate: 60, 59.94, 60000/1001 (any input rate, VFR too)")
      ->excludes(factor);
  cmd->add_option_function<double>("--scene", [stage](double t) { (*stage)["scene"] = str(t); },
                                   "Scene-cut threshold (default 0.12; 0 morphs across cuts)");
  cmd->add_option_function<double>("--dedup", [stage](double t) { (*stage)["dedup"] = str(t); },
                                   "Skip input frames that repeat the previous one (difference below T, e.g. 0.002)");
  cmd->add_option_function<double>("--scale", [stage](double s) { (*stage)["scale"] = str(s); },
                                   "RIFE flow scale: 1 up to 1080p, 0.5 for 4K (native weights)");
  cmd->add_flag_function("--ensemble", [stage](int64_t) { (*stage)["ensemble"] = "1"; },
                         "Average with the swapped pair (slower, steadier)");
  cmd->footer(
      "Examples:\n"
      "  framelift interpolate -i clip.mkv -o clip_x2.mkv\n"
      "  framelift interpolate -i film.mkv -o film60.mkv --fps 60\n"
      "  framelift run -i in.mkv -o out.mkv --pipeline \"upscale:model=realesr-animevideov3-x2,interpolate:fps=60\"");
  cmd->callback([=, &selected] {
    selected = [=] {
      std::string spec = "interpolate:model=" + *model;
      for (const auto& [k, v] : *stage) spec += ":" + k + "=" + v;
      a->options.pipeline = spec;
      return execute(*a);
    };
  });
}

}  // namespace framelift::cli
