#pragma once
// What a video stream looks like at one point of the pipeline: size, pixel format, timing, color.
// Stages transform it (resize changes the size, interpolation the rate), the encoder consumes it.
#include <cstdint>

extern "C" {
#include <libavcodec/codec_par.h>
#include <libavutil/avutil.h>
#include <libavutil/frame.h>
#include <libavutil/pixfmt.h>
#include <libavutil/rational.h>
}

namespace framelift::media {

struct VideoFormat {
  int width = 0;
  int height = 0;
  AVPixelFormat pix_fmt = AV_PIX_FMT_NONE;
  AVRational time_base{1, 25};     // timestamps of frames are in this unit
  AVRational frame_rate{0, 1};     // nominal (average) rate; 0/1 when unknown
  // Time of the whole video's first frame (time_base units; AV_NOPTS_VALUE: the first frame a
  // stage sees). Retiming stages lay their output grid from it, so that a job's segment, which
  // starts mid-video, puts its frames exactly where one uninterrupted run would.
  int64_t start_pts = AV_NOPTS_VALUE;
  AVRational sample_aspect{0, 1};
  AVColorPrimaries primaries = AVCOL_PRI_UNSPECIFIED;
  AVColorTransferCharacteristic transfer = AVCOL_TRC_UNSPECIFIED;
  AVColorSpace matrix = AVCOL_SPC_UNSPECIFIED;
  AVColorRange range = AVCOL_RANGE_UNSPECIFIED;
  AVChromaLocation chroma_location = AVCHROMA_LOC_UNSPECIFIED;
  // How the source's pictures are scanned: AV_FIELD_TT/BB/TB/BT interlaced, PROGRESSIVE, or
  // UNKNOWN. From the decoded frame's interlace flags, else the container's field order (the
  // runner fills that in); `deinterlace` decides from it, and sets PROGRESSIVE after itself.
  AVFieldOrder field_order = AV_FIELD_UNKNOWN;

  static VideoFormat of_frame(const AVFrame* frame, AVRational time_base, AVRational frame_rate);
  int bit_depth() const;
  bool interlaced() const { return field_order != AV_FIELD_UNKNOWN && field_order != AV_FIELD_PROGRESSIVE; }
  // Whether the field displayed first is the top one (TT, and BT: bottom coded, top shown first).
  bool top_field_first() const { return field_order == AV_FIELD_TT || field_order == AV_FIELD_BT; }
};

// The matrix framelift uses for YUV<->RGB when the stream does not say: BT.601 below 720 lines,
// BT.709 from there on (what players assume). The output is tagged with it explicitly so that an
// upscale from SD to HD does not change the colors a player shows.
AVColorSpace effective_matrix(const VideoFormat& format);

// Whether samples use the full range (RGB, the yuvj* formats, or a JPEG range tag) rather than
// the limited "TV" range; swscale needs this for every YUV<->RGB conversion.
bool is_full_range(AVPixelFormat format, AVColorRange range);

}  // namespace framelift::media
