#include "lifecycle/lifecycle_options.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "util/error.h"
#include "util/str.h"

namespace framelift::lifecycle {

WatchProvider parse_watch_provider(std::string_view name) {
  if (name == "aws") return WatchProvider::Aws;
  if (name == "gcp") return WatchProvider::Gcp;
  if (name == "azure") return WatchProvider::Azure;
  if (name == "auto") return WatchProvider::Auto;
  if (name == "off" || name == "none") return WatchProvider::Off;
  throw Error(ErrorKind::Usage, str("--watch-preemption: unknown provider '", name, "' (aws|gcp|azure|auto|off)"));
}

std::string_view watch_provider_name(WatchProvider provider) {
  switch (provider) {
    case WatchProvider::Off: return "off";
    case WatchProvider::Aws: return "aws";
    case WatchProvider::Gcp: return "gcp";
    case WatchProvider::Azure: return "azure";
    case WatchProvider::Auto: return "auto";
  }
  return "off";
}

double parse_hourly_price(std::string_view text) {
  std::string number(text);
  if (!number.empty() && number.front() == '$') number.erase(0, 1);
  char* end = nullptr;
  double price = number.empty() ? NAN : std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(price) || price < 0)
    throw Error(ErrorKind::Usage, str("--hourly-price: '", text, "' is not a price in USD per hour (e.g. 0.79)"));
  return price;
}

}  // namespace framelift::lifecycle
