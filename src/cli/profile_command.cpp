// `framelift profile`: the real pipeline on a sample of the user's video, measured per stage and
// per section, written as a manifest (docs/planner.md) that `framelift plan --calibration` reads.
// A client of framelift::profile (include/framelift/profile.h).
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/inference_options.h"
#include "framelift/profile.h"
#include "framelift/values.h"

namespace framelift::cli {
namespace {

struct ProfileArgs {
  ProfileRequest request;
  InferenceArgs inference;
  EncoderArgs encoder;
  bool json = false;
};

int execute(ProfileArgs& a) {
  RunRequest& o = a.request.run;
  apply_encoder_options(a.encoder, o);
  o.stage_defaults = stage_defaults(a.inference);
  o.color_conversion = parse_color_conversion(a.inference.color_conversion);
  const ProfileResult r = profile(a.request);
  const std::string& text = a.json ? r.manifest_json : r.text;
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace

void add_profile_command(CLI::App& app, Command& selected) {
  auto* cmd = app.add_subcommand("profile", "Measure a pipeline on a sample of a video: time and memory per stage, a manifest for `plan`");
  auto a = std::make_shared<ProfileArgs>();
  auto& q = a->request;
  auto& o = q.run;
  cmd->add_option("-i,--input", o.input, "Input video")->required();
  cmd->add_option("--pipeline", o.pipeline, "Stages as for `framelift run`")->required();
  cmd->add_option("-o,--output", q.manifest_file, "Write the manifest (JSON) here");
  cmd->add_flag("-y,--overwrite", q.overwrite, "Replace an existing manifest");
  cmd->add_flag("--json", a->json, "Print the manifest instead of a table");
  cmd->add_option("--frames", q.frames, "Input frames to measure")->capture_default_str();
  cmd->add_option("--stretches", q.stretches, "Spread them over the clip in this many runs of consecutive frames")
      ->capture_default_str();
  cmd->add_option("--warmup", q.warmup_frames, "Frames run first and not measured")->capture_default_str();
  cmd->add_option("--seed", q.seed, "Place the stretches at random from this seed (0: evenly)")->capture_default_str();
  cmd->add_option("--keep-output", q.keep_output, "Also keep the encoded sample here");
  cmd->add_option("-c,--codec", o.codec, "Video encoder, as the job will use it");
  cmd->add_option("--preset", o.preset, "Encoder preset");
  cmd->add_option("--pix-fmt", o.pix_fmt, "Output pixel format");
  add_encoder_options(cmd, a->encoder);
  add_inference_options(cmd, a->inference);
  cmd->footer(
      "Examples:\n"
      "  framelift profile -i clip.mkv --pipeline \"upscale:model=realesr-animevideov3-x2\" -o rtx4090.json\n"
      "  framelift plan -i clip.mkv --pipeline \"upscale:model=realesr-animevideov3-x2\" --calibration rtx4090.json\n"
      "The manifest's fields: docs/planner.md.");
  cmd->callback([a, &selected] { selected = [a] { return execute(*a); }; });
}

}  // namespace framelift::cli
