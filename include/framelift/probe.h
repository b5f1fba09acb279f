#pragma once
// What a video file holds: its streams, size, frame rate, frame count, colour and HDR fields, as
// `framelift probe` prints it: text for people, JSON for scripts.
//
// Usage:
//
//   std::string json = framelift::probe("clip.mkv", {.format = framelift::ProbeFormat::Json});
//   std::fputs(framelift::probe("clip.mkv", {.count_frames = false}).c_str(), stdout);
//
// Errors: throws framelift::Error(Input) naming the file for anything that is not readable media
// (missing, not media, no streams).
// Thread-safety: probe() may run from several threads at once; it opens the file for itself.
#include <string>

namespace framelift {

enum class ProbeFormat {
  Text,  // a few lines for people, each ending in a newline (`probe`)
  Json,  // one JSON object, indented by 2, no final newline (`probe --json`)
};

struct ProbeOptions {
  // Count frames by reading every video packet when the container does not store the count
  // (Matroska, MPEG-TS); also measures whether the frame rate varies. false: the header only.
  bool count_frames = true;
  ProbeFormat format = ProbeFormat::Text;
};

// The description of `input` in options.format.
std::string probe(const std::string& input, const ProbeOptions& options = {});

}  // namespace framelift
