#pragma once
// The value syntaxes that framelift's options share, parsed as the library parses them: for
// front ends that check a flag of their own before they build a request, so that "4G" or
// "1h30m" means the same in a GUI, a script and the CLI.
//
// Errors: throw framelift::Error(Usage); the message names the value (and `option`, when given).
// Thread-safety: pure functions.
#include <cstdint>
#include <string>

#include "framelift/choices.h"

namespace framelift {

// "512M", "2G", "1.5GiB", "800000" (bytes) -> bytes: the syntax of the stages' max_memory option.
int64_t parse_byte_size(const std::string& text);

// "2h", "90m", "1h30m", "45s", "3600" (seconds) -> seconds: PlanRequest::deadline_s from text.
// The message of a refusal names `option` ("--deadline").
double parse_duration(const std::string& text, const std::string& option);

// The typed choices of framelift/run.h from their text and back (name_of(parse_X(t)) == t for
// each name listed). Each refusal names the CLI flag the text is for.
HwAccel parse_hwaccel(const std::string& text);                   // "none", "auto", "cuda", "vaapi", ...
const char* name_of(HwAccel h);
ColorConversion parse_color_conversion(const std::string& text);  // "auto", "swscale", "tensor"
const char* name_of(ColorConversion c);
PreemptionWatch parse_preemption_watch(const std::string& text);  // "off", "auto", "aws", "gcp", "azure"
const char* name_of(PreemptionWatch p);
// "K/N" (0 <= K < N), "auto/N" or "auto" (from the array engine: see Shard).
Shard parse_shard(const std::string& text);
std::string name_of(const Shard& s);
// "A-B" or "A" (0-based, inclusive, A <= B).
SegmentRange parse_segment_range(const std::string& text);
std::string name_of(const SegmentRange& r);
// "0.79" or "$0.79": USD per hour, a finite number >= 0.
double parse_hourly_price(const std::string& text);

}  // namespace framelift
