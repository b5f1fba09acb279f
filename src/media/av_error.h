#pragma once
// The one place where an AVERROR becomes a framelift::Error.
#include <string>

#include "util/error.h"

namespace framelift::media {

std::string av_error_text(int errnum);

// Throws Error(kind, "<what>: <libav's message>") when ret < 0; returns ret otherwise.
int check(int ret, ErrorKind kind, const std::string& what);

}  // namespace framelift::media
