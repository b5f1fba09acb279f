// The restricted unpickler: what a state dict needs works, everything else is an Error naming the
// input — never a crash, never code.
#include <gtest/gtest.h>

#include "util/error.h"
#include "weight_file_builder.h"
#include "weights/unpickler.h"

namespace framelift::weights::pickle {
namespace {

using test::ByteString;
using test::PickleBuilder;

std::string error_of(const ByteString& bytes, const std::string& label = "hostile.pkl") {
  try {
    unpickle(bytes, label);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Model);
    return e.what();
  }
  return "";
}

TEST(Unpickler, RefusesOsSystemNamingFileAndGlobal) {
  // The classic exploit: cos\nsystem\n + ('echo pwned',) + REDUCE.
  PickleBuilder p;
  p.proto(2).global("os", "system").str("echo pwned").op(0x85).op('R').op('.');
  const std::string message = error_of(p.bytes());
  EXPECT_NE(message.find("hostile.pkl"), std::string::npos) << message;
  EXPECT_NE(message.find("os.system"), std::string::npos) << message;
}

TEST(Unpickler, RefusesBuiltinsEvalViaStackGlobal) {
  // Protocol 4 spelling: SHORT_BINUNICODE module, name, STACK_GLOBAL.
  PickleBuilder p;
  p.proto(4).op(0x8c).op(8).raw({'b', 'u', 'i', 'l', 't', 'i', 'n', 's'});
  p.op(0x8c).op(4).raw({'e', 'v', 'a', 'l'}).op(0x93);
  p.str("__import__('os').system('id')").op(0x85).op('R').op('.');
  const std::string message = error_of(p.bytes());
  EXPECT_NE(message.find("hostile.pkl"), std::string::npos) << message;
  EXPECT_NE(message.find("builtins.eval"), std::string::npos) << message;
}

TEST(Unpickler, RefusesOtherDangerousGlobals) {
  for (auto [module, name] : {std::pair{"posix", "system"}, {"subprocess", "Popen"},
                              {"torch", "load"}, {"torch._utils", "os"}, {"__builtin__", "exec"}}) {
    PickleBuilder p;
    p.proto(2).global(module, name).op('.');
    EXPECT_NE(error_of(p.bytes()).find(std::string(module) + "." + name), std::string::npos);
  }
}

TEST(Unpickler, ReadsAStateDictShapedPickle) {
  PickleBuilder p;
  p.proto(2).op('}').op('(').str("epoch").integer(-7).str("weights");
  p.global("collections", "OrderedDict").op(')').op('R').op('q').op(0);
  p.str("conv.weight").tensor("HalfStorage", "0", 12, 2, {2, 3}, {1, 2}).op('s');
  p.str("nested").op('h').op(0);  // memo reference to the same dict
  p.op('u').op('.');
  Unpickled out = unpickle(p.bytes(), "ok.pkl");
  EXPECT_EQ(out.consumed, p.bytes().size());
  const Node* root = as_node(out.root, Node::Kind::Dict);
  ASSERT_TRUE(root);
  EXPECT_EQ(*as<int64_t>(*root->get("epoch")), -7);
  const Node* weights = as_node(*root->get("weights"), Node::Kind::Dict);
  ASSERT_TRUE(weights);
  EXPECT_EQ(as_node(*root->get("nested"), Node::Kind::Dict), weights);
  const auto* tensor = as<TensorRef>(*weights->get("conv.weight"));
  ASSERT_TRUE(tensor);
  EXPECT_EQ(tensor->storage.dtype, Dtype::F16);
  EXPECT_EQ(tensor->storage.key, "0");
  EXPECT_EQ(tensor->storage.numel, 12);
  EXPECT_EQ(tensor->offset, 2);
  EXPECT_EQ(tensor->sizes, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(tensor->strides, (std::vector<int64_t>{1, 2}));
  ASSERT_EQ(out.storages.size(), 1u);
}

TEST(Unpickler, ScalarsAndLongs) {
  PickleBuilder p;
  // (LONG1 -2, LONG1 2^64-ish BigInt, BINFLOAT 1.5, True, None)
  p.proto(2).op('(').op(0x8a).op(1).op(0xfe);
  p.op(0x8a).op(9).raw({0, 0, 0, 0, 0, 0, 0, 0, 1});
  p.op('G').raw({0x3f, 0xf8, 0, 0, 0, 0, 0, 0}).op(0x88).op('N').op('t').op('.');
  Unpickled out = unpickle(p.bytes(), "ok.pkl");
  const Node* t = as_node(out.root, Node::Kind::Tuple);
  ASSERT_TRUE(t);
  ASSERT_EQ(t->items.size(), 5u);
  EXPECT_EQ(*as<int64_t>(t->items[0]), -2);
  EXPECT_EQ(as<BigInt>(t->items[1])->bytes.size(), 9u);
  EXPECT_EQ(*as<double>(t->items[2]), 1.5);
  EXPECT_TRUE(*as<bool>(t->items[3]));
  EXPECT_TRUE(as<None>(t->items[4]));
}

TEST(Unpickler, MalformedInputIsAnErrorNotACrash) {
  const std::vector<ByteString> cases = {
      {},                                   // empty
      {0x80},                               // PROTO without version
      {0x80, 2},                            // no STOP
      {0x80, 2, '.'},                       // STOP on empty stack
      {'t', '.'},                           // TUPLE without MARK
      {'(', '.'},                           // STOP right after MARK
      {'h', 5, '.'},                        // memo read before write
      {'X', 0xff, 0xff, 0xff, 0x7f},        // string longer than the input
      {0x8d, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},  // BINUNICODE8 of 2^64-1 bytes
      {'N', 'N', 's', '.'},                 // SETITEM on a non-dict
      {']', 'N', 'N', 'u', '.'},            // SETITEMS without MARK
      {'N', ')', 'R', '.'},                 // REDUCE of None
      {'}', 'Q', '.'},                      // persistent id that is not a storage tuple
      {'i', 'o', 's', '\n'},                // INST: unsupported opcode
      {0x80, 9, '.'},                       // unknown protocol
      {'c', 'o', 's'},                      // GLOBAL without newline
  };
  for (const auto& bytes : cases) EXPECT_NE(error_of(bytes).find("hostile.pkl"), std::string::npos);
}

TEST(Unpickler, TensorRebuildChecksItsArguments) {
  PickleBuilder p;
  p.proto(2).global("torch._utils", "_rebuild_tensor_v2").op('(').str("not a storage");
  p.integer(0).ints_tuple({1}).ints_tuple({1}).op('t').op('R').op('.');
  EXPECT_NE(error_of(p.bytes()).find("storage"), std::string::npos);

  PickleBuilder sizes;  // two sizes, one stride
  sizes.proto(2).global("torch._utils", "_rebuild_tensor_v2").op('(');
  sizes.storage("FloatStorage", "0", 4).integer(0).ints_tuple({2, 2}).ints_tuple({1}).op('t');
  sizes.op('R').op('.');
  EXPECT_NE(error_of(sizes.bytes()).find("strides"), std::string::npos);
}

TEST(Unpickler, MemoBombIsStopped) {
  // A 1 MiB string memoised, then fetched thousands of times: would be gigabytes if copied.
  PickleBuilder p;
  p.proto(2).op(']').str(std::string(1 << 20, 'x')).op('q').op(0).op('a');
  for (int i = 0; i < 1000; ++i) p.op('h').op(0).op('a');
  p.op('.');
  EXPECT_NE(error_of(p.bytes()).find("memo"), std::string::npos);
}

TEST(Unpickler, ListBombIsBoundedByTheFileSize) {
  // 8 MB of EMPTY_LIST opcodes: each byte a container of ~300 bytes, 2.4 GB unbounded. The budget
  // (64 MiB + 64 bytes per pickle byte) stops it long before the end of the file.
  ByteString bomb = PickleBuilder().proto(2).bytes();
  bomb.resize(8 << 20, ']');
  EXPECT_NE(error_of(bomb, "lists.pkl").find("lists.pkl: pickle: needs more than 576 MiB"), std::string::npos);
  // The same with values left on the stack (NONE pushes 1 byte, holds sizeof(Value)).
  ByteString nones = PickleBuilder().proto(2).bytes();
  nones.resize(8 << 20, 'N');
  EXPECT_NE(error_of(nones).find("pickle bomb"), std::string::npos);
}

TEST(Unpickler, MemoryBudgetIsConfigurable) {
  PickleBuilder p;
  p.proto(2).op('(');
  for (int i = 0; i < 1000; ++i) p.op(']');
  p.op('l').op('.');
  Limits tight;
  tight.memory_floor = 0;
  tight.memory_per_byte = 8;
  EXPECT_THROW(unpickle(p.bytes(), "small.pkl", tight), Error);
  EXPECT_NO_THROW(unpickle(p.bytes(), "small.pkl"));
}

TEST(Unpickler, CyclicContainersDoNotLeakOrRecurse) {
  // l = []; l.append(l) — shared nodes in a flat arena, so this is harmless.
  PickleBuilder p;
  p.proto(2).op(']').op('q').op(0).op('h').op(0).op('a').op('.');
  Unpickled out = unpickle(p.bytes(), "cycle.pkl");
  const Node* list = as_node(out.root, Node::Kind::List);
  ASSERT_TRUE(list);
  EXPECT_EQ(as_node(list->items[0], Node::Kind::List), list);
}

}  // namespace
}  // namespace framelift::weights::pickle
