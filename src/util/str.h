#pragma once
// String building without <format> (GCC 12 on Debian 12 does not ship it).
#include <sstream>
#include <string>

namespace framelift {

template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

}  // namespace framelift
