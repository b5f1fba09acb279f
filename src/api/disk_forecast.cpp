#include "api/disk_forecast.h"

#include "api/plan_pipeline.h"
#include "media/probe.h"
#include "plan/disk_model.h"
#include "util/error.h"
#include "util/log.h"

namespace framelift::api {

pipeline::DiskForecast disk_forecast(const RunRequest& q) {
  try {
    // No frame count: one pass over the packets is the segment plan's to make.
    const nlohmann::json info = media::probe(q.input, {.count_frames = false});
    const int v = info.value("video_stream", -1);
    if (v < 0) return {};
    const auto& s = info["streams"][v];
    plan::Job job;
    job.width = s.value("width", 0);
    job.height = s.value("height", 0);
    job.fps = s["frame_rate"].is_number() ? s["frame_rate"].get<double>() : 0;
    job.frames = 1;
    job.stages = plan_stages_for(q.pipeline, {job.width, job.height, job.fps});
    job.codec = q.codec.empty() ? "libx264" : q.codec;
    job.crf = q.crf;
    if (s.value("bits_per_pixel", 0) > 0) job.raw_bits_per_pixel = s["bits_per_pixel"].get<double>();
    pipeline::DiskForecast f;
    const double pixels = double(job.out_width()) * job.out_height();
    f.bytes_per_output_frame =
        plan::table_bits_per_pixel(job.codec, job.crf, job.raw_bits_per_pixel) * pixels / 8 + plan::kContainerBytesPerFrame;
    f.output_frames_per_input_frame = double(job.out_frames());
    return f;
  } catch (const Error& e) {
    log::debug("no disk forecast: ", e.what());
    return {};
  }
}

}  // namespace framelift::api
