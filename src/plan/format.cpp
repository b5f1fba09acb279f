#include "plan/format.h"

#include <cctype>
#include <cmath>
#include <cstdio>

#include "util/error.h"
#include "util/str.h"

namespace framelift::plan {

std::string human_duration(double s) {
  if (!std::isfinite(s)) return "-";
  char buf[48];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0fs", s);
  else if (s < 600 && std::lround(s) % 60 != 0) std::snprintf(buf, sizeof buf, "%ldm%02lds", std::lround(s) / 60, std::lround(s) % 60);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%.0fm", std::round(s / 60));
  else if (s < 100 * 3600) {
    const long m = std::lround(s / 60);
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", m / 60, m % 60);
  } else std::snprintf(buf, sizeof buf, "%.1fd", s / 86400);
  return buf;
}

std::string money(double usd) {
  if (!std::isfinite(usd)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, usd < 10 ? "$%.2f" : "$%.0f", usd);
  return buf;
}

std::string gigabytes(double bytes) {
  char buf[32];
  if (bytes < 1e9) std::snprintf(buf, sizeof buf, "%.0f MB", bytes / 1e6);
  else std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  return buf;
}

double parse_duration(const std::string& text, const std::string& option) {
  double total = 0, number = 0;
  bool digits = false, any = false, frac = false;
  double scale = 0.1;
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (frac) {
        number += (c - '0') * scale;
        scale /= 10;
      } else {
        number = number * 10 + (c - '0');
      }
      digits = true;
    } else if (c == '.' && digits && !frac) {
      frac = true;
    } else if ((c == 'd' || c == 'h' || c == 'm' || c == 's') && digits) {
      total += number * (c == 'd' ? 86400 : c == 'h' ? 3600 : c == 'm' ? 60 : 1);
      number = 0;
      digits = frac = false;
      scale = 0.1;
      any = true;
    } else {
      throw Error(ErrorKind::Usage, str(option, ": '", text, "' is not a duration (e.g. 2h, 90m, 1h30m, 3600)"));
    }
  }
  if (digits) total += number;  // a bare number is seconds
  else if (!any) throw Error(ErrorKind::Usage, str(option, ": '", text, "' is not a duration (e.g. 2h, 90m, 1h30m, 3600)"));
  return total;
}

}  // namespace framelift::plan
