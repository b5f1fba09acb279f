#include "framelift/process.h"

#include "media/av_log_bridge.h"
#include "util/stop.h"

namespace framelift {

void install_signal_handlers() { install_stop_signals(); }

void route_ffmpeg_log() { media::install_av_log_bridge(); }

}  // namespace framelift
