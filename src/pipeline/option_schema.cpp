#include "pipeline/option_schema.h"

#include <cmath>
#include <cctype>
#include <cstdlib>
#include <stdexcept>
#include <climits>
#include <optional>
#include <set>

#include "infer/memory_budget.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

// The smallest memory budget (Size options, max_memory): below it not even a small model's
// weights and one tile fit. The CLI's --max-memory check uses the same floor.
constexpr double kMinMemoryBudget = 16.0 * 1024 * 1024;

// A number as people write them; nullopt for "", "2x", "nan", "inf", "1e999".
std::optional<double> finite_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(int64_t(v));
  return str(v);
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

// "0 < F <= 16", "1 <= N <= 32", "N >= 0"; "" when unbounded.
std::string range_text(const OptionSpec& o, const std::string& symbol) {
  const bool lo = std::isfinite(o.min), hi = std::isfinite(o.max);
  const std::string low = lo ? number_text(o.min) + (o.min_exclusive ? " < " : " <= ") : "";
  if (lo && hi) return low + symbol + " <= " + number_text(o.max);
  if (lo) return symbol + (o.min_exclusive ? " > " : " >= ") + number_text(o.min);
  if (hi) return symbol + " <= " + number_text(o.max);
  return "";
}

std::string allowed(const OptionSpec& o) {
  switch (o.type) {
    case OptionType::Integer: {
      const std::string r = range_text(o, "N");
      return r.empty() ? "a whole number" : "a whole number, " + r;
    }
    case OptionType::Number: {
      const std::string r = range_text(o, "F");
      return r.empty() ? "a finite number" : "a number, " + r;
    }
    case OptionType::Flag: return "0 or 1 (true or false)";
    case OptionType::Choice: return join(o.choices, ", ");
    case OptionType::Rate: return str("a frame rate such as 60, 59.94 or 60000/1001, at most ", number_text(o.max));
    case OptionType::Size: return "a size such as 512M or 4G, at least 16M";
    case OptionType::Text: return "text";
  }
  return "";
}

bool in_range(const OptionSpec& o, double v) {
  if (o.min_exclusive ? !(v > o.min) : !(v >= o.min)) return false;
  return v <= o.max;
}

bool valid_rate(const std::string& text, double max) {
  const size_t slash = text.find('/');
  std::optional<double> rate;
  if (slash == std::string::npos) {
    rate = finite_number(text);
  } else {
    const auto num = finite_number(text.substr(0, slash)), den = finite_number(text.substr(slash + 1));
    if (num && den && *den > 0) rate = *num / *den;
  }
  return rate && *rate > 0 && *rate <= max;
}

bool valid_size(const std::string& text) {
  if (text.empty()) return false;
  std::string digits = text;
  const char unit = char(std::toupper(static_cast<unsigned char>(digits.back())));
  double scale = 1;
  if (unit == 'K' || unit == 'M' || unit == 'G' || unit == 'T') {
    digits.pop_back();
    scale = unit == 'K' ? 0x1p10 : unit == 'M' ? 0x1p20 : unit == 'G' ? 0x1p30 : 0x1p40;
  }
  const auto v = finite_number(digits);
  // A memory budget below what any model's weights and one tile take cannot run: refused here
  // rather than as "allocating 0 MiB would exceed the budget of 0 MiB" in the middle of a run.
  return v && *v * scale >= kMinMemoryBudget;
}

bool valid(const OptionSpec& o, const std::string& value) {
  switch (o.type) {
    case OptionType::Integer: {
      const auto v = finite_number(value);
      return v && *v == std::floor(*v) && in_range(o, *v);
    }
    case OptionType::Number: {
      const auto v = finite_number(value);
      return v && in_range(o, *v);
    }
    case OptionType::Flag: return value == "0" || value == "1" || value == "true" || value == "false";
    case OptionType::Choice:
      for (const auto& c : o.choices)
        if (c == value) return true;
      for (const auto& c : o.aliases)
        if (c == value) return true;
      return false;
    case OptionType::Rate: return valid_rate(value, o.max);
    case OptionType::Size: return valid_size(value);
    case OptionType::Text: return true;
  }
  return false;
}

// "60", "59.94", "60000/1001", "24000:1001" -> a rational rate; {0, 1} when it is none.
AVRational rational_rate(const std::string& text) {
  AVRational r{0, 1};
  const size_t sep = text.find_first_of("/:");
  if (sep != std::string::npos) {
    r = {std::atoi(text.substr(0, sep).c_str()), std::atoi(text.substr(sep + 1).c_str())};
  } else if (const auto v = finite_number(text); v && *v > 0) {
    // NTSC rates typed as decimals are meant as N*1000/1001.
    const double ntsc = *v * 1001.0 / 1000.0;
    r = std::abs(ntsc - std::round(ntsc)) < 0.01 && std::abs(*v - std::round(*v)) > 0.001
            ? AVRational{int(std::lround(ntsc)) * 1000, 1001}
            : av_d2q(*v, 1000000);
  }
  if (r.num <= 0 || r.den <= 0) return {0, 1};
  av_reduce(&r.num, &r.den, r.num, r.den, INT_MAX);
  return r;
}

// A valid value's typed form (valid() said it parses).
OptionValues::Value typed(const OptionSpec& o, const std::string& value) {
  switch (o.type) {
    case OptionType::Integer: return int64_t(*finite_number(value));
    case OptionType::Number: return *finite_number(value);
    case OptionType::Flag: return value == "1" || value == "true";
    case OptionType::Rate: return rational_rate(value);
    case OptionType::Size: return infer::parse_byte_size(value);
    case OptionType::Choice:
    case OptionType::Text: return value;
  }
  return std::monostate{};
}

// The schema's own default: one the schema author wrote, so a bad one is a bug in the schema.
OptionValues::Value schema_default(const std::string& stage, const OptionSpec& o) {
  if (o.default_value.empty()) return std::monostate{};
  if (!valid(o, o.default_value))
    throw std::logic_error("stage " + stage + ": the schema's default " + o.name + "=" + o.default_value + " is not allowed");
  return typed(o, o.default_value);
}

}  // namespace

const OptionSpec* find_option(const OptionSchema& schema, const std::string& name) {
  for (const auto& o : schema)
    if (o.name == name) return &o;
  return nullptr;
}

namespace {
// Field by field: a brace list would name every member up to the last one given.
OptionSpec option(std::string name, OptionType type, std::string default_value, std::string help) {
  OptionSpec o;
  o.name = std::move(name);
  o.type = type;
  o.default_value = std::move(default_value);
  o.help = std::move(help);
  return o;
}

OptionSpec bounded(OptionSpec o, double min, double max, bool min_exclusive = false) {
  o.min = min;
  o.max = max;
  o.min_exclusive = min_exclusive;
  return o;
}
}  // namespace

OptionSpec integer_option(std::string name, std::string default_value, double min, double max, std::string help) {
  return bounded(option(std::move(name), OptionType::Integer, std::move(default_value), std::move(help)), min, max);
}

OptionSpec number_option(std::string name, std::string default_value, double min, double max, std::string help,
                         bool min_exclusive) {
  return bounded(option(std::move(name), OptionType::Number, std::move(default_value), std::move(help)), min, max,
                 min_exclusive);
}

OptionSpec flag_option(std::string name, std::string default_value, std::string help) {
  return bounded(option(std::move(name), OptionType::Flag, std::move(default_value), std::move(help)), 0, 1);
}

OptionSpec choice_option(std::string name, std::string default_value, std::vector<std::string> choices,
                         std::string help) {
  OptionSpec o = option(std::move(name), OptionType::Choice, std::move(default_value), std::move(help));
  o.choices = std::move(choices);
  return o;
}

OptionSpec rate_option(std::string name, double max, std::string help) {
  OptionSpec o = option(std::move(name), OptionType::Rate, "", std::move(help));
  o.max = max;
  return o;
}

OptionSpec size_option(std::string name, std::string help) {
  return option(std::move(name), OptionType::Size, "", std::move(help));
}

OptionSpec text_option(std::string name, std::string default_value, std::string help) {
  return option(std::move(name), OptionType::Text, std::move(default_value), std::move(help));
}

OptionSpec with_role(OptionSpec o, OptionRole role) {
  o.role = role;
  return o;
}

OptionSchema combine(OptionSchema a, const OptionSchema& b) {
  for (const auto& o : b)
    if (!find_option(a, o.name)) a.push_back(o);
  return a;
}

OptionValues validate_options(const std::string& stage, const OptionSchema& schema, const StageOptions& options) {
  for (const auto& [key, value] : options.values()) {
    const OptionSpec* o = find_option(schema, key);
    if (!o) {
      std::vector<std::string> names;
      for (const auto& s : schema) names.push_back(s.name);
      throw Error(ErrorKind::Usage, str("stage ", stage, ": unknown option '", key, "' (options: ", join(names, ", "), ")"));
    }
    if (!valid(*o, value))
      throw Error(ErrorKind::Usage, str("stage ", stage, ": ", key, "=", value, " is not allowed (", allowed(*o), ")"));
  }
  for (const auto& [key, value] : options.defaults()) {
    const OptionSpec* o = find_option(schema, key);
    if (o && !value.empty() && !options.values().count(key) && !valid(*o, value))
      throw Error(ErrorKind::Usage, str("stage ", stage, ": ", key, "=", value, " (from the command line) is not allowed (",
                                        allowed(*o), ")"));
  }
  std::map<std::string, OptionValues::Value> values;
  std::set<std::string> given;
  for (const OptionSpec& o : schema) {
    const auto text = options.values().find(o.name);
    const auto cli = options.defaults().find(o.name);
    if (text != options.values().end()) {
      values[o.name] = typed(o, text->second);
      given.insert(o.name);
    } else if (cli != options.defaults().end() && !cli->second.empty()) {
      values[o.name] = typed(o, cli->second);
      given.insert(o.name);
    } else {
      values[o.name] = schema_default(stage, o);
    }
  }
  return OptionValues(stage, std::move(values), std::move(given));
}

std::string describe_options(const OptionSchema& schema) {
  std::vector<std::string> items;
  for (const auto& o : schema) {
    std::string item = o.name + "=";
    std::vector<std::string> notes;
    switch (o.type) {
      case OptionType::Integer: item += "N"; notes.push_back(range_text(o, "N")); break;
      case OptionType::Number: item += "F"; notes.push_back(range_text(o, "F")); break;
      case OptionType::Flag: item += "0|1"; break;
      case OptionType::Choice: item += join(o.choices, "|"); break;
      case OptionType::Rate: item += "RATE"; break;
      case OptionType::Size: item += "SIZE"; break;
      case OptionType::Text: item += "TEXT"; break;
    }
    if (!o.help.empty()) notes.push_back(o.help);
    if (!o.default_value.empty()) notes.push_back("default " + o.default_value);
    std::erase_if(notes, [](const std::string& n) { return n.empty(); });
    if (!notes.empty()) item += " (" + join(notes, "; ") + ")";
    items.push_back(item);
  }
  return join(items, ", ");
}

}  // namespace framelift::pipeline
