#pragma once
// Recognises "the same input" between runs of a job: size plus SHA-256 of the first and last
// 4 MiB. Not the modification time: copying a file to another machine or a shared volume (how
// spot workers get it) changes the time but not the video. Not a hash of the whole file: a
// 50 GB master would take minutes to hash on every resume. Edits that keep the size and both
// ends are not caught; the per-segment checksums still guard what was written.
#include <string>

namespace framelift::jobs {

// "size=N head+tail-sha256=HEX" for a file; the URL itself for a network input (its content
// cannot be read cheaply). Throws Error(Input) when the file cannot be read.
std::string fingerprint_input(const std::string& input);

}  // namespace framelift::jobs
