// Hand-built checkpoints in both .pth layouts, for what the real files do not exercise: storage
// offsets, shared storages, half precision, legacy storage views, wrappers, "module." prefixes and
// storages that are too short.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "util/error.h"
#include "util/str.h"
#include "weight_file_builder.h"
#include "weights/pth.h"

namespace framelift::weights {
namespace {

using test::ByteString;
using test::PickleBuilder;
using test::float_bytes;

std::string error_of(const ByteString& bytes, const std::string& label) {
  try {
    load_pth_bytes(bytes, label);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// {"a": 2x3 transposed view at offset 1, "b": same storage, 1-D slice} in one 8-float storage.
ByteString shared_storage_pickle(const std::string& key_prefix = "") {
  PickleBuilder p;
  p.proto(2).global("collections", "OrderedDict").op(')').op('R').op('(');
  p.str(key_prefix + "a").tensor("FloatStorage", "0", 8, 1, {2, 3}, {1, 2});
  p.str(key_prefix + "b").tensor("FloatStorage", "0", 8, 5, {3}, {1});
  p.op('u').op('.');
  return p.bytes();
}

void expect_shared_storage_tensors(const StateDict& dict) {
  ASSERT_EQ(dict.size(), 2u);
  // storage = 0..7; a[i][j] = storage[1 + i + 2j]
  auto expected_a = torch::tensor({1.f, 3.f, 5.f, 2.f, 4.f, 6.f}).view({2, 3});
  EXPECT_TRUE(torch::equal(dict.at("a"), expected_a)) << dict.at("a");
  EXPECT_TRUE(dict.at("a").is_contiguous());
  EXPECT_TRUE(torch::equal(dict.at("b"), torch::tensor({5.f, 6.f, 7.f})));
}

TEST(PthSynthetic, ZipHonoursOffsetsStridesAndSharedStorage) {
  auto zip = test::make_zip_checkpoint(shared_storage_pickle(),
                                       {{"0", float_bytes({0, 1, 2, 3, 4, 5, 6, 7})}}, "my_model");
  expect_shared_storage_tensors(load_pth_bytes(zip, "shared.pth"));
}

TEST(PthSynthetic, LegacyHonoursOffsetsStridesAndSharedStorage) {
  auto legacy = test::make_legacy_checkpoint(shared_storage_pickle(),
                                             {{"0", float_bytes({0, 1, 2, 3, 4, 5, 6, 7})}}, 4);
  expect_shared_storage_tensors(load_pth_bytes(legacy, "shared-legacy.pth"));
}

TEST(PthSynthetic, LegacyStorageViews) {
  // Pre-1.6 torch pickled a tensor on a storage slice as ('storage', type, root, 'cpu', n,
  // (view_key, offset, view_size)).
  PickleBuilder p;
  p.proto(2).op('}').op('(').str("v").global("torch._utils", "_rebuild_tensor_v2").op('(');
  p.op('(').str("storage").global("torch", "FloatStorage").str("root").str("cpu").integer(6);
  p.str("view").integer(2).integer(3).op(0x87).op('t').op('Q');
  p.integer(1).ints_tuple({2}).ints_tuple({1}).op(0x89).op('N').op('t').op('R').op('u').op('.');
  auto legacy = test::make_legacy_checkpoint(p.bytes(), {{"root", float_bytes({0, 1, 2, 3, 4, 5})}}, 4);
  auto dict = load_pth_bytes(legacy, "view.pth");
  EXPECT_TRUE(torch::equal(dict.at("v"), torch::tensor({3.f, 4.f})));
}

TEST(PthSynthetic, HalfPrecisionAndParameterWrapper) {
  PickleBuilder p;
  p.proto(2).op('}').op('(').str("h").global("torch._utils", "_rebuild_parameter").op('(');
  p.tensor("HalfStorage", "7", 2, 0, {2}, {1}).op(0x88).global("collections", "OrderedDict");
  p.op(')').op('R').op('t').op('R').op('u').op('.');
  // 1.0 and -2.0 in IEEE half precision
  auto zip = test::make_zip_checkpoint(p.bytes(), {{"7", {0x00, 0x3c, 0x00, 0xc0}}});
  auto dict = load_pth_bytes(zip, "half.pth");
  EXPECT_EQ(dict.at("h").scalar_type(), at::kHalf);
  EXPECT_TRUE(torch::equal(dict.at("h").to(at::kFloat), torch::tensor({1.f, -2.f})));
}

TEST(PthSynthetic, UnwrapsStateDictAndStripsModulePrefix) {
  // {"epoch": 3, "state_dict": {"module.a": ..., "module.b": ...}, "optimizer": [..]}
  PickleBuilder p;
  p.proto(2).op('}').op('(').str("epoch").integer(3).str("optimizer").op(']').str("state_dict");
  auto inner = shared_storage_pickle("module.");
  p.raw(ByteString(inner.begin() + 2, inner.end() - 1));  // without PROTO and STOP
  p.op('u').op('.');
  auto zip = test::make_zip_checkpoint(p.bytes(), {{"0", float_bytes({0, 1, 2, 3, 4, 5, 6, 7})}});
  expect_shared_storage_tensors(load_pth_bytes(zip, "wrapped.ckpt"));
}

TEST(PthSynthetic, ShortOrMissingStoragesAreRefused) {
  const auto pickle = shared_storage_pickle();
  auto short_zip = test::make_zip_checkpoint(pickle, {{"0", float_bytes({0, 1, 2})}});
  EXPECT_NE(error_of(short_zip, "short.pth").find("short.pth: storage 0"), std::string::npos);
  auto missing = test::make_zip_checkpoint(pickle, {});
  EXPECT_NE(error_of(missing, "missing.pth").find("missing"), std::string::npos);
  // Legacy: storage shorter than the view needs (b reads element 7).
  auto legacy = test::make_legacy_checkpoint(pickle, {{"0", float_bytes({0, 1, 2, 3, 4, 5})}}, 4);
  EXPECT_NE(error_of(legacy, "short-legacy.pth").find("short-legacy.pth: tensor"), std::string::npos);
  // Legacy stream cut inside the storage bytes.
  auto full = test::make_legacy_checkpoint(pickle, {{"0", float_bytes({0, 1, 2, 3, 4, 5, 6, 7})}}, 4);
  full.resize(full.size() - 3);
  EXPECT_NE(error_of(full, "cut-legacy.pth").find("truncated"), std::string::npos);
}

TEST(PthSynthetic, HostileViewsAreRefused) {
  PickleBuilder p;  // sizes (2^30, 2^30) with huge strides: overflow and out-of-range
  p.proto(2).op('}').op('(').str("x").tensor("FloatStorage", "0", 2, 0, {1 << 30, 1 << 30},
                                               {1 << 30, 1 << 30}).op('u').op('.');
  auto zip = test::make_zip_checkpoint(p.bytes(), {{"0", float_bytes({0, 1})}});
  EXPECT_NE(error_of(zip, "huge.pth").find("huge.pth: tensor x"), std::string::npos);
  PickleBuilder negative;
  negative.proto(2).op('}').op('(').str("x").tensor("FloatStorage", "0", 2, 0, {-1}, {1}).op('u').op('.');
  zip = test::make_zip_checkpoint(negative.bytes(), {{"0", float_bytes({0, 1})}});
  EXPECT_NE(error_of(zip, "neg.pth").find("negative"), std::string::npos);
}

TEST(PthSynthetic, WholeModelPicklesAndNonCheckpointsAreRefused) {
  PickleBuilder p;  // torch.save(model): a user class, refused by name
  p.proto(2).global("models.rrdb", "RRDBNet").op(')').op(0x81).op('.');
  auto zip = test::make_zip_checkpoint(p.bytes(), {});
  EXPECT_NE(error_of(zip, "model.pth").find("models.rrdb.RRDBNet"), std::string::npos);
  EXPECT_NE(error_of({'h', 'i'}, "text.pth").find("text.pth: not a PyTorch checkpoint"),
            std::string::npos);
  auto no_pickle = test::make_stored_zip({{"readme.txt", {'h', 'i'}}});
  EXPECT_NE(error_of(no_pickle, "other.zip").find("data.pkl"), std::string::npos);
  PickleBuilder list;  // a pickle of a bare list, wrapped in the legacy stream
  list.proto(2).op(']').op('.');
  auto legacy = test::make_legacy_checkpoint(list.bytes(), {}, 4);
  EXPECT_NE(error_of(legacy, "list.pth").find("list.pth: checkpoint holds a list"), std::string::npos);
}

// {"w0": view, "w1": view, ...} of one `numel`-float storage: view i starts at offset(i) and holds
// `size` floats.
ByteString many_views_pickle(int views, int32_t numel, int32_t size, int32_t (*offset)(int, int32_t)) {
  PickleBuilder p;
  p.proto(2).op('}').op('(');
  for (int i = 0; i < views; ++i)
    p.str(str("w", i)).tensor("FloatStorage", "0", numel, offset(i, size), {size}, {1});
  p.op('u').op('.');
  return p.bytes();
}

TEST(PthSynthetic, ViewsOfOneStorageStayWithinABudgetTiedToTheFileSize) {
  constexpr int32_t kNumel = 512 * 1024;  // a 2 MiB storage
  const ByteString storage(static_cast<size_t>(kNumel) * 4, 0x3f);
  // 400 views of nearly all of it: copied one by one that was 800 MB for a 2 MB file (issue 29,
  // item 7: 10 MB made 3.8 GB). The budget (64 MiB + 2x the file) refuses it before copying.
  auto overlapping = [](int, int32_t) -> int32_t { return 1; };
  auto hostile = test::make_zip_checkpoint(many_views_pickle(400, kNumel, kNumel - 1, overlapping), {{"0", storage}});
  const std::string error = error_of(hostile, "views.pth");
  EXPECT_NE(error.find("views.pth: its tensors need more than"), std::string::npos) << error;
  auto legacy = test::make_legacy_checkpoint(many_views_pickle(400, kNumel, kNumel - 1, overlapping), {{"0", storage}}, 4);
  EXPECT_NE(error_of(legacy, "views-legacy.pth").find("its tensors need more than"), std::string::npos);
  // Disjoint slices of one flat storage (how flattened-parameter optimisers save) all load.
  auto disjoint = [](int i, int32_t size) -> int32_t { return i * size; };
  auto flat = test::make_zip_checkpoint(many_views_pickle(400, kNumel, kNumel / 400, disjoint), {{"0", storage}});
  const StateDict dict = load_pth_bytes(flat, "flat.pth");
  EXPECT_EQ(dict.size(), 400u);
  EXPECT_EQ(dict.at("w399").numel(), kNumel / 400);
}

TEST(PthSynthetic, CompressedZipEntriesAreRefusedClearly) {
  auto zip = test::make_zip_checkpoint(shared_storage_pickle(), {{"0", float_bytes({0, 1, 2, 3, 4, 5, 6, 7})}});
  // The central directory is what we trust: mark every entry there as deflated.
  for (size_t i = 0; i + 4 <= zip.size(); ++i)
    if (zip[i] == 0x50 && zip[i + 1] == 0x4b && zip[i + 2] == 0x01 && zip[i + 3] == 0x02) zip[i + 10] = 8;
  EXPECT_NE(error_of(zip, "deflated.pth").find("compressed"), std::string::npos);
}

}  // namespace
}  // namespace framelift::weights

namespace framelift::weights {
namespace {

// A TorchScript archive's pickle: module objects (cls.__new__ then BUILD with the attribute dict),
// `Root` holding a tensor and a submodule `sub` holding one. With `cycle`, `sub` also names the root
// (a memo reference back up the tree), which the reader must not follow forever.
ByteString script_module_pickle(bool cycle) {
  PickleBuilder p;
  p.proto(2).global("__torch__", "Root").op(')').op(0x81).op('q').op(0);  // NEWOBJ, BINPUT 0
  p.op('}').op('(').str("training").op(0x89);
  p.str("weight").tensor("FloatStorage", "0", 2, 0, {2}, {1});
  p.str("sub").global("__torch__.___torch_mangle_1", "Sub").op(')').op(0x81);
  p.op('}').op('(').str("bias").tensor("FloatStorage", "1", 1, 0, {1}, {1});
  if (cycle) p.str("parent").op('h').op(0);  // BINGET 0: the root
  p.op('u').op('b');  // SETITEMS, BUILD (sub)
  p.str("sizes").global("torch.jit._pickle", "build_intlist").op('(').op(']').op('(').integer(1).integer(1).op('e').op('t').op('R');
  p.op('u').op('b').op('.');
  return p.bytes();
}

ByteString script_archive(const ByteString& pickle) {
  return test::make_stored_zip({{"m/data.pkl", pickle},
                                {"m/data/0", float_bytes({1, 2})},
                                {"m/data/1", float_bytes({3})},
                                {"m/constants.pkl", {0x80, 2, ')', '.'}},
                                {"m/version", {'3', '\n'}}});
}

TEST(PthSynthetic, TorchScriptArchivesReadTheirModuleTreesParameters) {
  for (const bool cycle : {false, true}) {
    SCOPED_TRACE(cycle ? "with a cycle" : "a tree");
    const StateDict dict = load_pth_bytes(script_archive(script_module_pickle(cycle)), "net.pt");
    ASSERT_EQ(dict.size(), 2u);
    EXPECT_TRUE(torch::equal(dict.at("weight"), torch::tensor({1.f, 2.f})));
    EXPECT_TRUE(torch::equal(dict.at("sub.bias"), torch::tensor({3.f})));
  }
  // The same pickle outside a TorchScript archive (no constants.pkl) is a whole pickled model.
  auto zip = test::make_zip_checkpoint(script_module_pickle(false), {{"0", float_bytes({1, 2})}, {"1", float_bytes({3})}});
  EXPECT_NE(error_of(zip, "model.pth").find("forbidden global '__torch__.Root'"), std::string::npos) << error_of(zip, "model.pth");
  // Inside one, other classes are still refused by name, and a module is made without arguments.
  PickleBuilder p;
  p.proto(2).global("os", "system").op(')').op(0x81).op('.');
  EXPECT_NE(error_of(script_archive(p.bytes()), "evil.pt").find("forbidden global 'os.system'"), std::string::npos);
  PickleBuilder args;
  args.proto(2).global("__torch__", "Root").str("x").op(0x85).op(0x81).op('.');
  EXPECT_NE(error_of(script_archive(args.bytes()), "args.pt").find("without arguments"), std::string::npos);
}

}  // namespace
}  // namespace framelift::weights
