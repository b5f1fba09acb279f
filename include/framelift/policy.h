#pragma once
// What a pipeline may do when the caller did not write it: a remote user's text in `framelift
// serve`, a customer's in an embedding service. A pipeline's text reaches libavfilter (stage
// `filter`), opens model files (upscale:model=, denoise:model=, interpolate:model=, model:file=)
// and masks (model:mask=), and picks devices and sizes. Without a policy it may do all of it, as
// the CLI's own user may. With one, it may only:
//
//   - use libavfilter filters on `filters` (default: default_safe_filters(), which has no filter
//     that opens files, loads plugins or takes commands: no movie, amovie, ladspa, lv2, frei0r,
//     subtitles, drawtext, metadata, sendcmd, zmq, ...), with no option that names a file (file=,
//     filename=, textfile=, fontfile=, psfile=, stats_file=, ...). The graph is checked as
//     libavfilter reads it (quotes, escapes, labels, `name@id`, positional options), before any
//     filter is created.
//   - open model and mask files inside `file_roots` (and the model cache when allow_model_cache),
//     after every symlink and `..` is resolved. Model names (catalog, installed) are always fine.
//   - set device= to one of `devices` (default none: the caller's defaults pick the device).
//   - set resize w=/h=, tile= and batch=/tile_batch= up to the bounds below, and make frames of
//     at most max_frame_pixels.
//
// Pipeline's policy constructor and RunRequest::policy apply it; Job (job.h), plan_job (plan.h)
// and profile (profile.h) take none: call check_pipeline() before handing them a text.
//
// Options the caller passes as defaults (Pipeline's `defaults`, RunRequest::stage_defaults) are
// the caller's own and are not checked. A refusal is Error(Usage) with one line naming the stage,
// the filter or option and why; nothing was opened, loaded or created by then.
//
// Usage:
//
//   framelift::PipelinePolicy policy;
//   policy.file_roots = {"/srv/media"};
//   framelift::check_pipeline(text_from_a_client, policy);      // throws Error(Usage)
//   framelift::Pipeline p(text_from_a_client, {{"device", "cuda:0"}}, policy);
//
// Thread-safety: PipelinePolicy is a value; check_pipeline() may be called from any thread.
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace framelift {

struct PipelinePolicy {
  std::set<std::string> filters;                  // empty: default_safe_filters()
  std::vector<std::filesystem::path> file_roots;  // folders model and mask files may be in; empty: none
  bool allow_model_cache = true;                  // files inside the model cache too
  std::vector<std::string> devices;               // device= values the text may set; empty: none
  int max_frame_size = 8192;                      // resize w=, h= (pixels); 0: the stage's own 16384
  int max_tile = 2048;                            // tile= (pixels); 0: the stage's own 16384
  int max_batch = 16;                             // batch=, tile_batch=; 0: the stage's own 256
  // The largest frame any stage may make (scale factors, filter graphs' scale=), checked when the
  // stages are configured, before a frame is decoded (Pipeline::configure, run()); 0: any.
  int64_t max_frame_pixels = int64_t(8192) * 8192;
};

// The filters a policy with no `filters` allows: geometry, colour, sharpening, denoising, boxes,
// timing and stacking (scale, crop, pad, eq, curves, unsharp, hqdn3d, nlmeans, drawbox, fps, split,
// overlay, ...; `framelift stages` does not list them, docs/server.md points here).
const std::set<std::string>& default_safe_filters();

// Throws Error(Usage) for the first thing in `pipeline` (the --pipeline text) that `policy`
// refuses, and for text that does not parse. Opens no model, creates no filter it refuses.
void check_pipeline(const std::string& pipeline, const PipelinePolicy& policy);

}  // namespace framelift
