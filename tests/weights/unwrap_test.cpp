#include <gtest/gtest.h>

#include <torch/torch.h>

#include "util/error.h"
#include "weights/unwrap.h"

namespace framelift::weights {
namespace {

CheckpointTree leaf(std::initializer_list<std::string> keys, std::string name = "") {
  CheckpointTree tree;
  tree.name = std::move(name);
  for (const auto& key : keys) tree.tensors[key] = torch::zeros({1});
  return tree;
}

TEST(Unwrap, PrefersParamsEmaOverParams) {
  CheckpointTree root;
  root.children = {leaf({"p.weight"}, "params"), leaf({"ema.weight"}, "params_ema")};
  auto dict = unwrap_state_dict(root);
  ASSERT_EQ(dict.size(), 1u);
  EXPECT_TRUE(dict.count("ema.weight"));
}

TEST(Unwrap, FollowsEveryWrapperKeyAndNesting) {
  for (std::string_view wrapper : kWrapperKeys) {
    CheckpointTree inner;
    inner.name = "state_dict";
    inner.children = {leaf({"conv.weight"}, std::string(wrapper))};
    CheckpointTree root;
    root.tensors["stray"] = torch::zeros({1});  // a wrapper wins over stray tensors at its level
    root.children = {inner};
    auto dict = unwrap_state_dict(root);
    EXPECT_TRUE(dict.count("conv.weight")) << wrapper;
  }
  CheckpointTree single;  // one unknown wrapper and no tensors: descend
  single.children = {leaf({"x"}, "net_g_ema")};
  EXPECT_TRUE(unwrap_state_dict(single).count("x"));
}

TEST(Unwrap, StripsModulePrefixes) {
  auto dict = unwrap_state_dict(leaf({"module.a", "module.module.b", "c"}));
  EXPECT_EQ(dict.size(), 3u);
  EXPECT_TRUE(dict.count("a") && dict.count("b") && dict.count("c"));
  EXPECT_THROW(unwrap_state_dict(leaf({"module.a", "a"}), "x.pth"), Error);
}

TEST(Unwrap, EmptyOrTooDeepIsAnError) {
  try {
    unwrap_state_dict(CheckpointTree{}, "empty.pth");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("empty.pth: no tensors"), std::string::npos);
  }
  CheckpointTree deep = leaf({"w"});
  for (int i = 0; i < kMaxWrapperDepth + 2; ++i) {
    CheckpointTree parent;
    deep.name = "model";
    parent.children.push_back(std::move(deep));
    deep = std::move(parent);
  }
  EXPECT_THROW(unwrap_state_dict(deep, "deep.pth"), Error);
}

}  // namespace
}  // namespace framelift::weights
