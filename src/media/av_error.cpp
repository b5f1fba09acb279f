#include "media/av_error.h"

#include <cerrno>

extern "C" {
#include <libavutil/error.h>
}

#include "media/av_ptr.h"
#include "util/disk_space.h"
#include "util/str.h"

namespace framelift::media {

std::string av_error_text(int errnum) {
  // Give the user a reason they can act on for the errors seen most in practice.
  for (int err : {ENOSPC, EDQUOT, EFBIG})
    if (errnum == AVERROR(err)) return write_error_text(err);
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(errnum, buf, sizeof buf);
  return buf;
}

int check(int ret, ErrorKind kind, const std::string& what) {
  if (ret < 0) throw Error(kind, str(what, ": ", av_error_text(ret)));
  return ret;
}

FramePtr make_frame() {
  FramePtr f(av_frame_alloc());
  if (!f) throw Error(ErrorKind::Resource, "out of memory allocating a frame");
  return f;
}

PacketPtr make_packet() {
  PacketPtr p(av_packet_alloc());
  if (!p) throw Error(ErrorKind::Resource, "out of memory allocating a packet");
  return p;
}

}  // namespace framelift::media
