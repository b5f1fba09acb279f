#include "arch/constraints.h"

#include <cmath>

#include "util/error.h"
#include "util/str.h"

namespace framelift::arch {

Constraint positive(std::string param) { return {Constraint::Kind::Positive, std::move(param), "", 1, 0}; }
Constraint at_most(std::string param, double n) { return {Constraint::Kind::AtMost, std::move(param), "", 0, n}; }
Constraint in_range(std::string param, double lo, double hi) { return {Constraint::Kind::InRange, std::move(param), "", lo, hi}; }
Constraint multiple_of(std::string param, double n) { return {Constraint::Kind::MultipleOf, std::move(param), "", n, 0}; }
Constraint divides(std::string param, std::string other, double factor) {
  return {Constraint::Kind::Divides, std::move(param), std::move(other), factor, 0};
}
Constraint equals(std::string param, std::string other) { return {Constraint::Kind::Equals, std::move(param), std::move(other), 0, 0}; }
Constraint no_more_than(std::string param, std::string other) {
  return {Constraint::Kind::NoMoreThan, std::move(param), std::move(other), 0, 0};
}

namespace {

// "heads 0 (layers.0...table, axis 1)": the value and, when declared, where it was read.
std::string named(const std::string& param, double value, const std::vector<Axis>& axes) {
  for (const Axis& a : axes)
    if (a.param == param) return str(param, " ", value, " (", a.tensor, ", axis ", a.axis, ")");
  return str(param, " ", value);
}

bool whole(double v) { return std::trunc(v) == v; }

// The problem with constraint c, or "" when it holds. Values are bounded (kMaxParam) and finite
// here, so the doubles hold them exactly and fmod is exact.
std::string problem(const Constraint& c, const ArchParams& p, const std::vector<Axis>& axes) {
  const double v = p.get(c.param, 0);
  const std::string what = named(c.param, v, axes);
  switch (c.kind) {
    case Constraint::Kind::Positive:
      return v >= 1 && whole(v) ? "" : str(what, ": it must be a whole number of at least 1");
    case Constraint::Kind::AtMost:
      return v <= c.hi ? "" : str(what, ": it must be at most ", c.hi);
    case Constraint::Kind::InRange:
      return v >= c.lo && v <= c.hi ? "" : str(what, ": it must be within [", c.lo, ", ", c.hi, "]");
    case Constraint::Kind::MultipleOf:
      return std::fmod(v, c.lo) == 0 ? "" : str(what, ": it must be a multiple of ", c.lo);
    case Constraint::Kind::Divides: {
      const double o = p.get(c.other, 0) * c.lo;
      if (!(v >= 1 && whole(v))) return str(what, ": it must be a whole number of at least 1");
      const std::string of = c.lo == 1 ? named(c.other, o, axes) : str(named(c.other, p.get(c.other, 0), axes), " times ", c.lo);
      return std::fmod(o, v) == 0 ? "" : str(of, " does not split into whole parts of ", what);
    }
    case Constraint::Kind::Equals:
      return v == p.get(c.other, 0) ? "" : str(what, " differs from ", named(c.other, p.get(c.other, 0), axes));
    case Constraint::Kind::NoMoreThan:
      return v <= p.get(c.other, 0) ? "" : str(what, " is more than ", named(c.other, p.get(c.other, 0), axes));
  }
  return "";
}

bool applies(const Constraint& c, const ArchParams& p) {
  const bool two = c.kind == Constraint::Kind::Divides || c.kind == Constraint::Kind::Equals || c.kind == Constraint::Kind::NoMoreThan;
  return p.contains(c.param) && (!two || p.contains(c.other));
}

}  // namespace

void check_params(const std::string& arch, const std::vector<Axis>& axes, const std::vector<Constraint>& constraints,
                  const ArchParams& params, const std::string& source) {
  auto fail = [&](const std::string& why) { return Error(ErrorKind::Model, str(source, ": ", arch, ": ", why)); };
  for (const auto& [name, value] : params)
    if (!std::isfinite(value) || std::fabs(value) > kMaxParam)
      throw fail(str(named(name, value, axes), ": larger than any model has (at most ", kMaxParam, ")"));
  for (const Constraint& c : constraints) {
    if (!applies(c, params)) continue;
    if (const std::string why = problem(c, params, axes); !why.empty()) throw fail(why);
  }
}

}  // namespace framelift::arch
