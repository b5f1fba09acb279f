#pragma once
// Keeps every frame of a run at the size and pixel format of its first frame. A stream can change
// size mid-way (a broadcast switching programmes, two clips joined, an adaptive stream's
// variants); the stages, the encoder and the muxer are set up once, for the first size, and a
// frame of another size would come out as garbage or not at all. Such frames are scaled to fit
// the first size with their shape kept (letterboxed or pillarboxed, black bars), and the change
// is reported at warn level once per new size, naming the input, the time and both sizes.
//
// Not thread-safe; the decode thread's.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "media/av_ptr.h"
#include "media/filter_graph.h"
#include "media/video_format.h"

namespace framelift::media {

class SizeKeeper {
 public:
  // `first`: the run's first frame's format (its size, pixel format, aspect, time base).
  SizeKeeper(const VideoFormat& first, std::string url);
  // `frame` itself when it has the first size and format; else the fitted copy (same pts).
  FramePtr keep(FramePtr frame);
  // How many frames were fitted.
  int64_t fitted() const { return fitted_; }

 private:
  using Shape = std::tuple<int, int, int>;  // width, height, pixel format
  FilterGraph& graph_for(const AVFrame* frame);

  VideoFormat first_;
  std::string url_;
  std::map<Shape, std::unique_ptr<FilterGraph>> graphs_;
  int64_t fitted_ = 0;
};

}  // namespace framelift::media
