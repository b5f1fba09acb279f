#pragma once
// The last defence against an output that lost a stream or packets: before a finished output is
// renamed to its final name, it is read back as a player would (libavformat, every packet) and
// compared with what the job promised: the video with its frames and each copied stream of the
// input (audio, subtitles, attachments) with its packets. Whatever went wrong before (a stream
// dropped on the way, a muxer that skipped packets, a copy cut short), a file that does not hold
// all of it never gets the final name.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

extern "C" {
#include <libavcodec/codec_id.h>
#include <libavutil/avutil.h>
}

namespace framelift::jobs {

// One stream the output must hold, in the output's stream order.
struct PromisedStream {
  int input_index = -1;  // the input stream it comes from (for the error line)
  AVMediaType type = AVMEDIA_TYPE_UNKNOWN;
  AVCodecID codec = AV_CODEC_ID_NONE;
  int64_t packets = 0;
  int output_index = -1;  // the output stream written for it (-1: none was added)
};

// Reads `file` (the finished temporary file) to its end and throws Error(Output) naming `output`
// (the final name) and the first stream that is missing, is not the promised one or holds
// another number of packets, or when the file holds a stream nobody promised or does not read to
// its end. `exact_packets` false: the counts are not compared (a container that regroups packets,
// MPEG-TS). Opens no stop-interruptible I/O: the check is seconds at most, and ends once begun.
void check_output_streams(const std::filesystem::path& file, const std::filesystem::path& output,
                          const std::vector<PromisedStream>& promised, bool exact_packets = true);

}  // namespace framelift::jobs
