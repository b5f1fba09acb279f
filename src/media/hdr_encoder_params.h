#pragma once
// HDR10's static metadata (the mastering display and the content light level) belongs in the
// bitstream, HEVC SEI or AV1 metadata OBUs, where players and re-muxers look for it; the
// container's copy alone is lost on the next remux. libavcodec 5.1's libx265 and libsvtav1
// wrappers do not take it from frames, so it is handed to the encoder libraries in their own
// parameters: x265-params master-display / max-cll, svtav1-params mastering-display /
// content-light. Encoders that have neither way in this libavcodec (hevc_nvenc, av1_nvenc,
// libaom-av1, librav1e) get the metadata spliced into their packets (media/hdr_bitstream_insert.h).
extern "C" {
#include <libavutil/frame.h>
}

#include "media/encoder.h"

namespace framelift::media {

// `settings` with the HDR10 metadata of `frame` (a decoded source frame) added to the encoder
// library's parameters; a key the user set in them (-e x265-params=...) is left as the user set it.
// For the encoders without such parameters, settings.hdr_insert is set instead. Unchanged for
// frames without that side data and for other encoders.
EncoderSettings with_hdr_bitstream_params(EncoderSettings settings, const AVFrame* frame);

}  // namespace framelift::media
