#include "infer/tile_planner.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "infer/memory_budget.h"
#include "infer/tiler.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::infer {
namespace {

// Room for what the measurement misses: allocator fragmentation, frames queued meanwhile.
constexpr double kSafety = 0.8;

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// Peak bytes one forward pass on a side x side input adds on the model's device.
int64_t measure(models::ImageModel& model, const ExecutionTarget& target, int64_t side) {
  at::Tensor x = at::rand({1, model.info().in_channels, side, side}, at::TensorOptions().device(target.device));
  reset_device_memory_peak(target.device);
  const int64_t before = device_memory_in_use(target.device);
  { at::Tensor y = model.forward(x); }
  return std::max<int64_t>(0, device_memory_peak(target.device) - before);
}

}  // namespace

MemoryProfile probe_memory(models::ImageModel& model, const ExecutionTarget& target, const WholeFrame& whole) {
  if (target.device.is_cpu()) install_cpu_memory_tracker();
  at::InferenceMode guard;
  const int64_t m = std::max(1, model.info().size_multiple);
  const int64_t small = round_up(kMinTile, m), large = round_up(2 * kMinTile, m);
  MemoryProfile p;
  int64_t b_small = 0;
  try {
    b_small = measure(model, target, small);
  } catch (const std::exception& e) {
    if (!is_out_of_memory(e)) throw;
    throw Error(ErrorKind::Resource, framelift::str("out of memory: ", model.info().arch, " does not fit even a ", small,
                                                    " px tile in the memory available"));
  }
  // Memory grows with the input, so for inputs no smaller than the probe this bounds it.
  const MemoryProfile bound{0, double(b_small) / double(small * small), true};
  if (whole.pixels >= small * small && whole.available > 0 && bound.bytes(whole.pixels, whole.batch) <= whole.available)
    return bound;
  try {
    const int64_t b_large = measure(model, target, large);
    p.per_pixel = std::max(0.0, double(b_large - b_small) / double(large * large - small * small));
    p.fixed = std::max<int64_t>(0, b_small - static_cast<int64_t>(p.per_pixel * small * small));
  } catch (const std::exception& e) {
    if (!is_out_of_memory(e)) throw;
    p.per_pixel = double(b_small) / double(small * small);  // pessimistic: all of it scales
  }
  return p;
}

int64_t memory_for_inference(const ExecutionTarget& target) {
  int64_t available = 0;
  if (target.is_cuda()) {
    available = free_device_memory(target.device);
  } else {
    available = available_host_memory();
    if (int64_t budget = cpu_memory_budget(); budget > 0) {
      const int64_t left = budget - cpu_memory_in_use();
      available = available > 0 ? std::min(available, left) : left;
    }
  }
  return available > 0 ? static_cast<int64_t>(available * kSafety) : 0;
}

int plan_tile(const MemoryProfile& profile, int64_t available, int64_t height, int64_t width, int overlap,
              int multiple, int batch) {
  const int64_t m = std::max(1, multiple);
  batch = std::max(1, batch);
  if (available <= 0 || profile.per_pixel <= 0) return 0;  // nothing known: whole frames, OOM halving as the net
  if (profile.bytes(round_up(height, m) * round_up(width, m), batch) <= available) return 0;
  const double room = double(available - profile.fixed) / (profile.per_pixel * batch);
  const int64_t window = room > 0 ? static_cast<int64_t>(std::sqrt(room)) : 0;
  const int64_t step = std::lcm<int64_t>(16, m);
  int64_t tile = (window - 2 * overlap) / step * step;
  tile = std::max<int64_t>(tile, round_up(kMinTile, step));
  return static_cast<int>(std::min<int64_t>(tile, std::max(height, width)));
}

}  // namespace framelift::infer
