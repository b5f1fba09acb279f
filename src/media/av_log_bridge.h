#pragma once
// Routes FFmpeg's log into framelift's logger, so one --log-level filters both.

namespace framelift::media {

void install_av_log_bridge();

}  // namespace framelift::media
