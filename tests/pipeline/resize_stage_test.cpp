#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "pipeline/stage_registry.h"

namespace framelift::pipeline {
namespace {

at::Tensor resize(const std::string& text, const at::Tensor& image) {
  auto stages = make_stages(text);
  media::VideoFormat f;
  f.width = int(image.size(2));
  f.height = int(image.size(1));
  f.time_base = {1, 25};
  const media::VideoFormat out = stages.at(0)->configure(f);
  at::Tensor result;
  stages[0]->push(Frame{image, 0}, [&](Frame g) { result = g.image; });
  EXPECT_EQ(result.size(2), out.width);
  EXPECT_EQ(result.size(1), out.height);
  return result;
}

TEST(ResizeStage, SameSizeIsExactlyTheInput) {
  // FFmpeg 5.1's unscaled float copy writes a quarter of each row: the whole frame must survive.
  const at::Tensor image = at::rand({3, 48, 64});
  EXPECT_TRUE(at::equal(resize("resize:scale=1", image), image));
  EXPECT_TRUE(at::equal(resize("resize:w=64:h=48", image), image));
  // A real resize still resizes, and keeps a flat picture flat.
  const at::Tensor grey = at::full({3, 48, 64}, 0.5);
  const at::Tensor twice = resize("resize:scale=2", grey);
  EXPECT_EQ(twice.size(2), 128);
  EXPECT_LT((twice - 0.5).abs().max().item<float>(), 1e-3);
}

}  // namespace
}  // namespace framelift::pipeline
