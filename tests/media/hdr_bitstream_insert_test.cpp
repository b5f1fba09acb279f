// media::HdrBitstreamInserter on real encoder output: libx265 run without its own HDR parameters
// (as hevc_nvenc runs in this libavcodec), its Annex B packets given the SEI, written to a bare
// .hevc file that has no container metadata: ffprobe (FFmpeg's own HEVC parser, not ours) must
// find the mastering display and light level on every frame, with the values given, including
// values whose bytes need emulation prevention (00 00 00 ...). The AV1 OBUs are checked end to
// end through the CLI with libaom-av1 (tests/cli/hdr_bitstream_test.cpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

extern "C" {
#include <libavcodec/avcodec.h>
}

#include "cli/cli_runner.h"
#include "media/encoder.h"
#include "media/hdr_bitstream_insert.h"
#include "media/hdr_encoder_params.h"
#include "support/test_paths.h"

namespace fs = std::filesystem;

namespace framelift::media {
namespace {

AVMasteringDisplayMetadata bt2020_display(double max_nits, double min_nits) {
  AVMasteringDisplayMetadata d{};
  const double xy[3][2] = {{0.708, 0.292}, {0.170, 0.797}, {0.131, 0.046}};  // R, G, B
  for (int c = 0; c < 3; ++c)
    for (int k = 0; k < 2; ++k) d.display_primaries[c][k] = av_make_q(int(xy[c][k] * 50000 + 0.5), 50000);
  d.white_point[0] = av_make_q(15635, 50000);
  d.white_point[1] = av_make_q(16450, 50000);
  d.max_luminance = av_make_q(int(max_nits * 10000), 10000);
  d.min_luminance = av_make_q(int(min_nits * 10000 + 0.5), 10000);
  d.has_primaries = d.has_luminance = 1;
  return d;
}

// Encodes 5 grey 10-bit frames with libx265 (no HDR parameters) into a bare Annex B file,
// every packet through `insert`.
fs::path encode_hevc(const HdrBitstreamInserter& insert, const fs::path& dir) {
  VideoFormat f;
  f.width = 64;
  f.height = 48;
  f.pix_fmt = AV_PIX_FMT_YUV420P10;
  f.time_base = {1, 25};
  f.frame_rate = {25, 1};
  EncoderSettings s;
  s.codec = "libx265";
  s.preset = "ultrafast";
  s.options["x265-params"] = "log-level=error";
  Encoder encoder(s, f, /*global_header=*/false);
  const fs::path out = dir / "out.hevc";
  std::ofstream file(out, std::ios::binary);
  auto write = [&](AVPacket* p) {
    insert.apply(p);
    file.write(reinterpret_cast<const char*>(p->data), p->size);
  };
  for (int i = 0; i < 5; ++i) {
    FramePtr frame = make_frame();
    frame->format = f.pix_fmt;
    frame->width = f.width;
    frame->height = f.height;
    frame->pts = i;
    if (av_frame_get_buffer(frame.get(), 0) < 0) throw std::bad_alloc();
    for (int p = 0; p < 3; ++p)
      for (int y = 0; y < (p ? f.height / 2 : f.height); ++y) {
        auto* row = reinterpret_cast<uint16_t*>(frame->data[p] + y * frame->linesize[p]);
        for (int x = 0; x < (p ? f.width / 2 : f.width); ++x) row[x] = uint16_t(p ? 512 : 300 + 40 * i);
      }
    encoder.encode(frame.get(), write);
  }
  encoder.encode(nullptr, write);
  return out;
}

struct Found {
  int frames = 0, with_display = 0, with_light = 0;
  std::string red_x, max_luminance, min_luminance;
  int max_content = -1, max_average = -1;
};

Found probe_frames(const fs::path& file) {
  std::string out;
  test::run_command("ffprobe -v error -show_frames -print_format json " + test::shell_quote(file), &out);
  Found found;
  const nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  for (const auto& frame : j.value("frames", nlohmann::json::array())) {
    ++found.frames;
    for (const auto& sd : frame.value("side_data_list", nlohmann::json::array())) {
      if (sd.value("side_data_type", "") == "Mastering display metadata") {
        ++found.with_display;
        found.red_x = sd.value("red_x", "");
        found.max_luminance = sd.value("max_luminance", "");
        found.min_luminance = sd.value("min_luminance", "");
      }
      if (sd.value("side_data_type", "") == "Content light level metadata") {
        ++found.with_light;
        found.max_content = sd.value("max_content", -1);
        found.max_average = sd.value("max_average", -1);
      }
    }
  }
  return found;
}

TEST(HdrBitstreamInsert, HevcSeiReachesEveryFrameOfARealEncode) {
  const AVMasteringDisplayMetadata display = bt2020_display(1000, 0.0050);
  const AVContentLightMetadata light{1000, 400};
  auto insert = HdrBitstreamInserter::make(AV_CODEC_ID_HEVC, &display, &light);
  ASSERT_TRUE(insert);
  const Found f = probe_frames(encode_hevc(*insert, test::temp_dir("hdr-insert")));
  EXPECT_EQ(f.frames, 5);
  EXPECT_EQ(f.with_display, 5);
  EXPECT_EQ(f.with_light, 5);
  EXPECT_EQ(f.red_x, "35400/50000");
  EXPECT_EQ(f.max_luminance, "10000000/10000");
  EXPECT_EQ(f.min_luminance, "50/10000");
  EXPECT_EQ(f.max_content, 1000);
  EXPECT_EQ(f.max_average, 400);
}

TEST(HdrBitstreamInsert, ZeroBytesInTheValuesAreEscapedAndReadBack) {
  // A light level of 0,0 and a minimum luminance of 0 put runs of zero bytes in the SEI payload:
  // without emulation prevention they would read as a start code and cut the NAL unit.
  const AVMasteringDisplayMetadata display = bt2020_display(1000, 0);
  const AVContentLightMetadata light{0, 0};
  auto insert = HdrBitstreamInserter::make(AV_CODEC_ID_HEVC, &display, &light);
  ASSERT_TRUE(insert);
  const std::vector<uint8_t>& nal = insert->units();
  int escapes = 0;
  for (size_t i = 4; i + 2 < nal.size(); ++i) {
    EXPECT_FALSE(nal[i] == 0 && nal[i + 1] == 0 && nal[i + 2] <= 2) << "start-code-like bytes at " << i;
    escapes += nal[i] == 0 && nal[i + 1] == 0 && nal[i + 2] == 3;
  }
  EXPECT_GT(escapes, 0) << "these values need emulation prevention";
  const Found f = probe_frames(encode_hevc(*insert, test::temp_dir("hdr-insert-zero")));
  EXPECT_EQ(f.with_display, 5);
  EXPECT_EQ(f.with_light, 5);
  EXPECT_EQ(f.min_luminance, "0/10000");
  EXPECT_EQ(f.max_content, 0);
  EXPECT_EQ(f.max_average, 0);
}

TEST(HdrBitstreamInsert, NvencGetsTheInsertAndNoParametersItWouldReject) {
  FramePtr frame = make_frame();
  AVFrameSideData* md =
      av_frame_new_side_data(frame.get(), AV_FRAME_DATA_MASTERING_DISPLAY_METADATA, sizeof(AVMasteringDisplayMetadata));
  ASSERT_TRUE(md);
  *reinterpret_cast<AVMasteringDisplayMetadata*>(md->data) = bt2020_display(1000, 0.005);
  EncoderSettings nvenc;
  nvenc.codec = "hevc_nvenc";
  const EncoderSettings with = with_hdr_bitstream_params(nvenc, frame.get());
  ASSERT_TRUE(with.hdr_insert) << "hevc_nvenc would write no HDR10 into its bitstream";
  EXPECT_TRUE(with.options.empty()) << "NVENC has no x265-params";
  EncoderSettings x265;
  x265.codec = "libx265";
  EXPECT_FALSE(with_hdr_bitstream_params(x265, frame.get()).hdr_insert) << "x265 writes its own SEI from its params";
  EXPECT_FALSE(HdrBitstreamInserter::make(AV_CODEC_ID_H264, &*reinterpret_cast<AVMasteringDisplayMetadata*>(md->data), nullptr));
  EXPECT_FALSE(HdrBitstreamInserter::make(AV_CODEC_ID_HEVC, nullptr, nullptr));
}

}  // namespace
}  // namespace framelift::media
