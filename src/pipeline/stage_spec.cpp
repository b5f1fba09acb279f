#include "pipeline/stage_spec.h"

#include <algorithm>
#include <cstdlib>

#include "util/error.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

// One KEY=VALUE or NAME between top-level separators. `after` is the separator that ended it
// (',' or ':'; 0 at the end of the text). A quoted value keeps its text exactly, blanks included.
struct Field {
  std::string text;
  bool quoted = false;
  char after = 0;
};

bool blank(char c) { return c == ' ' || c == '\t'; }

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Index of the character closing the quote or bracket at `open`. Brackets nest, so a value in
// brackets may itself hold libavfilter's [label]s; quotes end at the next identical quote.
size_t closing(const std::string& s, size_t open) {
  const char mate = s[open] == '[' ? ']' : s[open];
  int depth = 0;
  for (size_t i = open + 1; i < s.size(); ++i) {
    if (s[open] == '[' && s[i] == '[') ++depth;
    if (s[i] == mate && depth-- == 0) return i;
  }
  throw Error(ErrorKind::Usage, str("pipeline: ", s[open], " without its closing ", mate, " in '", s, "'"));
}

std::vector<Field> fields(const std::string& s) {
  std::vector<Field> out(1);
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == ',' || c == ':') {
      out.back().after = c;
      out.emplace_back();
      continue;
    }
    Field& f = out.back();
    f.text += c;
    if (c != '=' || f.text.find('=') != f.text.size() - 1) continue;
    // A value that starts with ', " or [ runs to its mate, commas and colons included.
    size_t open = i + 1;
    while (open < s.size() && blank(s[open])) ++open;
    if (open == s.size() || (s[open] != '\'' && s[open] != '"' && s[open] != '[')) continue;
    const size_t close = closing(s, open);
    f.text += s.substr(open + 1, close - open - 1);
    f.quoted = true;
    i = close + 1;
    while (i < s.size() && blank(s[i])) ++i;
    if (i < s.size() && s[i] != ',' && s[i] != ':')
      throw Error(ErrorKind::Usage, str("pipeline: '", s.substr(i), "' follows the closing ", s[close],
                                        " (separate options with ':', stages with ',')"));
    --i;  // the loop's ++i lands on the separator
  }
  return out;
}

// "12", "-3", "0.5": a bare number is never a stage name.
bool is_number(const std::string& s) {
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return !s.empty() && *end == '\0';
}

// Returns the key it set.
std::string add_option(StageSpec& spec, const Field& field, std::map<std::string, std::string>& values) {
  const std::string& item = field.text;
  size_t eq = item.find('=');
  if (eq == std::string::npos || trim(item.substr(0, eq)).empty())
    throw Error(ErrorKind::Usage, str("pipeline: expected KEY=VALUE in stage '", spec.name, "', got '", trim(item),
                                      "' (quote a value that holds ',' or ':', as KEY='...' or KEY=[...])"));
  const std::string value = item.substr(eq + 1), key = trim(item.substr(0, eq));
  if (values.count(key))
    throw Error(ErrorKind::Usage, str("pipeline: stage '", spec.name, "' sets ", key, " twice"));
  values[key] = field.quoted ? value : trim(value);
  return key;
}

}  // namespace

std::vector<StageSpec> parse_pipeline(const std::string& text) {
  std::vector<StageSpec> specs;
  std::vector<std::map<std::string, std::string>> values;
  const std::vector<Field> all = fields(text);
  std::string last_key;  // the option a bare number continues
  for (size_t i = 0; i < all.size();) {
    // An item: the fields up to the next top-level comma.
    size_t end = i;
    while (end + 1 < all.size() && all[end].after != ',') ++end;
    const Field& first = all[i];
    const std::string head = trim(first.text);
    if (end == i && head.empty() && !first.quoted) {  // ",," or a trailing comma
      i = end + 1;
      continue;
    }
    size_t options_from = i + 1;
    if (!first.quoted && is_number(head)) {
      // An unquoted list value such as box=10,20,64,48: the numbers after the first continue
      // that option (box='10,20,64,48' says the same).
      if (last_key.empty()) throw Error(ErrorKind::Usage, str("pipeline: '", head, "' follows no option value"));
      values.back()[last_key] += "," + head;
    } else if (head.find('=') != std::string::npos) {
      // KEY=VALUE after a comma continues the previous stage ("resize:w=1280,h=720").
      if (specs.empty()) throw Error(ErrorKind::Usage, str("pipeline: '", head, "' comes before any stage name"));
      options_from = i;
    } else {
      specs.push_back({head, {}});
      values.emplace_back();
      last_key.clear();
    }
    for (size_t k = options_from; k <= end; ++k) last_key = add_option(specs.back(), all[k], values.back());
    i = end + 1;
  }
  for (size_t i = 0; i < specs.size(); ++i) specs[i].options = StageOptions(specs[i].name, values[i]);
  return specs;
}

}  // namespace framelift::pipeline
