#pragma once
// Inputs whose stream changes mid-way, as two MPEG-TS recordings joined with `cat` are: the
// second part's timestamps start again, and it may have another size. Made with the ffmpeg CLI.
#include <filesystem>
#include <string>

namespace framelift::test {

constexpr int kJoinedRate = 24, kJoinedFramesEach = 48;

// Two seconds (kJoinedFramesEach frames at kJoinedRate: the clock then goes back 2 s, past the
// mender's 1 s) of H.264 + AAC in MPEG-TS, `size`
// ("64x48") pixels, testsrc2 from `start_s` (so the two parts show different pictures).
std::filesystem::path ts_clip(const std::filesystem::path& dir, const std::string& name, const std::string& size,
                              double start_s);
// `a` then `b`, byte for byte, as DIR/joined.ts.
std::filesystem::path joined(const std::filesystem::path& dir, const std::filesystem::path& a,
                             const std::filesystem::path& b);

}  // namespace framelift::test
