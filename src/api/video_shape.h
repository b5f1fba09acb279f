#pragma once
// The public VideoShape (framelift/pipeline.h) and the engine's media::VideoFormat, both ways.
#include "framelift/pipeline.h"
#include "media/video_format.h"

namespace framelift::api {

// Frames in memory are RGB, full range. Throws Error(Usage) for a bad size or time base, naming
// `caller` ("Pipeline::configure", "Sink").
media::VideoFormat format_of(const VideoShape& shape, const char* caller);
VideoShape shape_of(const media::VideoFormat& format);

}  // namespace framelift::api
