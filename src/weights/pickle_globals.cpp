#include "weights/pickle_globals.h"

#include <array>
#include <string_view>

#include "util/error.h"
#include "util/str.h"

namespace framelift::weights::pickle {
namespace {

// Callables and markers a state dict pickle uses. Storage classes are checked separately.
constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kAllowed{{
    {"collections", "OrderedDict"},
    {"torch._utils", "_rebuild_tensor"},
    {"torch._utils", "_rebuild_tensor_v2"},
    {"torch._utils", "_rebuild_parameter"},
    {"torch._utils", "_rebuild_parameter_with_state"},
    {"torch._tensor", "_rebuild_from_type_v2"},
    {"torch.nn.parameter", "Parameter"},
    {"torch", "Tensor"},
}};

// A tensor has at most a handful of dimensions; the cap stops a hostile pickle from making us
// multiply long size tuples.
constexpr size_t kMaxDims = 64;

[[noreturn]] void fail(const std::string& label, const std::string& problem) {
  throw Error(ErrorKind::Model, str(label, ": ", problem));
}

bool is(const Global& g, std::string_view module, std::string_view name) {
  return g.module == module && g.name == name;
}

// A class TorchScript compiled ("__torch__.interpolator.Interpolator", "__torch__.torch.nn.modules...").
bool is_script_class(const Global& g) { return g.module == "__torch__" || g.module.starts_with("__torch__."); }

// torch.jit._pickle's builders of typed lists (a module's int list attributes).
bool is_list_builder(const Global& g) {
  return g.module == "torch.jit._pickle" && (g.name == "build_intlist" || g.name == "build_doublelist" || g.name == "build_boollist");
}

int64_t int_arg(const Node& args, size_t i, std::string_view fn, const std::string& label) {
  const auto* v = as<int64_t>(args.items[i]);
  if (!v) fail(label, str(fn, ": argument ", i, " must be an int, got ", type_name(args.items[i])));
  return *v;
}

std::vector<int64_t> ints_arg(const Node& args, size_t i, std::string_view fn,
                              const std::string& label) {
  const Node* tuple = as_node(args.items[i], Node::Kind::Tuple);
  if (!tuple) fail(label, str(fn, ": argument ", i, " must be a tuple, got ", type_name(args.items[i])));
  if (tuple->items.size() > kMaxDims)
    fail(label, str(fn, ": ", tuple->items.size(), " dimensions (at most ", kMaxDims, ")"));
  std::vector<int64_t> out;
  for (const auto& item : tuple->items) {
    const auto* v = as<int64_t>(item);
    if (!v) fail(label, str(fn, ": tensor sizes and strides must be ints, got ", type_name(item)));
    out.push_back(*v);
  }
  return out;
}

Value rebuild_tensor(const Node& args, std::string_view fn, const std::string& label) {
  if (args.items.size() < 4) fail(label, str(fn, ": expected at least 4 arguments, got ", args.items.size()));
  const auto* storage = as<StorageRef>(args.items[0]);
  if (!storage) fail(label, str(fn, ": first argument must be a storage, got ", type_name(args.items[0])));
  TensorRef tensor{*storage, int_arg(args, 1, fn, label), ints_arg(args, 2, fn, label),
                   ints_arg(args, 3, fn, label)};
  if (tensor.sizes.size() != tensor.strides.size())
    fail(label, str(fn, ": ", tensor.sizes.size(), " sizes but ", tensor.strides.size(), " strides"));
  return tensor;
}

Value pass_tensor(const Node& args, std::string_view fn, const std::string& label) {
  if (args.items.empty() || !as<TensorRef>(args.items[0]))
    fail(label, str(fn, ": first argument must be a tensor"));
  return args.items[0];
}

}  // namespace

void check_global(const Global& global, const std::string& label, bool torchscript) {
  for (auto [module, name] : kAllowed)
    if (is(global, module, name)) return;
  if (torchscript && (is_script_class(global) || is_list_builder(global))) return;
  if (global.module == "torch" && dtype_from_storage_name(global.name)) return;
  fail(label, str("pickle refers to forbidden global '", global.module, ".", global.name,
                  "' (only state-dict tensors are accepted; whole pickled models are not)"));
}

Value call_global(const Global& callable, const Node& args, const std::function<Node*(Node::Kind)>& new_node,
                  const std::string& label, bool torchscript) {
  const std::string fn = str(callable.module, ".", callable.name);
  if (torchscript && is_script_class(callable)) {
    // cls.__new__(cls): the attributes come with BUILD.
    if (!args.items.empty()) fail(label, str(fn, ": a module object is made without arguments"));
    Node* object = new_node(Node::Kind::Dict);
    object->module = true;
    return object;
  }
  if (torchscript && is_list_builder(callable)) {
    if (args.items.size() != 1 || !as_node(args.items[0], Node::Kind::List)) fail(label, str(fn, ": expected one list"));
    return args.items[0];
  }
  if (is(callable, "collections", "OrderedDict")) {
    // OrderedDict's __reduce__ passes no arguments and adds the items with SETITEMS afterwards.
    if (!args.items.empty()) fail(label, str(fn, ": expected no arguments"));
    return new_node(Node::Kind::Dict);
  }
  if (is(callable, "torch._utils", "_rebuild_tensor_v2") ||
      is(callable, "torch._utils", "_rebuild_tensor"))
    return rebuild_tensor(args, fn, label);
  if (is(callable, "torch._utils", "_rebuild_parameter") ||
      is(callable, "torch._utils", "_rebuild_parameter_with_state"))
    return pass_tensor(args, fn, label);
  if (is(callable, "torch._tensor", "_rebuild_from_type_v2")) {
    // (func, new_type, args, state): a tensor subclass wrapper around an inner rebuild call.
    if (args.items.size() < 3) fail(label, str(fn, ": expected 4 arguments"));
    const auto* inner = as<Global>(args.items[0]);
    const Node* inner_args = as_node(args.items[2], Node::Kind::Tuple);
    if (!inner || !inner_args || is(*inner, callable.module, callable.name))
      fail(label, str(fn, ": malformed arguments"));
    Value result = call_global(*inner, *inner_args, new_node, label, torchscript);
    if (!as<TensorRef>(result)) fail(label, str(fn, ": inner call did not make a tensor"));
    return result;
  }
  fail(label, str("pickle calls '", fn, "', which is not a tensor or dict constructor"));
}

StorageRef storage_from_persistent_id(const Value& pid, const std::string& label) {
  const Node* tuple = as_node(pid, Node::Kind::Tuple);
  if (!tuple || tuple->items.size() < 5)
    fail(label, "persistent id is not a ('storage', type, key, location, size) tuple");
  const auto& items = tuple->items;
  const auto* tag = as<std::string>(items[0]);
  if (!tag || *tag != "storage") fail(label, "persistent id does not name a storage");
  const auto* type = as<Global>(items[1]);
  std::optional<Dtype> dtype;
  if (type && type->module == "torch") dtype = dtype_from_storage_name(type->name);
  if (!dtype) fail(label, "persistent id has an unsupported storage type");
  StorageRef ref;
  ref.dtype = *dtype;
  if (const auto* key = as<std::string>(items[2])) ref.key = *key;
  else if (const auto* number = as<int64_t>(items[2])) ref.key = std::to_string(*number);
  else fail(label, "storage key must be a string");
  const auto* numel = as<int64_t>(items[4]);
  if (!numel || *numel < 0) fail(label, str("storage ", ref.key, " has an invalid element count"));
  ref.numel = *numel;
  if (items.size() > 5 && !as<None>(items[5])) {
    const Node* view = as_node(items[5], Node::Kind::Tuple);
    const int64_t* offset = view && view->items.size() == 3 ? as<int64_t>(view->items[1]) : nullptr;
    const int64_t* count = view && view->items.size() == 3 ? as<int64_t>(view->items[2]) : nullptr;
    if (!offset || !count || *offset < 0 || *count < 0 || *offset > ref.numel ||
        *count > ref.numel - *offset)
      fail(label, str("storage ", ref.key, " has an invalid view"));
    ref.view_offset = *offset;
    ref.view_numel = *count;
  }
  return ref;
}

}  // namespace framelift::weights::pickle
