// The planner counts the pixels the tiler sends through a network without running it
// (plan::tiled_input_pixels); this checks that count against the real tiler.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "infer/tiler.h"
#include "infer/image_model.h"
#include "plan/planner.h"
#include "util/error.h"

namespace framelift::infer {
namespace {

// Nearest-neighbour x2 that counts what it is given.
class CountingModel : public models::ImageModel {
 public:
  explicit CountingModel(int multiple, bool tiled = true) {
    info_.arch = "counting";
    info_.tiled = tiled;
    info_.scale = 2;
    info_.size_multiple = multiple;
  }
  const models::ModelInfo& info() const override { return info_; }
  at::Tensor forward(const at::Tensor& x) override {
    EXPECT_EQ(x.size(2) % info_.size_multiple, 0);
    EXPECT_EQ(x.size(3) % info_.size_multiple, 0);
    pixels += double(x.size(0)) * x.size(2) * x.size(3);
    largest = std::max(largest, double(x.size(0)) * x.size(2) * x.size(3));
    ++calls;
    return x.repeat_interleave(2, 2).repeat_interleave(2, 3);
  }
  void to(c10::Device, c10::ScalarType) override {}
  double pixels = 0, largest = 0;
  int calls = 0;

 private:
  models::ModelInfo info_;
};

TEST(TilerGeometry, PlannerCountsTheSamePixelsAndCallsAsTheTiler) {
  struct Case {
    int w, h, tile, overlap, multiple;
  };
  for (const Case c : {Case{96, 72, 64, 16, 1}, Case{160, 120, 64, 16, 1}, Case{100, 70, 32, 10, 4},
                       Case{640, 480, 0, 16, 1}, Case{130, 50, 128, 8, 8}, Case{257, 129, 96, 12, 2}}) {
    CountingModel model(c.multiple);
    TileOptions options;
    options.tile = c.tile;
    options.overlap = c.overlap;
    const at::Tensor out = upscale_tiled(model, at::rand({1, 3, c.h, c.w}), options);
    ASSERT_EQ(out.size(2), 2 * c.h);
    const plan::TiledPixels t = plan::tiled_input_pixels(c.w, c.h, c.tile, c.overlap, c.multiple);
    EXPECT_EQ(model.calls, t.calls) << c.w << "x" << c.h << " tile " << c.tile;
    EXPECT_DOUBLE_EQ(model.pixels, t.total) << c.w << "x" << c.h << " tile " << c.tile;
    EXPECT_DOUBLE_EQ(model.largest, t.largest) << c.w << "x" << c.h << " tile " << c.tile;
  }
}

// A network that takes statistics over its whole input (RealPLKSR's GroupNorm) says so in its
// info; the tiler then makes one call per frame whatever tile it is asked for.
TEST(TilerGeometry, AWholeFrameOnlyModelGetsOneCallPerFrameWhateverTheTile) {
  CountingModel model(1, /*tiled*/ false);
  int used = -1;
  const at::Tensor frames = at::rand({2, 3, 72, 96});
  const at::Tensor out = upscale_tiled(model, frames, {.tile = 32, .overlap = 8, .batch = 4}, &used);
  EXPECT_EQ(used, 0);
  EXPECT_EQ(model.calls, 1);
  EXPECT_DOUBLE_EQ(model.largest, 2.0 * 72 * 96);
  EXPECT_TRUE(at::equal(out, frames.repeat_interleave(2, 2).repeat_interleave(2, 3)));
  // The tileable model given the same options is tiled: the rule above is the info's doing.
  CountingModel tileable(1);
  upscale_tiled(tileable, frames, {.tile = 32, .overlap = 8});
  EXPECT_GT(tileable.calls, 1);
}

// Out of memory on a whole frame cannot be answered by halving the tile for such a model.
TEST(TilerGeometry, OutOfMemoryOnAWholeFrameOnlyModelIsAResourceErrorNamingIt) {
  struct Exhausted : CountingModel {
    Exhausted() : CountingModel(1, /*tiled*/ false) {}
    at::Tensor forward(const at::Tensor&) override {
      ++calls;
      throw std::runtime_error("CUDA out of memory. Tried to allocate 2.00 GiB");
    }
  } model;
  try {
    upscale_tiled(model, at::rand({1, 3, 72, 96}), {.tile = 32});
    ADD_FAILURE() << "ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Resource);
    EXPECT_NE(std::string(e.what()).find("counting runs whole frames only"), std::string::npos) << e.what();
  }
  EXPECT_EQ(model.calls, 1);
}

}  // namespace
}  // namespace framelift::infer
