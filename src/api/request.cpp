#include "api/request.h"

#include <algorithm>
#include <cmath>

#include "framelift/values.h"
#include "framelift/version.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::api {

pipeline::ProgressMode progress_mode_of(ProgressDisplay display) {
  switch (display) {
    case ProgressDisplay::Auto: return pipeline::ProgressMode::Auto;
    case ProgressDisplay::Bar: return pipeline::ProgressMode::Bar;
    case ProgressDisplay::JsonLines: return pipeline::ProgressMode::Json;
    case ProgressDisplay::None: break;
  }
  return pipeline::ProgressMode::None;
}

lifecycle::LifecycleOptions lifecycle_of(const MachineLifecycle& m) {
  lifecycle::LifecycleOptions l;
  l.watch_preemption = lifecycle::parse_watch_provider(name_of(m.watch_preemption));
  l.on_complete = m.on_complete;
  l.on_fail = m.on_fail;
  l.shutdown_when_done = m.shutdown_when_done;
  l.shutdown_command = m.shutdown_command;
  if (m.hourly_price) {
    if (!std::isfinite(*m.hourly_price) || *m.hourly_price < 0)
      throw Error(ErrorKind::Usage, str("--hourly-price: ", *m.hourly_price, " is not a price in USD per hour (e.g. 0.79)"));
    l.hourly_price = *m.hourly_price;
  }
  return l;
}

pipeline::RunOptions run_options_of(const RunRequest& q) {
  pipeline::RunOptions r;
  r.input = q.input;
  r.output = q.output;
  r.container = q.container;
  r.pipeline = q.pipeline;
  r.stage_defaults = q.stage_defaults;
  if (q.policy) r.max_frame_pixels = q.policy->max_frame_pixels;
  r.encoder.codec = q.codec;
  r.encoder.crf = q.crf;
  r.encoder.preset = q.preset;
  r.encoder.pix_fmt = q.pix_fmt;
  r.encoder.options = q.encoder_options;
  r.decoder.hwaccel = name_of(q.hwaccel);
  r.decoder.on_error = q.fail_on_corrupt_frames ? media::DecodeErrorPolicy::Fail : media::DecodeErrorPolicy::Skip;
  r.color_conversion = media::parse_color_conversion(name_of(q.color_conversion));
  if (q.queue_depth < 1) throw Error(ErrorKind::Usage, "--queue-depth must be at least 1");
  r.queue_depth = q.queue_depth;
  r.max_frames = q.max_frames;
  r.overwrite = q.overwrite;
  r.progress = progress_mode_of(q.display);
  return r;
}

jobs::SegmentSelection selection_of(const SegmentRange& r) {
  if (r.first < 0 || (r.last >= 0 && r.last < r.first))
    throw Error(ErrorKind::Usage, str("--segments ", name_of(r), ": the range is empty"));
  jobs::SegmentSelection s;
  s.first = r.first;
  s.last = r.last;
  return s;
}

pipeline::JobOptions job_options_of(const RunRequest& q) {
  pipeline::JobOptions o;
  o.run = run_options_of(q);
  o.job_dir = q.job_dir;
  o.segment_frames = q.segment_frames;
  o.restart = q.restart;
  o.prepare_only = q.prepare_only;
  o.assemble = q.assemble;
  o.keep_job_dir = q.keep_job_dir;
  o.warm_segments = q.warm_segments;
  o.progress = o.run.progress;
  o.framelift_version = version();
  o.claim_stale_after = std::chrono::seconds(std::max(5, q.claim_timeout_s));
  o.lifecycle = lifecycle_of(q.lifecycle);
  if (q.shard && q.segments) throw Error(ErrorKind::Usage, "give --shard or --segments, not both");
  // The text form goes through the one parser, which checks K < N and reads an automatic
  // shard's index from the array engine's environment, here on the worker.
  if (q.shard) o.selection = jobs::parse_shard(name_of(*q.shard));
  if (q.segments) o.selection = selection_of(*q.segments);
  // A worker of a larger job leaves assembling to the assemble step.
  if (o.selection.sharded()) o.assemble = false;
  for (const std::string& device : q.devices)
    if (!device.empty()) o.devices.push_back(device);
  return o;
}

RunRequest request_of(const jobs::RunSpec& s, int64_t segment_frames) {
  RunRequest q;
  q.input = s.input;
  q.output = s.output.string();
  q.container = s.container;
  q.pipeline = s.pipeline;
  q.stage_defaults = s.stage_defaults;
  q.codec = s.encoder.codec;
  q.crf = s.encoder.crf;
  q.preset = s.encoder.preset;
  q.pix_fmt = s.encoder.pix_fmt;
  q.encoder_options = s.encoder.options;
  q.hwaccel = parse_hwaccel(s.decoder.hwaccel.empty() ? "none" : s.decoder.hwaccel);
  q.fail_on_corrupt_frames = s.decoder.on_error == media::DecodeErrorPolicy::Fail;
  q.color_conversion = parse_color_conversion(media::color_conversion_name(s.color_conversion));
  q.queue_depth = static_cast<int>(s.queue_depth);
  q.max_frames = s.max_frames;
  q.segment_frames = segment_frames;
  return q;
}

}  // namespace framelift::api
