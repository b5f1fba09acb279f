#pragma once
// The table of architectures: what each one is, independent of libtorch, so that the planner,
// the profiler and the tiler read one declaration and the network code (src/models/) only
// builds it. An architecture declares its name, the scales it comes in, the precisions it runs
// in, the frames one call takes, and a cost walk that also gives its tile geometry (size
// multiple, overlap) for a given scale and hyper-parameters.
//
// Adding an architecture: its declaration in a file of its own here (see srvgg_compact.cpp), its
// network in src/models/ (detector and builder), and one line in arch/architecture_list.h, which
// every table expands. The registry refuses a network whose name has no declaration. List the tensor axes its detector reads (`axes`)
// and what must hold of them (`constraints`, constraints.h): the registry checks every detection
// against them, and a detector that divides by what it read calls check_shapes() first.
#include <functional>
#include <string>
#include <vector>

#include "arch/constraints.h"
#include "arch/cost.h"
#include "arch/params.h"

namespace framelift::arch {

enum class Precision { Fp32, Bf16, Fp16 };
const char* precision_name(Precision p);  // "fp32", "bf16", "fp16"

struct Declaration {
  std::string name;          // "srvgg_compact"; what DetectedArch::arch and the catalog say
  std::string description;   // "Real-ESRGAN Compact (SRVGGNetCompact)"
  std::vector<int> scales;   // the scales its checkpoints come in
  // Where its weights and activations hold up (quality gates in tests/models): fp32 always.
  std::vector<Precision> precisions = {Precision::Fp32, Precision::Bf16, Precision::Fp16};
  int frames_per_call = 1;   // input frames one call takes (RIFE: 2)
  // The walk for one scale and set of hyper-parameters (missing ones take the common values).
  std::function<ArchCost(int scale, const ArchParams& params)> walk;
  // The tensor axes detection reads, by the hyper-parameter each becomes (named in refusals and
  // mutated by tests/models/malformed_shapes_test.cpp), and what must hold of those values.
  std::vector<Axis> axes;
  std::vector<Constraint> constraints;

  bool runs_in(Precision p) const;
};

// Every declared architecture, in table order.
const std::vector<Declaration>& declarations();
// nullptr when `name` is not declared.
const Declaration* find_declaration(const std::string& name);
// Throws Error(Usage, "architecture NAME: no cost model (known: ...)") when it is not.
const Declaration& declaration(const std::string& name);

// check_params() with `name`'s axes and constraints: Error(Model) "<source>: NAME: ..." when a
// value read off the checkpoint is not one the architecture can have. Nothing for an undeclared name.
void check_shapes(const std::string& name, const ArchParams& params, const std::string& source);

// The declared cost of `name` at `scale`. Throws Error(Usage) for an undeclared architecture or
// a scale it does not come in.
ArchCost cost(const std::string& name, int scale, const ArchParams& params = {});

}  // namespace framelift::arch
