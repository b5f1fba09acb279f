#include "weights/ncnn_param.h"

#include <cctype>
#include <cfloat>
#include <climits>
#include <cstdint>
#include <charconv>
#include <cstdlib>
#include <cmath>
#include <fstream>
#include <sstream>

#include "util/error.h"
#include "util/str.h"

namespace framelift::weights {
namespace {

constexpr int kMagic = 7767517;
constexpr int kArrayIdBase = -23300;

// Splits a line into whitespace-separated tokens; a double-quoted value may contain spaces.
std::vector<std::string> tokenize(std::string_view line) {
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i >= line.size()) break;
    size_t start = i;
    bool quoted = false;
    while (i < line.size() && (quoted || !std::isspace(static_cast<unsigned char>(line[i])))) {
      if (line[i] == '"') quoted = !quoted;
      ++i;
    }
    tokens.emplace_back(line.substr(start, i - start));
  }
  return tokens;
}

bool parse_number(std::string_view s, double* out) {
  if (s.empty()) return false;
  std::string copy(s);  // strtod needs a terminated string; from_chars for double is GCC 11+ only
  char* end = nullptr;
  *out = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size();
}

bool parse_int(std::string_view s, int* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

class LineError {
 public:
  LineError(const std::string& source, int line) : source_(source), line_(line) {}
  [[noreturn]] void fail(const std::string& problem) const {
    throw Error(ErrorKind::Model, str(source_, ": line ", line_, ": ", problem));
  }

 private:
  const std::string& source_;
  int line_;
};

NcnnParamValue parse_value(std::string_view text, bool is_array, const LineError& err) {
  NcnnParamValue value;
  value.is_array = is_array;
  if (!is_array) {
    double number = 0;
    if (parse_number(text, &number)) {
      value.numbers.push_back(number);
    } else {
      value.is_string = true;
      if (text.size() >= 2 && text.front() == '"' && text.back() == '"') text = text.substr(1, text.size() - 2);
      value.text = std::string(text);
    }
    return value;
  }
  // "count,v1,v2,..."
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  int count = 0;
  if (!parse_int(parts[0], &count) || count < 0) err.fail(str("bad array length '", parts[0], "'"));
  if (static_cast<size_t>(count) != parts.size() - 1)
    err.fail(str("array declares ", count, " elements but has ", parts.size() - 1));
  for (size_t k = 1; k < parts.size(); ++k) {
    double number = 0;
    if (!parse_number(parts[k], &number)) err.fail(str("bad array element '", parts[k], "'"));
    value.numbers.push_back(number);
  }
  return value;
}

// A parameter as int, saturated: "1e300" or "nan" in a hostile .param must not reach an
// out-of-range conversion (undefined behaviour); a saturated value fails the layer's own checks.
int saturated_int(double v) {
  if (std::isnan(v)) return 0;
  if (v >= static_cast<double>(INT_MAX)) return INT_MAX;
  if (v <= static_cast<double>(INT_MIN)) return INT_MIN;
  return static_cast<int>(std::lround(v));
}

// Out-of-range double -> float is undefined behaviour; hostile values become +-infinity.
float saturated_float(double v) {
  if (v > static_cast<double>(FLT_MAX)) return INFINITY;
  if (v < -static_cast<double>(FLT_MAX)) return -INFINITY;
  return static_cast<float>(v);
}

}  // namespace

int NcnnParams::get_int(int id, int fallback) const {
  auto it = values_.find(id);
  if (it == values_.end() || it->second.numbers.empty()) return fallback;
  return saturated_int(it->second.numbers[0]);
}

float NcnnParams::get_float(int id, float fallback) const {
  auto it = values_.find(id);
  if (it == values_.end() || it->second.numbers.empty()) return fallback;
  return saturated_float(it->second.numbers[0]);
}

std::vector<int> NcnnParams::get_ints(int id) const {
  std::vector<int> out;
  auto it = values_.find(id);
  if (it == values_.end()) return out;
  for (double v : it->second.numbers) out.push_back(saturated_int(v));
  return out;
}

std::vector<float> NcnnParams::get_floats(int id) const {
  std::vector<float> out;
  auto it = values_.find(id);
  if (it == values_.end()) return out;
  for (double v : it->second.numbers) out.push_back(saturated_float(v));
  return out;
}

std::string NcnnParams::get_string(int id, const std::string& fallback) const {
  auto it = values_.find(id);
  if (it == values_.end() || !it->second.is_string) return fallback;
  return it->second.text;
}

NcnnGraph parse_ncnn_param_text(std::string_view text, const std::string& source_name) {
  NcnnGraph graph;
  graph.source = source_name;
  std::istringstream in{std::string(text)};
  std::string line;
  int line_no = 0;
  auto next_tokens = [&]() -> std::vector<std::string> {
    while (std::getline(in, line)) {
      ++line_no;
      auto tokens = tokenize(line);
      if (!tokens.empty()) return tokens;
    }
    return {};
  };

  auto header = next_tokens();
  int magic = 0;
  if (header.size() != 1 || !parse_int(header[0], &magic) || magic != kMagic)
    throw Error(ErrorKind::Model, str(source_name, ": not an ncnn text .param (magic 7767517 missing)"));
  auto counts = next_tokens();
  int layer_count = 0;
  if (counts.size() != 2 || !parse_int(counts[0], &layer_count) || !parse_int(counts[1], &graph.blob_count) ||
      layer_count < 0 || graph.blob_count < 0)
    throw Error(ErrorKind::Model, str(source_name, ": line ", line_no, ": expected '<layer count> <blob count>'"));

  for (int i = 0; i < layer_count; ++i) {
    auto tokens = next_tokens();
    LineError err(source_name, line_no);
    if (tokens.empty()) err.fail(str("file ends after ", i, " of ", layer_count, " layers"));
    if (tokens.size() < 4) err.fail("expected '<type> <name> <inputs> <outputs> ...'");
    NcnnLayer layer;
    layer.type = tokens[0];
    layer.name = tokens[1];
    int n_in = 0, n_out = 0;
    if (!parse_int(tokens[2], &n_in) || !parse_int(tokens[3], &n_out) || n_in < 0 || n_out < 0)
      err.fail(str("layer ", layer.name, ": bad blob counts"));
    // In 64 bits: n_in + n_out in int overflows for counts near INT_MAX.
    if (uint64_t{tokens.size()} - 4 < uint64_t(n_in) + uint64_t(n_out))
      err.fail(str("layer ", layer.name, ": fewer blob names than declared"));
    size_t t = 4;
    for (int k = 0; k < n_in; ++k) layer.inputs.push_back(tokens[t++]);
    for (int k = 0; k < n_out; ++k) layer.outputs.push_back(tokens[t++]);
    for (; t < tokens.size(); ++t) {
      const std::string& kv = tokens[t];
      size_t eq = kv.find('=');
      int id = 0;
      if (eq == std::string::npos || !parse_int(std::string_view(kv).substr(0, eq), &id))
        err.fail(str("layer ", layer.name, ": bad parameter '", kv, "'"));
      bool is_array = id <= kArrayIdBase;
      if (is_array) id = kArrayIdBase - id;
      layer.params.set(id, parse_value(std::string_view(kv).substr(eq + 1), is_array, err));
    }
    graph.layers.push_back(std::move(layer));
  }
  return graph;
}

NcnnGraph parse_ncnn_param(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(ErrorKind::Model, str(path.string(), ": cannot open ncnn .param"));
  std::ostringstream buf;
  buf << file.rdbuf();
  return parse_ncnn_param_text(buf.str(), path.string());
}

}  // namespace framelift::weights
