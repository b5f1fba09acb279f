#pragma once
// The text form of an ncnn network (.param): magic 7767517, "<layer count> <blob count>", then one
// line per layer: type, name, input count, output count, input blob names, output blob names and
// "id=value" parameters. A negative id -23300-k marks parameter k as an array: "-23309=2,4,4".
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace framelift::weights {

// One parameter value. ncnn decides int versus float by spelling ("1" versus "1.0"); both views are
// kept so that a reader asking for the other kind still gets the number.
struct NcnnParamValue {
  bool is_array = false;
  bool is_string = false;
  std::vector<double> numbers;  // one element for a scalar
  std::string text;             // for string parameters (shape expressions)
};

// A layer's parameter dictionary with ncnn's get-with-default semantics.
class NcnnParams {
 public:
  void set(int id, NcnnParamValue value) { values_[id] = std::move(value); }
  bool has(int id) const { return values_.count(id) != 0; }
  int get_int(int id, int fallback) const;
  float get_float(int id, float fallback) const;
  std::vector<int> get_ints(int id) const;      // empty when absent
  std::vector<float> get_floats(int id) const;  // empty when absent
  std::string get_string(int id, const std::string& fallback = {}) const;
  const std::map<int, NcnnParamValue>& all() const { return values_; }

 private:
  std::map<int, NcnnParamValue> values_;
};

struct NcnnLayer {
  std::string type;
  std::string name;
  std::vector<std::string> inputs;   // blob names
  std::vector<std::string> outputs;  // blob names
  NcnnParams params;
};

struct NcnnGraph {
  std::vector<NcnnLayer> layers;  // in file order, which ncnn guarantees is topological
  int blob_count = 0;
  std::string source;  // file name, for error messages
};

// Throws framelift::Error(ErrorKind::Model) naming the file and line on malformed input.
NcnnGraph parse_ncnn_param(const std::filesystem::path& path);
NcnnGraph parse_ncnn_param_text(std::string_view text, const std::string& source_name);

}  // namespace framelift::weights
