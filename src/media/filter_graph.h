#pragma once
// A libavfilter graph with one video input and one video output: buffer source -> DESCRIPTION ->
// buffer sink. Stages that borrow an FFmpeg filter (filter, deinterlace, classical denoisers) use
// it; it knows nothing of tensors.
//
//   media::FilterGraph graph(format, "bwdif=mode=send_field", "stage deinterlace");
//   media::VideoFormat out = graph.output_format(format);  // size, rate, time base after it
//   graph.push(std::move(frame));   // frame->pts in format.time_base
//   graph.pull(sink);               // frames in out.time_base, as many as are ready
//   graph.flush(sink);              // at the end: what filters held back (temporal ones do)
//
// Ownership: push() takes the frame; sink receives frames it owns. Not thread-safe; one thread.
#include <functional>
#include <string>
#include <vector>

#include "media/av_ptr.h"
#include "media/video_format.h"

namespace framelift::media {

class FilterGraph {
 public:
  using Sink = std::function<void(FramePtr)>;

  // `input`: the frames that will be pushed (size, pixel format, time base, frame rate, aspect).
  // `sink_formats`: the pixel formats the caller accepts; libavfilter converts to the first one it
  // can reach (empty: whatever the graph gives). `what` prefixes every error ("stage filter").
  // Throws Error(Usage, "<what>: ...") when libavfilter rejects the description.
  FilterGraph(const VideoFormat& input, const std::string& description, std::string what,
              std::vector<AVPixelFormat> sink_formats = {});
  FilterGraph(const FilterGraph&) = delete;
  FilterGraph& operator=(const FilterGraph&) = delete;

  // `input` with what the graph changes: size, pixel format, time base, frame rate, aspect (and
  // start_pts rescaled to the new time base). Known right after construction, before any frame.
  VideoFormat output_format(const VideoFormat& input) const;

  void push(FramePtr frame);
  void pull(const Sink& sink);
  // Signals the end of the input and pulls everything left. No push() after it.
  void flush(const Sink& sink);

 private:
  std::string what_;
  FilterGraphPtr graph_;
  AVFilterContext* source_ = nullptr;  // owned by graph_
  AVFilterContext* sink_ = nullptr;    // owned by graph_
  AVRational fed_aspect_{0, 1};
  bool flushed_ = false;
};

}  // namespace framelift::media
