// media::Muxer::add_copy where the container cannot hold a stream as it is: which text format a
// subtitle is converted to per container, what counts as an empty mov_text sample, and the
// refusal's advice (a container that holds the stream, or the remux that leaves it out).
// tests/cli/subtitle_conversion_test.cpp runs the conversions end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "media/muxer.h"
#include "media/subtitle_converter.h"
#include "support/test_paths.h"
#include "util/error.h"

namespace framelift::media {
namespace {

namespace fs = std::filesystem;

const AVOutputFormat* container(const char* name) { return av_guess_format(name, nullptr, nullptr); }

TEST(MuxerCopy, TextSubtitlesGoToTheTextFormatTheContainerHolds) {
  EXPECT_EQ(text_subtitle_target(container("matroska"), AV_CODEC_ID_MOV_TEXT), AV_CODEC_ID_ASS);
  EXPECT_EQ(text_subtitle_target(container("mp4"), AV_CODEC_ID_SUBRIP), AV_CODEC_ID_MOV_TEXT);
  EXPECT_EQ(text_subtitle_target(container("mov"), AV_CODEC_ID_ASS), AV_CODEC_ID_MOV_TEXT);
  EXPECT_EQ(text_subtitle_target(container("webm"), AV_CODEC_ID_SUBRIP), AV_CODEC_ID_WEBVTT);
  // Pictures are not text, and audio is not a subtitle.
  EXPECT_EQ(text_subtitle_target(container("mp4"), AV_CODEC_ID_HDMV_PGS_SUBTITLE), AV_CODEC_ID_NONE);
  EXPECT_EQ(text_subtitle_target(container("webm"), AV_CODEC_ID_AAC), AV_CODEC_ID_NONE);
}

TEST(MuxerCopy, OnlyAZeroLengthMovTextSampleIsEmpty) {
  uint8_t empty[2] = {0, 0}, text[4] = {0, 2, 'h', 'i'};
  AVPacket p{};
  p.data = empty;
  p.size = 2;
  EXPECT_TRUE(is_empty_subtitle_sample(AV_CODEC_ID_MOV_TEXT, p));
  EXPECT_FALSE(is_empty_subtitle_sample(AV_CODEC_ID_AAC, p));  // two bytes of audio are audio
  p.data = text;
  p.size = 4;
  EXPECT_FALSE(is_empty_subtitle_sample(AV_CODEC_ID_MOV_TEXT, p));
}

// An input stream as a demuxer would describe it, in a context of its own.
struct SourceStream {
  OutputFormatPtr owner{avformat_alloc_context()};
  AVStream* stream = nullptr;
  SourceStream(AVMediaType type, AVCodecID codec) {
    stream = avformat_new_stream(owner.get(), nullptr);
    stream->codecpar->codec_type = type;
    stream->codecpar->codec_id = codec;
    stream->time_base = AVRational{1, 90000};
  }
};

// The packet a converter makes of `bytes` (pts 900, 90 kHz), or nullptr.
PacketPtr convert(SubtitleConverter& c, std::vector<uint8_t> bytes) {
  PacketPtr p = make_packet();
  if (av_new_packet(p.get(), int(bytes.size())) < 0) return nullptr;
  std::copy(bytes.begin(), bytes.end(), p->data);
  p->pts = p->dts = 900;
  p->duration = 4500;
  return c.convert(p.get(), AVRational{1, 90000});
}

TEST(MuxerCopy, AMovTextSampleBecomesAnAssEventWithItsTimes) {
  const SourceStream mov_text(AVMEDIA_TYPE_SUBTITLE, AV_CODEC_ID_MOV_TEXT);
  SubtitleConverter c(mov_text.stream, AV_CODEC_ID_ASS, "test stream");
  PacketPtr hello = convert(c, {0, 5, 'h', 'e', 'l', 'l', 'o'});
  ASSERT_TRUE(hello);
  const std::string event(reinterpret_cast<const char*>(hello->data), size_t(hello->size));
  EXPECT_NE(event.find(",hello"), std::string::npos) << event;  // ReadOrder,Layer,Style,...,Text
  EXPECT_EQ(hello->pts, 900);
  EXPECT_EQ(hello->duration, 4500);
  // An empty sample shows nothing; one that does not decode (a length past its end) is left out.
  EXPECT_FALSE(convert(c, {0, 0}));
  EXPECT_EQ(c.skipped(), 0);
  EXPECT_FALSE(convert(c, {0, 9}));
  EXPECT_EQ(c.skipped(), 1);
}

std::string refusal(const fs::path& out, const SourceStream& s) {
  Muxer mux(out);
  try {
    mux.add_copy(s.stream);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Output);
    return e.what();
  }
  ADD_FAILURE() << out << ": took the stream";
  return "";
}

TEST(MuxerCopy, ARefusalNamesAContainerThatHoldsTheStream) {
  const fs::path dir = test::temp_dir("muxcopy");
  const SourceStream aac(AVMEDIA_TYPE_AUDIO, AV_CODEC_ID_AAC);
  EXPECT_EQ(refusal(dir / "a.webm", aac),
            (dir / "a.webm").string() + ": the webm container cannot hold the audio stream #0 (aac); use .mkv, which holds it");
}

TEST(MuxerCopy, ARefusalWhereNoContainerHoldsTheStreamNamesTheRemux) {
  const fs::path dir = test::temp_dir("muxcopy");
  const SourceStream cues(AVMEDIA_TYPE_DATA, AV_CODEC_ID_SCTE_35);
  const std::string line = refusal(dir / "a.mkv", cues);
  EXPECT_EQ(line, (dir / "a.mkv").string() + ": the matroska container cannot hold the data stream #0 (scte_35); remux the "
                                             "input without it first (ffmpeg -i INPUT -map 0 -map -0:0 -c copy OUTPUT)");
  EXPECT_EQ(line.find("use .mkv"), std::string::npos);
}

}  // namespace
}  // namespace framelift::media
