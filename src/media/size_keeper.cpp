#include "media/size_keeper.h"

#include <cstdio>

extern "C" {
#include <libavutil/pixdesc.h>
}

#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::media {

SizeKeeper::SizeKeeper(const VideoFormat& first, std::string url) : first_(first), url_(std::move(url)) {}

FilterGraph& SizeKeeper::graph_for(const AVFrame* frame) {
  const Shape shape{frame->width, frame->height, frame->format};
  auto it = graphs_.find(shape);
  if (it != graphs_.end()) return *it->second;
  VideoFormat in = VideoFormat::of_frame(frame, first_.time_base, first_.frame_rate);
  const int w = first_.width, h = first_.height;
  const AVRational sar = first_.sample_aspect.num > 0 ? first_.sample_aspect : AVRational{1, 1};
  // Fit inside the first size, bars centred; setsar keeps the first frames' pixel aspect so the
  // encoder sees one aspect throughout.
  const std::string graph = str("scale=", w, ":", h, ":force_original_aspect_ratio=decrease:force_divisible_by=1,",
                                "pad=", w, ":", h, ":(ow-iw)/2:(oh-ih)/2:black,setsar=", sar.num, "/", sar.den);
  auto made = std::make_unique<FilterGraph>(in, graph, str(url_, ": fitting a new frame size"),
                                            std::vector<AVPixelFormat>{first_.pix_fmt});
  const char* name = av_get_pix_fmt_name(AVPixelFormat(frame->format));
  char when[32];
  std::snprintf(when, sizeof when, "%.3f s", frame->pts == AV_NOPTS_VALUE ? 0.0 : double(frame->pts) * av_q2d(first_.time_base));
  log::warn(url_, ": the video changes size at ", when, " (", w, "x", h, " to ", frame->width, "x", frame->height,
            name ? str(" ", name) : std::string(), "); those frames are fitted into ", w, "x", h, " with black bars");
  return *graphs_.emplace(shape, std::move(made)).first->second;
}

FramePtr SizeKeeper::keep(FramePtr frame) {
  if (frame->width == first_.width && frame->height == first_.height && frame->format == first_.pix_fmt) return frame;
  FilterGraph& graph = graph_for(frame.get());
  const int64_t pts = frame->pts;
  FramePtr fitted;
  graph.push(std::move(frame));
  graph.pull([&](FramePtr f) { fitted = std::move(f); });
  if (!fitted) throw Error(ErrorKind::Input, str(url_, ": a frame of a new size could not be fitted"));
  fitted->pts = pts;
  ++fitted_;
  return fitted;
}

}  // namespace framelift::media
