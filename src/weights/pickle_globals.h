#pragma once
// The only Python names a weight pickle may refer to, and what "calling" them means here. A pickle
// is a program: GLOBAL + REDUCE can call any importable function (os.system, builtins.eval), which
// is why torch.load on an untrusted file is code execution. We never import anything; we recognise
// the handful of names a state dict needs and refuse every other one by name.
#include <functional>
#include <string>

#include "weights/pickle_value.h"

namespace framelift::weights::pickle {

// Throws Error(Model) "<label>: pickle refers to forbidden global 'module.name' ..." unless allowed.
// `torchscript`: a TorchScript archive's pickle, which may also name its __torch__ module classes
// and torch.jit._pickle's list builders.
void check_global(const Global& global, const std::string& label, bool torchscript = false);

// REDUCE/NEWOBJ of an allowed global: OrderedDict() makes a dict, the tensor rebuilders make a
// TensorRef, the parameter rebuilders pass their tensor through; in a TorchScript pickle a module
// class with no arguments makes an empty attribute dict (Node::module) and build_intlist & co.
// pass their list through. Anything else throws.
Value call_global(const Global& callable, const Node& args, const std::function<Node*(Node::Kind)>& new_node,
                  const std::string& label, bool torchscript = false);

// BINPERSID: ('storage', torch.XStorage, key, location, numel[, (view_key, offset, numel)]).
StorageRef storage_from_persistent_id(const Value& pid, const std::string& label);

}  // namespace framelift::weights::pickle
