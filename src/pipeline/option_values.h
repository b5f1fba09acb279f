#pragma once
// A stage's options once validated (option_schema.h: validate_options): every option its schema
// declares, typed, holding what the stage's text gave, else the command line's default
// (StageOptions::set_defaults), else the schema's default. Stage factories read these and nothing
// else, so an option's default is spelled in one place, its schema line. An option whose schema
// default is "" (it depends on other options or on the machine: tile_overlap, threads, fps) has
// no value until a user gives one; the stage asks has() first and says in the schema's help what
// happens without it.
//
// Reading a name the schema does not declare, as another type than declared, or one that has no
// value, is a bug in the stage rather than bad input, and throws std::logic_error; bad input never
// gets this far (validate_options refuses it with Error(Usage)). Copyable; read-only once made.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <variant>

extern "C" {
#include <libavutil/rational.h>
}

namespace framelift::pipeline {

class OptionValues {
 public:
  // Integer and Size (bytes) hold int64_t, Number double, Flag bool, Rate AVRational, Choice and
  // Text the text; std::monostate: no value.
  using Value = std::variant<std::monostate, int64_t, double, bool, AVRational, std::string>;

  OptionValues() = default;
  OptionValues(std::string stage, std::map<std::string, Value> values, std::set<std::string> given)
      : stage_(std::move(stage)), values_(std::move(values)), given_(std::move(given)) {}

  const std::string& stage() const { return stage_; }
  // A value: given, or the schema's default.
  bool has(const std::string& name) const;
  // Set by the stage's text or the command line, not the schema's default.
  bool given(const std::string& name) const;

  int64_t integer(const std::string& name) const;  // Integer, Size
  double number(const std::string& name) const;    // Number; an Integer reads as a number too
  bool flag(const std::string& name) const;
  AVRational rate(const std::string& name) const;
  const std::string& text(const std::string& name) const;  // Text, Choice

  // Every declared option by name (std::monostate where it has no value).
  const std::map<std::string, Value>& all() const { return values_; }

 private:
  std::string stage_;
  std::map<std::string, Value> values_;
  std::set<std::string> given_;

  const Value& value(const std::string& name, const char* wanted) const;
  template <class T>
  const T& as(const std::string& name, const char* wanted) const;
};

}  // namespace framelift::pipeline
