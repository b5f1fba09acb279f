#include "api/video_shape.h"

#include "util/error.h"
#include "util/str.h"

namespace framelift::api {
namespace {

AVFieldOrder av_field_order(FieldOrder o) {
  switch (o) {
    case FieldOrder::Progressive: return AV_FIELD_PROGRESSIVE;
    case FieldOrder::TopFirst: return AV_FIELD_TT;
    case FieldOrder::BottomFirst: return AV_FIELD_BB;
    case FieldOrder::Unknown: break;
  }
  return AV_FIELD_UNKNOWN;
}

FieldOrder field_order_of(AVFieldOrder o) {
  switch (o) {
    case AV_FIELD_PROGRESSIVE: return FieldOrder::Progressive;
    case AV_FIELD_TT: case AV_FIELD_TB: return FieldOrder::TopFirst;
    case AV_FIELD_BB: case AV_FIELD_BT: return FieldOrder::BottomFirst;
    default: return FieldOrder::Unknown;
  }
}

}  // namespace

media::VideoFormat format_of(const VideoShape& s, const char* caller) {
  if (s.width <= 0 || s.height <= 0) throw Error(ErrorKind::Usage, str(caller, ": size ", s.width, "x", s.height));
  if (s.time_base_num <= 0 || s.time_base_den <= 0)
    throw Error(ErrorKind::Usage, str(caller, ": time base ", s.time_base_num, "/", s.time_base_den));
  media::VideoFormat f;
  f.width = s.width;
  f.height = s.height;
  f.pix_fmt = AV_PIX_FMT_RGB24;
  f.time_base = {s.time_base_num, s.time_base_den};
  f.frame_rate = {s.frame_rate_num, s.frame_rate_den > 0 ? s.frame_rate_den : 1};
  f.start_pts = s.start_pts;
  f.field_order = av_field_order(s.field_order);
  if (s.sample_aspect_num > 0 && s.sample_aspect_den > 0) f.sample_aspect = {s.sample_aspect_num, s.sample_aspect_den};
  f.range = AVCOL_RANGE_JPEG;
  return f;
}

VideoShape shape_of(const media::VideoFormat& f) {
  VideoShape s;
  s.width = f.width;
  s.height = f.height;
  s.frame_rate_num = f.frame_rate.num;
  s.frame_rate_den = f.frame_rate.den;
  s.time_base_num = f.time_base.num;
  s.time_base_den = f.time_base.den;
  s.start_pts = f.start_pts == AV_NOPTS_VALUE ? 0 : f.start_pts;
  s.field_order = field_order_of(f.field_order);
  if (f.sample_aspect.num > 0 && f.sample_aspect.den > 0) {
    s.sample_aspect_num = f.sample_aspect.num;
    s.sample_aspect_den = f.sample_aspect.den;
  }
  return s;
}

}  // namespace framelift::api
