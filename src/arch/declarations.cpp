#include <algorithm>

#include "arch/builtin.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::arch {

const std::vector<Declaration>& declarations() {
  static const std::vector<Declaration> table = {
#define FRAMELIFT_DECLARATION(id) id##_declaration(),
      FRAMELIFT_ARCHITECTURES(FRAMELIFT_DECLARATION, FRAMELIFT_DECLARATION)
#undef FRAMELIFT_DECLARATION
  };
  return table;
}

Declaration interpolator_declaration(std::string name, std::string description,
                                     std::function<ArchCost(const ArchParams&)> walk) {
  return {.name = std::move(name),
          .description = std::move(description),
          .scales = {1},
          .frames_per_call = 2,
          .walk =
              [walk = std::move(walk)](int, const ArchParams& p) {
                ArchCost c = walk(p);
                c.call_overhead_px = 40000;
                return c;
              },
          .axes = {},
          .constraints = {}};
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::Fp32: return "fp32";
    case Precision::Bf16: return "bf16";
    case Precision::Fp16: return "fp16";
  }
  return "?";
}

bool Declaration::runs_in(Precision p) const { return std::find(precisions.begin(), precisions.end(), p) != precisions.end(); }

const Declaration* find_declaration(const std::string& name) {
  for (const auto& d : declarations())
    if (d.name == name) return &d;
  return nullptr;
}

const Declaration& declaration(const std::string& name) {
  if (const Declaration* d = find_declaration(name)) return *d;
  std::string known;
  for (const auto& d : declarations()) known += (known.empty() ? "" : ", ") + d.name;
  throw Error(ErrorKind::Usage, str("architecture ", name, ": no cost model for it (known: ", known, ")"));
}

void check_shapes(const std::string& name, const ArchParams& params, const std::string& source) {
  const Declaration* d = find_declaration(name);
  // What every architecture's detection records besides its own parameters (the registry adds
  // them): 16 is twice the largest published scale.
  std::vector<Constraint> constraints = {positive("scale"), at_most("scale", 16), positive("in_channels"), positive("out_channels")};
  if (d) constraints.insert(constraints.end(), d->constraints.begin(), d->constraints.end());
  check_params(name, d ? d->axes : std::vector<Axis>{}, constraints, params, source);
}

ArchCost cost(const std::string& name, int scale, const ArchParams& params) {
  const Declaration& d = declaration(name);
  if (std::find(d.scales.begin(), d.scales.end(), scale) == d.scales.end()) {
    std::string scales;
    for (int s : d.scales) scales += (scales.empty() ? "" : ", ") + std::to_string(s);
    throw Error(ErrorKind::Usage, str("architecture ", name, ": scale ", scale, " is not one it comes in (", scales, ")"));
  }
  return d.walk(scale, params);
}

}  // namespace framelift::arch
