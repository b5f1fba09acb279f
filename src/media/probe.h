#pragma once
// What `framelift probe` reports about an input: streams, codecs, size, rate (and whether it
// varies), exact frame count, duration, bit depth, color and HDR, audio and subtitle tracks.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace framelift::media {

struct ProbeOptions {
  // Count frames by reading every video packet when the container does not store the count
  // (Matroska, MPEG-TS); also measures whether the frame rate varies.
  bool count_frames = true;
};

// Throws Error(Input) naming the file for anything that is not readable media.
nlohmann::json probe(const std::string& url, const ProbeOptions& options = {});

// A few lines for people.
std::string probe_text(const nlohmann::json& info);

}  // namespace framelift::media
