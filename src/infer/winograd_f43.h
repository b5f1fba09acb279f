#pragma once
// Winograd F(4x4, 3x3) for fp32 3x3 convolutions (stride 1, padding 1, no dilation or groups):
// each 4x4 block of output is computed from a 6x6 input tile with 36 multiplications per
// input/output channel pair instead of 144 (Lavin and Gray, "Fast Algorithms for Convolutional
// Neural Networks", 2016). The 36 products of a block of tiles are 36 small matrix products
// (tiles x in) x (in x out), which is where the time goes; the transforms around them are
// linear combinations vectorised over channels, which is why the kernel works on channels-last
// (NHWC) activations. Design, agreement and speed: docs/performance.md, "Winograd".
//
// This header knows no libtorch: infer/winograd_conv.h wraps it for at::Tensor. The kernels are
// compiled twice (winograd_f43_avx512.cpp, winograd_f43_avx2.cpp) and chosen at run time.
// Thread-safety: every function is reentrant; run_tiles() writes only its own tiles' outputs and
// its scratch, so disjoint tile ranges may run on different threads at once.
#include <cstddef>
#include <cstdint>

namespace framelift::infer::winograd {

// What follows the convolution, fused into the output transform (saves a pass over the map).
enum class Activation { None, PerChannel /* PReLU with one slope a channel */, Uniform /* LeakyReLU, PReLU(1) */ };

struct Problem {
  const float* input = nullptr;  // one image, [h][w][c], not owned
  float* output = nullptr;       // [h][w][k], not owned; written for every pixel
  const float* u = nullptr;      // transformed weights, [36][c][kp] (transform_weights())
  const float* bias = nullptr;   // [k], or nullptr
  int64_t h = 0, w = 0, c = 0, k = 0, kp = 0;
  Activation activation = Activation::None;
  const float* slopes = nullptr;  // [k] for PerChannel
  float slope = 0;                // for Uniform
  int64_t tiles_w() const { return (w + 3) / 4; }
  int64_t tiles() const { return ((h + 3) / 4) * tiles_w(); }
};

// The SIMD width (floats) of the kernel this CPU runs: 16 (AVX-512F), 8 (AVX2 and FMA), 0 (no
// kernel: callers use the direct convolution). FRAMELIFT_WINOGRAD_ISA=avx2 caps it at 8, so the
// AVX2 kernel can be tested and measured on an AVX-512 machine.
int vector_width();
// The channel counts the kernel takes: in channels a multiple of vector_width() (the transforms
// load whole vectors), any number of outputs (padded to kp).
bool supports(int64_t in_channels);
// Caps the kernel at `width` floats (8: the AVX2 kernel on an AVX-512 CPU), 0 to lift the cap;
// never above what the CPU has. For tests and benchmarks of both kernels in one process.
void cap_vector_width(int width);
int64_t padded_outputs(int64_t out_channels);  // kp: out rounded up to the vector width

// weight [k][c][3][3] (PyTorch's OIHW) -> u [36][c][kp], G g G^T per channel pair, zero past k.
void transform_weights(const float* weight, int64_t k, int64_t c, int64_t kp, float* u);

// Tiles per block: sized so that one block's transformed inputs and products stay in L2.
int64_t block_tiles(const Problem& p);
// Floats of scratch one run_tiles() call over block_tiles(p) tiles needs.
size_t scratch_floats(const Problem& p);
// Computes the output pixels of tiles [first, end) (row-major over tiles_w() x tile rows,
// end - first <= block_tiles(p)). scratch: scratch_floats(p) floats, 64-byte aligned.
void run_tiles(const Problem& p, int64_t first, int64_t end, float* scratch);

}  // namespace framelift::infer::winograd
