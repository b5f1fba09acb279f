#pragma once
// One move-only owner per libav* type. Every libav object in framelift lives in one of these.
#include <memory>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavfilter/avfilter.h>
#include <libavformat/avformat.h>
#include <libavutil/frame.h>
#include <libavutil/mem.h>
#include <libswscale/swscale.h>
}

namespace framelift::media {

struct FrameFree { void operator()(AVFrame* f) const { av_frame_free(&f); } };
struct PacketFree { void operator()(AVPacket* p) const { av_packet_free(&p); } };
struct CodecContextFree { void operator()(AVCodecContext* c) const { avcodec_free_context(&c); } };
struct InputFormatClose { void operator()(AVFormatContext* f) const { avformat_close_input(&f); } };
// Output contexts own their AVIOContext only when the muxer opened one; Muxer closes that itself.
struct OutputFormatFree { void operator()(AVFormatContext* f) const { avformat_free_context(f); } };
struct SwsFree { void operator()(SwsContext* s) const { sws_freeContext(s); } };
struct FilterGraphFree { void operator()(AVFilterGraph* g) const { avfilter_graph_free(&g); } };
struct FilterInOutFree { void operator()(AVFilterInOut* io) const { avfilter_inout_free(&io); } };
struct BufferRefFree { void operator()(AVBufferRef* b) const { av_buffer_unref(&b); } };
// Strings libav allocates for the caller (av_get_token, av_opt_get_key_value, av_opt_get).
struct AvFree { void operator()(void* p) const { av_free(p); } };
struct DictFree { void operator()(AVDictionary* d) const { av_dict_free(&d); } };

using FramePtr = std::unique_ptr<AVFrame, FrameFree>;
using PacketPtr = std::unique_ptr<AVPacket, PacketFree>;
using CodecContextPtr = std::unique_ptr<AVCodecContext, CodecContextFree>;
using InputFormatPtr = std::unique_ptr<AVFormatContext, InputFormatClose>;
using OutputFormatPtr = std::unique_ptr<AVFormatContext, OutputFormatFree>;
using SwsPtr = std::unique_ptr<SwsContext, SwsFree>;
using FilterGraphPtr = std::unique_ptr<AVFilterGraph, FilterGraphFree>;
using FilterInOutPtr = std::unique_ptr<AVFilterInOut, FilterInOutFree>;
using BufferRefPtr = std::unique_ptr<AVBufferRef, BufferRefFree>;
using AvStringPtr = std::unique_ptr<char, AvFree>;

// Allocators that never return null (they throw framelift::Error on allocation failure).
FramePtr make_frame();
PacketPtr make_packet();

}  // namespace framelift::media
