#pragma once
// The side data that describes HDR content: decoders attach it to frames (HEVC SEI), containers
// want it on the stream.
#include <utility>

extern "C" {
#include <libavcodec/packet.h>
#include <libavutil/frame.h>
}

namespace framelift::media {

inline constexpr std::pair<AVFrameSideDataType, AVPacketSideDataType> kHdrSideData[] = {
    {AV_FRAME_DATA_MASTERING_DISPLAY_METADATA, AV_PKT_DATA_MASTERING_DISPLAY_METADATA},
    {AV_FRAME_DATA_CONTENT_LIGHT_LEVEL, AV_PKT_DATA_CONTENT_LIGHT_LEVEL},
};

}  // namespace framelift::media
