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

template <class T>
const T& OptionValues::as(const std::string& name, const char* wanted) const {
  const Value& v = value(name, wanted);
  if (const T* typed = std::get_if<T>(&v)) return *typed;
  throw std::logic_error("stage " + stage_ + " reads option '" + name + "' as " + wanted + ", but it is " + type_name(v));
}

int64_t OptionValues::integer(const std::string& name) const { return as<int64_t>(name, "an integer"); }

double OptionValues::number(const std::string& name) const {
  if (const auto* i = std::get_if<int64_t>(&value(name, "a number"))) return double(*i);
  return as<double>(name, "a number");
}

bool OptionValues::flag(const std::string& name) const { return as<bool>(name, "a flag"); }

AVRational OptionValues::rate(const std::string& name) const { return as<AVRational>(name, "a rate"); }

const std::string& OptionValues::text(const std::string& name) const { return as<std::string>(name, "text"); }

}  // namespace framelift::pipeline
