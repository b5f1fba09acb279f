#include "media/filter_graph.h"

extern "C" {
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
}

#include "media/av_error.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::media {
namespace {

FilterInOutPtr endpoint(const char* label, AVFilterContext* filter) {
  FilterInOutPtr io(avfilter_inout_alloc());
  if (!io) throw Error(ErrorKind::Resource, "out of memory building a filter graph");
  io->name = av_strdup(label);
  io->filter_ctx = filter;
  io->pad_idx = 0;
  io->next = nullptr;
  if (!io->name) throw Error(ErrorKind::Resource, "out of memory building a filter graph");
  return io;
}

// The first filter name in `description` libavfilter does not know, or "". Only for the error
// message: libavfilter itself says just "Invalid argument" (its log line is debug output here).
std::string unknown_filter(const std::string& description) {
  size_t pos = 0;
  while (pos < description.size()) {
    while (pos < description.size() && (description[pos] == ' ' || description[pos] == '[')) {
      if (description[pos] == '[') pos = description.find(']', pos);
      if (pos == std::string::npos) return "";
      ++pos;
    }
    const size_t end = description.find_first_of("=@,;[ ", pos);
    const std::string name = description.substr(pos, end - pos);
    if (!name.empty() && !avfilter_get_by_name(name.c_str())) return name;
    // Skip the options, quoted or escaped separators included, to the next filter.
    size_t next = end;
    for (bool quoted = false; next < description.size(); ++next) {
      const char c = description[next];
      if (c == '\\') ++next;
      else if (c == '\'') quoted = !quoted;
      else if (!quoted && (c == ',' || c == ';')) break;
    }
    pos = next == std::string::npos ? next : next + 1;
  }
  return "";
}

}  // namespace

FilterGraph::FilterGraph(const VideoFormat& in, const std::string& description, std::string what,
                         std::vector<AVPixelFormat> sink_formats)
    : what_(std::move(what)), graph_(avfilter_graph_alloc()) {
  if (!graph_) throw Error(ErrorKind::Resource, "out of memory building a filter graph");
  if (description.empty()) throw Error(ErrorKind::Usage, str(what_, ": the filter graph is empty"));
  const char* pix_name = av_get_pix_fmt_name(in.pix_fmt);
  if (!pix_name) throw Error(ErrorKind::Internal, str(what_, ": input has no pixel format"));
  // An unknown aspect is fed as square: buffersrc wants a valid ratio. output_format() then
  // reports the input's own (unknown) aspect unless the graph changed it.
  fed_aspect_ = in.sample_aspect.num > 0 && in.sample_aspect.den > 0 ? in.sample_aspect : AVRational{1, 1};
  std::string args = str("video_size=", in.width, "x", in.height, ":pix_fmt=", pix_name, ":time_base=",
                         in.time_base.num, "/", in.time_base.den, ":pixel_aspect=", fed_aspect_.num, "/",
                         fed_aspect_.den);
  if (in.frame_rate.num > 0 && in.frame_rate.den > 0)
    args += str(":frame_rate=", in.frame_rate.num, "/", in.frame_rate.den);
  check(avfilter_graph_create_filter(&source_, avfilter_get_by_name("buffer"), "in", args.c_str(), nullptr,
                                     graph_.get()),
        ErrorKind::Internal, str(what_, ": filter graph source"));
  check(avfilter_graph_create_filter(&sink_, avfilter_get_by_name("buffersink"), "out", nullptr, nullptr, graph_.get()),
        ErrorKind::Internal, str(what_, ": filter graph sink"));
  if (!sink_formats.empty()) {
    sink_formats.push_back(AV_PIX_FMT_NONE);
    check(av_opt_set_int_list(sink_, "pix_fmts", sink_formats.data(), AV_PIX_FMT_NONE, AV_OPT_SEARCH_CHILDREN),
          ErrorKind::Internal, str(what_, ": filter graph sink formats"));
  }

  // The description's unlabeled input reads from the source, its unlabeled output feeds the sink.
  FilterInOutPtr outputs = endpoint("in", source_), inputs = endpoint("out", sink_);
  AVFilterInOut* outputs_raw = outputs.release();
  AVFilterInOut* inputs_raw = inputs.release();
  int ret = avfilter_graph_parse_ptr(graph_.get(), description.c_str(), &inputs_raw, &outputs_raw, nullptr);
  outputs.reset(outputs_raw);  // whatever the parser left unconnected
  inputs.reset(inputs_raw);
  const std::string bad = str(what_, ": bad filter graph '", description, "'");
  if (ret < 0) {
    const std::string name = unknown_filter(description);
    throw Error(ErrorKind::Usage, name.empty() ? str(bad, ": ", av_error_text(ret), " (--log-level debug shows libavfilter's reason)")
                                               : str(bad, ": no filter named '", name, "'"));
  }
  if (outputs || inputs) throw Error(ErrorKind::Usage, str(bad, ": it must have exactly one video input and output"));
  // Parsed but not configurable: unconnected pads, impossible sizes, formats. libavfilter says
  // which in its log, which framelift shows at debug level only.
  if (int config = avfilter_graph_config(graph_.get(), nullptr); config < 0)
    throw Error(ErrorKind::Usage, str(bad, ": ", av_error_text(config), " (--log-level debug shows libavfilter's reason)"));
  if (av_buffersink_get_type(sink_) != AVMEDIA_TYPE_VIDEO)
    throw Error(ErrorKind::Usage, str(bad, ": its output is not video"));
}

VideoFormat FilterGraph::output_format(const VideoFormat& in) const {
  VideoFormat out = in;
  out.width = av_buffersink_get_w(sink_);
  out.height = av_buffersink_get_h(sink_);
  out.pix_fmt = AVPixelFormat(av_buffersink_get_format(sink_));
  out.time_base = av_buffersink_get_time_base(sink_);
  out.frame_rate = av_buffersink_get_frame_rate(sink_);
  if (out.frame_rate.den == 0) out.frame_rate = {0, 1};
  const AVRational aspect = av_buffersink_get_sample_aspect_ratio(sink_);
  if (av_cmp_q(aspect, fed_aspect_) != 0) out.sample_aspect = aspect;
  if (in.start_pts != AV_NOPTS_VALUE) out.start_pts = av_rescale_q(in.start_pts, in.time_base, out.time_base);
  return out;
}

void FilterGraph::push(FramePtr frame) {
  if (flushed_) throw Error(ErrorKind::Internal, str(what_, ": frame pushed after the end"));
  // av_buffersrc_add_frame takes the frame's references and leaves it empty; we free the shell.
  check(av_buffersrc_add_frame(source_, frame.get()), ErrorKind::Internal, str(what_, ": filtering a frame"));
}

void FilterGraph::pull(const Sink& sink) {
  for (;;) {
    FramePtr out = make_frame();
    int ret = av_buffersink_get_frame(sink_, out.get());
    if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) return;
    check(ret, ErrorKind::Internal, str(what_, ": filtering a frame"));
    sink(std::move(out));
  }
}

void FilterGraph::flush(const Sink& sink) {
  if (!flushed_) {
    flushed_ = true;
    check(av_buffersrc_add_frame(source_, nullptr), ErrorKind::Internal, str(what_, ": ending the filter graph"));
  }
  pull(sink);
}

}  // namespace framelift::media
