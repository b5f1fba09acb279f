#pragma once
// The single-page web app (web/index.html, compiled into the program at build time, so that the
// server has no files to find at run time and nothing comes from a CDN).
#include <string>

namespace framelift::server {

const std::string& web_page();

}  // namespace framelift::server
