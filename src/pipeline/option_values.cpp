#include "pipeline/option_values.h"

#include <stdexcept>

namespace framelift::pipeline {
namespace {

const char* type_name(const OptionValues::Value& v) {
  switch (v.index()) {
    case 0: return "no value";
    case 1: return "an integer";
    case 2: return "a number";
    case 3: return "a flag";
    case 4: return "a rate";
    default: return "text";
  }
}

}  // namespace

const OptionValues::Value& OptionValues::value(const std::string& name, const char* wanted) const {
  const auto it = values_.find(name);
  if (it == values_.end())
    throw std::logic_error("stage " + stage_ + " reads option '" + name + "', which its schema does not declare");
  if (std::holds_alternative<std::monostate>(it->second))
    throw std::logic_error("stage " + stage_ + " reads option '" + name + "' as " + wanted +
                           ", but it has no default and none was given (ask has() first)");
  return it->second;
}

bool OptionValues::has(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end())
    throw std::logic_error("stage " + stage_ + " asks for option '" + name + "', which its schema does not declare");
  return !std::holds_alternative<std::monostate>(it->second);
}

bool OptionValues::given(const std::string& name) const { return has(name) && given_.count(name) > 0; }

int64_t OptionValues::integer(const std::string& name) const {
  const Value& v = value(name, "an integer");
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  throw std::logic_error("stage " + stage_ + " reads option '" + name + "' as an integer, but it is " + type_name(v));
}

double OptionValues::number(const std::string& name) const {
  const Value& v = value(name, "a number");
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<int64_t>(&v)) return double(*i);
  throw std::logic_error("stage " + stage_ + " reads option '" + name + "' as a number, but it is " + type_name(v));
}

bool OptionValues::flag(const std::string& name) const {
  const Value& v = value(name, "a flag");
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  throw std::logic_error("stage " + stage_ + " reads option '" + name + "' as a flag, but it is " + type_name(v));
}

AVRational OptionValues::rate(const std::string& name) const {
  const Value& v = value(name, "a rate");
  if (const auto* r = std::get_if<AVRational>(&v)) return *r;
  throw std::logic_error("stage " + stage_ + " reads option '" + name + "' as a rate, but it is " + type_name(v));
}

const std::string& OptionValues::text(const std::string& name) const {
  const Value& v = value(name, "text");
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  throw std::logic_error("stage " + stage_ + " reads option '" + name + "' as text, but it is " + type_name(v));
}

}  // namespace framelift::pipeline
