#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <vector>

#include "cli/commands.h"
#include "cli/inference_options.h"
#include "cli/job_options.h"
#include "cli/value_checks.h"
#include "framelift/models.h"
#include "framelift/pipeline.h"
#include "framelift/run.h"
#include "framelift/values.h"
#include "framelift/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::cli {
namespace {

// A stage option's default as its schema declares it (the one place it is spelled), for the
// shortcut commands' flags that set that option.
std::string schema_default(const std::string& stage, const std::string& option) {
  static const std::vector<StageInfo> stages = list_stages();  // asked four times as the CLI starts
  for (const StageInfo& info : stages)
    if (info.name == stage)
      for (const StageOptionInfo& o : info.options)
        if (o.name == option) return o.default_value;
  throw Error(ErrorKind::Usage, str("stage ", stage, " declares no option ", option));
}

// The flags, bound to the public request they fill (framelift/run.h); strings for choices are
// turned into typed values here or by the API, never further in.
struct RunArgs {
  RunRequest options;
  EncoderArgs encoder;
  std::string on_decode_error = "skip";
  std::string progress = "auto";
  std::string hwaccel = "none";
  int64_t queue_depth = 8;
  InferenceArgs inference;  // passed to every stage as defaults (RunRequest::stage_defaults)
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
std::string image_codec_for(const std::string& output) { return image_codec_for(std::filesystem::path(output)); }

// Options shared by `run` and `upscale`.
void add_common_options(CLI::App* cmd, RunArgs& a) {
  auto& o = a.options;
  cmd->add_option("-i,--input", o.input, "Input file or URL; a folder or a .txt list: a batch (then -o is a folder)")->required();
  cmd->add_option("-o,--output", o.output, "Output file (the extension picks the container), or folder for a batch")->required();
  cmd->add_flag("-y,--overwrite", o.overwrite, "Replace an existing output file");
  cmd->add_option("-c,--codec", o.codec, "Video encoder: libx264 (default), libx265, libsvtav1, ffv1, prores_ks, h264_nvenc, ...");
  cmd->add_option("--preset", o.preset, "Encoder preset");
  cmd->add_option("--pix-fmt", o.pix_fmt, "Output pixel format (default: the input's, so its bit depth is kept)");
  add_encoder_options(cmd, a.encoder);
  cmd->add_option("--hwaccel", a.hwaccel, "Hardware decoding: none, auto, cuda, vaapi, ...")->capture_default_str();
  cmd->add_option("--on-decode-error", a.on_decode_error, "skip: drop corrupt frames and report them; fail: stop")
      ->capture_default_str();
  cmd->add_option("--progress", a.progress, "auto (bar on a terminal), bar, json (lines on stdout), none")
      ->capture_default_str();
  cmd->add_option("--queue-depth", a.queue_depth, "Frames buffered between decode, stages and encode")
      ->capture_default_str();
  cmd->add_option("--frames", o.max_frames, "Process only the first N frames (a quick sample)")->check(whole_at_least(1));
  cmd->add_option("-f,--format", o.container, "Force the output container (e.g. matroska, mp4)");
  add_inference_options(cmd, a.inference);
  add_job_options(cmd, a.job);
}

int execute(RunArgs& a) {
  RunRequest& o = a.options;
  apply_encoder_options(a.encoder, o);
  if (o.codec.empty()) o.codec = image_codec_for(o.output);
  if (a.on_decode_error != "skip" && a.on_decode_error != "fail")
    throw Error(ErrorKind::Usage, str("--on-decode-error: expected skip or fail, got '", a.on_decode_error, "'"));
  o.fail_on_corrupt_frames = a.on_decode_error == "fail";
  o.display = parse_progress_display(a.progress);
  if (a.queue_depth < 1 || a.queue_depth > 1024) throw Error(ErrorKind::Usage, "--queue-depth must be 1-1024");
  o.queue_depth = static_cast<int>(a.queue_depth);
  o.stage_defaults = stage_defaults(a.inference);
  o.color_conversion = parse_color_conversion(a.inference.color_conversion);
  o.hwaccel = parse_hwaccel(a.hwaccel);
  apply_job_args(a.job, o);
  // Still images and image sequences are written file by file: nothing to segment or resume.
  const std::filesystem::path output(o.output);
  if (!image_codec_for(output).empty() || output.filename().string().find('%') != std::string::npos) o.as_job = false;
  return run_request(o);
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
  auto model = std::make_shared<std::string>(schema_default("upscale", "model"));
  auto scale = std::make_shared<double>(0);
  add_common_options(cmd, *a);
  auto* model_option = cmd->add_option("-m,--model", *model, "Model name or file (.param, .pth, .safetensors)")->capture_default_str();
  auto quality = std::make_shared<std::string>();
  cmd->add_option("--quality", *quality, "fast, balanced or best: pick among installed models (see `framelift models list`)")
      ->excludes(model_option);
  // The upscale stage's scale range (pipeline/upscale_stage.cpp), said with the flag's name.
  cmd->add_option("-s,--scale", *scale, "Output scale; differs from the model's -> final lanczos resize (default: the model's)")
      ->check(positive_up_to(16));
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
        *model = pick_upscale_model(*quality);
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
  auto model = std::make_shared<std::string>(schema_default("interpolate", "model"));
  add_common_options(cmd, *a);
  cmd->add_option("-m,--model", *model, "RIFE model: name, flownet.param, folder, or a flownet.pkl")->capture_default_str();
  auto* factor = cmd->add_option_function<int>("--factor", [stage](int n) { (*stage)["factor"] = str(n); },
                                               str("Multiply the frame rate by N (default ", schema_default("interpolate", "factor"), ")"));
  cmd->add_option_function<std::string>("--fps", [stage](const std::string& f) { (*stage)["fps"] = f; },
                                        "Target frame rate: 60, 59.94, 60000/1001 (any input rate, VFR too)")
      ->excludes(factor);
  cmd->add_option_function<double>("--scene", [stage](double t) { (*stage)["scene"] = str(t); },
                                   str("Scene-cut threshold (default ", schema_default("interpolate", "scene"), "; 0 morphs across cuts)"));
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
