#include "weights/unpickler.h"

#include <bit>
#include <cstring>
#include <unordered_map>

#include "util/error.h"
#include "util/str.h"
#include "weights/byte_reader.h"
#include "weights/pickle_globals.h"

namespace framelift::weights::pickle {
namespace {

// Opcode bytes, named as in CPython's pickletools.
enum Op : uint8_t {
  MARK = '(', STOP = '.', POP = '0', POP_MARK = '1', DUP = '2',
  BININT = 'J', BININT1 = 'K', BININT2 = 'M', NONE = 'N', BINPERSID = 'Q', REDUCE = 'R',
  BINSTRING = 'T', SHORT_BINSTRING = 'U', BINUNICODE = 'X', BINBYTES = 'B', SHORT_BINBYTES = 'C',
  APPEND = 'a', BUILD = 'b', GLOBAL = 'c', DICT = 'd', APPENDS = 'e', BINGET = 'h',
  LONG_BINGET = 'j', LIST = 'l', BINPUT = 'q', LONG_BINPUT = 'r', SETITEM = 's', TUPLE = 't',
  SETITEMS = 'u', BINFLOAT = 'G', EMPTY_DICT = '}', EMPTY_LIST = ']', EMPTY_TUPLE = ')',
  PROTO = 0x80, NEWOBJ = 0x81, TUPLE1 = 0x85, TUPLE2 = 0x86, TUPLE3 = 0x87, NEWTRUE = 0x88,
  NEWFALSE = 0x89, LONG1 = 0x8a, LONG4 = 0x8b, SHORT_BINUNICODE = 0x8c, BINUNICODE8 = 0x8d,
  BINBYTES8 = 0x8e, STACK_GLOBAL = 0x93, MEMOIZE = 0x94, FRAME = 0x95,
};

// A container node with its allocation and arena slot; a memo entry in its hash map.
constexpr size_t kNodeBytes = sizeof(Node) + 32;
constexpr size_t kMemoEntryBytes = sizeof(Value) + 32;

// What BINGET/DUP copy: containers are shared, so only inline payloads count.
size_t copy_cost(const Value& value) {
  if (const auto* s = as<std::string>(value)) return s->size();
  if (const auto* b = as<Bytes>(value)) return b->data.size();
  if (const auto* b = as<BigInt>(value)) return b->bytes.size();
  if (const auto* g = as<Global>(value)) return g->module.size() + g->name.size();
  if (const auto* s = as<StorageRef>(value)) return s->key.size();
  if (const auto* t = as<TensorRef>(value))
    return t->storage.key.size() + 16 * t->sizes.size();
  return 0;
}

class Machine {
 public:
  Machine(std::span<const uint8_t> bytes, const std::string& label, const Limits& limits)
      : in_(bytes, label), label_(label), limits_(limits), memory_budget_(memory_budget(bytes.size(), limits)) {}

  Unpickled run() {
    while (true) {
      const size_t at = in_.position();
      const uint8_t op = in_.u8("opcode");
      if (op == STOP) {
        out_.root = pop("STOP");
        out_.consumed = in_.position();
        return std::move(out_);
      }
      step(op, at);
      check_memory();
    }
  }

  // What the values made so far hold: containers and strings are never freed before the end
  // (held_), the stack and memo are counted as they are now. Memo copies have their own bound.
  size_t memory_in_use() const {
    return held_ + stack_.size() * sizeof(Value) + memo_.size() * kMemoEntryBytes;
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const { in_.fail(str("pickle: ", problem)); }

  static size_t memory_budget(size_t size, const Limits& limits) {
    size_t budget = 0;
    if (__builtin_mul_overflow(size, limits.memory_per_byte, &budget) ||
        __builtin_add_overflow(budget, limits.memory_floor, &budget))
      return SIZE_MAX;
    return budget;
  }

  void check_memory() const {
    if (memory_in_use() > memory_budget_)
      fail(str("needs more than ", memory_budget_ >> 20, " MiB of memory for a ", in_.position() + in_.remaining(),
               "-byte pickle (a pickle bomb?)"));
  }

  // Values stored into a container stay until the end: counted once, when stored.
  void store(size_t values) { held_ += values * sizeof(Value); }

  Node* new_node(Node::Kind kind) {
    held_ += kNodeBytes;
    out_.arena.push_back(std::make_unique<Node>());
    out_.arena.back()->kind = kind;
    return out_.arena.back().get();
  }

  void push(Value value) { stack_.push_back(std::move(value)); }

  Value pop(std::string_view op) {
    if (stack_.empty() || (!marks_.empty() && marks_.back() == stack_.size()))
      fail(str(op, " on an empty stack"));
    Value v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }

  Value& top(std::string_view op) {
    if (stack_.empty() || (!marks_.empty() && marks_.back() == stack_.size()))
      fail(str(op, " on an empty stack"));
    return stack_.back();
  }

  // Pops everything above the innermost MARK, and the mark.
  std::vector<Value> pop_mark(std::string_view op) {
    if (marks_.empty()) fail(str(op, " without a MARK"));
    const size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<Value> items(std::make_move_iterator(stack_.begin() + static_cast<ptrdiff_t>(mark)),
                             std::make_move_iterator(stack_.end()));
    stack_.resize(mark);
    return items;
  }

  Node* container(Value& value, Node::Kind kind, std::string_view op) {
    auto* const* node = std::get_if<Node*>(&value);
    if (!node || (*node)->kind != kind)
      fail(str(op, " needs a ", kind == Node::Kind::Dict ? "dict" : "list", ", got ",
               type_name(value)));
    return *node;
  }

  void push_tuple(std::vector<Value> items) {
    store(items.size());
    Node* node = new_node(Node::Kind::Tuple);
    node->items = std::move(items);
    push(node);
  }

  std::string text(uint64_t n, std::string_view what) {
    auto bytes = in_.take(n, what);
    held_ += n;
    return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }

  std::string line(std::string_view what) {
    std::string out;
    while (true) {
      const char c = static_cast<char>(in_.u8(what));
      if (c == '\n') return out;
      out.push_back(c);
    }
  }

  Value long_value(uint64_t n) {
    auto bytes = in_.take(n, "LONG");
    if (n > 8) return BigInt{std::string(reinterpret_cast<const char*>(bytes.data()), n)};
    uint64_t value = 0;
    for (size_t i = 0; i < n; ++i) value |= uint64_t{bytes[i]} << (8 * i);
    if (n > 0 && n < 8 && (bytes[n - 1] & 0x80)) value |= ~uint64_t{0} << (8 * n);  // sign-extend
    return static_cast<int64_t>(value);
  }

  void memo_put(uint32_t index, std::string_view op) {
    Value& value = top(op);
    charge(value);
    memo_[index] = value;
  }

  void memo_get(uint32_t index) {
    auto it = memo_.find(index);
    if (it == memo_.end()) fail(str("memo entry ", index, " read before it was written"));
    charge(it->second);
    push(it->second);
  }

  void charge(const Value& value) {
    copied_ += copy_cost(value);
    if (copied_ > limits_.max_copied_bytes)
      fail("too much memo copying (a pickle bomb?)");
  }

  void push_global(Global global) {
    check_global(global, label_, limits_.torchscript_modules);
    push(std::move(global));
  }

  void call(std::string_view op) {
    Value args = pop(op);
    Value callable = pop(op);
    const auto* global = as<Global>(callable);
    const Node* tuple = as_node(args, Node::Kind::Tuple);
    if (!global) fail(str(op, " calls a ", type_name(callable), ", not a global"));
    if (!tuple) fail(str(op, " arguments must be a tuple, got ", type_name(args)));
    push(call_global(*global, *tuple, [this](Node::Kind k) { return new_node(k); }, label_, limits_.torchscript_modules));
  }

  void setitems(std::vector<Value> items, Value& target, std::string_view op) {
    if (items.size() % 2) fail(str(op, " with an odd number of items"));
    Node* dict = container(target, Node::Kind::Dict, op);
    store(items.size() + items.size() / 2);  // an index entry per key
    for (size_t i = 0; i < items.size(); i += 2) dict->set(std::move(items[i]), std::move(items[i + 1]));
  }

  void step(uint8_t op, size_t at) {
    switch (op) {
      case PROTO: {
        const uint8_t version = in_.u8("protocol");
        if (version > 5) fail(str("unsupported protocol ", int{version}));
        return;
      }
      case FRAME: in_.u64("frame length"); return;  // framing is only a read-ahead hint
      case MARK: marks_.push_back(stack_.size()); return;
      case POP: pop("POP"); return;
      case POP_MARK: pop_mark("POP_MARK"); return;
      case DUP: { Value v = top("DUP"); charge(v); push(std::move(v)); return; }
      case NONE: push(None{}); return;
      case NEWTRUE: push(true); return;
      case NEWFALSE: push(false); return;
      case BININT: push(int64_t{static_cast<int32_t>(in_.u32("BININT"))}); return;
      case BININT1: push(int64_t{in_.u8("BININT1")}); return;
      case BININT2: push(int64_t{in_.u16("BININT2")}); return;
      case LONG1: push(long_value(in_.u8("LONG1 length"))); return;
      case LONG4: {
        const auto n = static_cast<int32_t>(in_.u32("LONG4 length"));
        if (n < 0) fail("negative LONG4 length");
        push(long_value(static_cast<uint64_t>(n)));
        return;
      }
      case BINFLOAT: {
        auto b = in_.take(8, "BINFLOAT");
        uint64_t bits = 0;
        for (size_t i = 0; i < 8; ++i) bits = (bits << 8) | b[i];  // big-endian
        push(std::bit_cast<double>(bits));
        return;
      }
      case SHORT_BINUNICODE: push(text(in_.u8("string length"), "string")); return;
      case BINUNICODE: push(text(in_.u32("string length"), "string")); return;
      case BINUNICODE8: push(text(in_.u64("string length"), "string")); return;
      case SHORT_BINSTRING: push(text(in_.u8("string length"), "string")); return;
      case BINSTRING: {
        const auto n = static_cast<int32_t>(in_.u32("string length"));
        if (n < 0) fail("negative BINSTRING length");
        push(text(static_cast<uint64_t>(n), "string"));
        return;
      }
      case SHORT_BINBYTES: push(Bytes{text(in_.u8("bytes length"), "bytes")}); return;
      case BINBYTES: push(Bytes{text(in_.u32("bytes length"), "bytes")}); return;
      case BINBYTES8: push(Bytes{text(in_.u64("bytes length"), "bytes")}); return;
      case EMPTY_DICT: push(new_node(Node::Kind::Dict)); return;
      case EMPTY_LIST: push(new_node(Node::Kind::List)); return;
      case EMPTY_TUPLE: push_tuple({}); return;
      case TUPLE: push_tuple(pop_mark("TUPLE")); return;
      case TUPLE1: case TUPLE2: case TUPLE3: {
        const size_t n = op - TUPLE1 + 1;
        std::vector<Value> items(n);
        for (size_t i = n; i-- > 0;) items[i] = pop("TUPLE");
        push_tuple(std::move(items));
        return;
      }
      case LIST: {
        Node* list = new_node(Node::Kind::List);
        list->items = pop_mark("LIST");
        store(list->items.size());
        push(list);
        return;
      }
      case DICT: {
        auto items = pop_mark("DICT");
        Value dict = new_node(Node::Kind::Dict);
        setitems(std::move(items), dict, "DICT");
        push(std::move(dict));
        return;
      }
      case APPEND: {
        Value item = pop("APPEND");
        container(top("APPEND"), Node::Kind::List, "APPEND")->items.push_back(std::move(item));
        store(1);
        return;
      }
      case APPENDS: {
        auto items = pop_mark("APPENDS");
        Node* list = container(top("APPENDS"), Node::Kind::List, "APPENDS");
        for (auto& item : items) list->items.push_back(std::move(item));
        store(items.size());
        return;
      }
      case SETITEM: {
        Value value = pop("SETITEM");
        Value key = pop("SETITEM");
        container(top("SETITEM"), Node::Kind::Dict, "SETITEM")->set(std::move(key), std::move(value));
        store(3);
        return;
      }
      case SETITEMS: {
        auto items = pop_mark("SETITEMS");
        setitems(std::move(items), top("SETITEMS"), "SETITEMS");
        return;
      }
      case BINPUT: memo_put(in_.u8("memo index"), "BINPUT"); return;
      case LONG_BINPUT: memo_put(in_.u32("memo index"), "LONG_BINPUT"); return;
      case MEMOIZE: memo_put(static_cast<uint32_t>(memo_.size()), "MEMOIZE"); return;
      case BINGET: memo_get(in_.u8("memo index")); return;
      case LONG_BINGET: memo_get(in_.u32("memo index")); return;
      case GLOBAL: {
        std::string module = line("GLOBAL module");
        std::string name = line("GLOBAL name");
        push_global({std::move(module), std::move(name)});
        return;
      }
      case STACK_GLOBAL: {
        Value name = pop("STACK_GLOBAL");
        Value module = pop("STACK_GLOBAL");
        const auto* m = as<std::string>(module);
        const auto* n = as<std::string>(name);
        if (!m || !n) fail("STACK_GLOBAL needs two strings");
        push_global({*m, *n});
        return;
      }
      case REDUCE: call("REDUCE"); return;
      case NEWOBJ: call("NEWOBJ"); return;
      case BUILD: {
        // Only __setstate__ on objects we made: OrderedDict's attribute dict (_metadata) and
        // tensor state carry nothing a state dict needs; a TorchScript module object's state is
        // its attributes (submodules, parameters), which it takes.
        Value state = pop("BUILD");
        Value& target = top("BUILD");
        if (!as_node(target, Node::Kind::Dict) && !as<TensorRef>(target))
          fail(str("BUILD on a ", type_name(target)));
        Node* const* object = std::get_if<Node*>(&target);
        const Node* attributes = as_node(state, Node::Kind::Dict);
        if (object && (*object)->module && attributes) {
          store(attributes->entries.size() * 3);
          for (const auto& [key, value] : attributes->entries) (*object)->set(key, value);
        }
        return;
      }
      case BINPERSID: {
        StorageRef ref = storage_from_persistent_id(pop("BINPERSID"), label_);
        out_.storages.push_back(ref);
        push(std::move(ref));
        return;
      }
      default:
        fail(str("unsupported opcode 0x", "0123456789abcdef"[op >> 4], "0123456789abcdef"[op & 15],
                 " at offset ", at));
    }
  }

  ByteReader in_;
  const std::string& label_;
  Limits limits_;
  Unpickled out_;
  std::vector<Value> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint32_t, Value> memo_;
  size_t copied_ = 0;
  const size_t memory_budget_;
  size_t held_ = 0;
};

}  // namespace

Unpickled unpickle(std::span<const uint8_t> bytes, const std::string& label, const Limits& limits) {
  return Machine(bytes, label, limits).run();
}

}  // namespace framelift::weights::pickle
