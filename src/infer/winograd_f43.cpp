// The parts of Winograd F(4x4, 3x3) that do not depend on the instruction set: the weight
// transform, block sizes and the choice of kernel.
#include "infer/winograd_f43.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

namespace framelift::infer::winograd {

void run_tiles_avx512(const Problem& p, int64_t first, int64_t end, float* scratch);
void run_tiles_avx2(const Problem& p, int64_t first, int64_t end, float* scratch);

namespace {

int detect_vector_width() {
  const char* cap = std::getenv("FRAMELIFT_WINOGRAD_ISA");
  const std::string want = cap ? cap : "";
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (want == "none" || !avx2) return 0;
  if (want != "avx2" && __builtin_cpu_supports("avx512f")) return 16;
  return 8;
}

// Rows of G (6x3): the filter's values at the interpolation points 0, -1, 1, 1/2, -1/2, infinity.
constexpr double G[6][3] = {{1.0 / 4, 0, 0},
                            {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                            {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                            {1.0 / 24, 1.0 / 12, 1.0 / 6},
                            {1.0 / 24, -1.0 / 12, 1.0 / 6},
                            {0, 0, 1}};

std::atomic<int> cap{0};  // cap_vector_width()'s value; 0: none

}  // namespace

int vector_width() {
  static const int detected = detect_vector_width();
  const int c = cap.load();
  return c > 0 ? std::min(c, detected) : detected;
}

void cap_vector_width(int width) { cap.store(width); }

bool supports(int64_t in_channels) {
  const int vw = vector_width();
  return vw > 0 && in_channels > 0 && in_channels % vw == 0;
}

int64_t padded_outputs(int64_t out_channels) {
  const int vw = std::max(vector_width(), 1);
  return (out_channels + vw - 1) / vw * vw;
}

void transform_weights(const float* weight, int64_t k, int64_t c, int64_t kp, float* u) {
  std::memset(u, 0, sizeof(float) * 36 * c * kp);
  for (int64_t o = 0; o < k; ++o) {
    for (int64_t i = 0; i < c; ++i) {
      const float* g = weight + (o * c + i) * 9;
      double gt[6][3];  // G g
      for (int a = 0; a < 6; ++a)
        for (int col = 0; col < 3; ++col) gt[a][col] = G[a][0] * g[col] + G[a][1] * g[3 + col] + G[a][2] * g[6 + col];
      for (int a = 0; a < 6; ++a)
        for (int b = 0; b < 6; ++b)
          u[((a * 6 + b) * c + i) * kp + o] = float(gt[a][0] * G[b][0] + gt[a][1] * G[b][1] + gt[a][2] * G[b][2]);
    }
  }
}

int64_t block_tiles(const Problem& p) {
  // The transformed inputs and products of a block (36 x tiles x (c + kp) floats) within about
  // half a megabyte: L2 on every x86 CPU since Zen 2 and Skylake-SP, with room for the weights'
  // slice of the product being computed. FRAMELIFT_WINOGRAD_BLOCK_KB overrides it (tuning).
  static const int64_t budget = [] {
    const char* kb = std::getenv("FRAMELIFT_WINOGRAD_BLOCK_KB");
    return kb ? std::max<int64_t>(16, std::atoll(kb)) * 1024 : int64_t(512) * 1024;
  }();
  const int64_t per_tile = 36 * int64_t(sizeof(float)) * (p.c + p.kp);
  return std::max<int64_t>(6, budget / per_tile / 6 * 6);
}

size_t scratch_floats(const Problem& p) {
  const int64_t rows = (block_tiles(p) + 5) / 6 * 6;
  return size_t(36 * rows * (p.c + p.kp));
}

void run_tiles(const Problem& p, int64_t first, int64_t end, float* scratch) {
  if (vector_width() == 16)
    run_tiles_avx512(p, first, end, scratch);
  else
    run_tiles_avx2(p, first, end, scratch);
}

}  // namespace framelift::infer::winograd
