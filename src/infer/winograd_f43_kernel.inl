// The Winograd F(4x4, 3x3) kernel body, included by one translation unit per instruction set
// (winograd_f43_avx512.cpp, winograd_f43_avx2.cpp) with WINOGRAD_VW (floats a vector),
// WINOGRAD_NB (vectors of output channels a micro-kernel holds) and WINOGRAD_NAME (the entry
// point's name) defined. Plain C++ with GCC vector types: the compiler flags of the including
// file pick the instructions. Matrices: Lavin and Gray's F(4x4, 3x3), points 0, +-1, +-2, +-1/2.
#include <algorithm>
#include <cstring>

#include "infer/winograd_f43.h"

namespace framelift::infer::winograd {
namespace {

constexpr int VW = WINOGRAD_VW;
constexpr int NB = WINOGRAD_NB;
constexpr int R = 6;  // tiles a micro-kernel holds: R x NB accumulators fit the register file
typedef float vec __attribute__((vector_size(VW * sizeof(float))));

inline vec load(const float* p) {
  vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, vec v) { std::memcpy(p, &v, sizeof v); }

// B^T d for six inputs a stride apart (d0..d5) into six outputs.
inline void input_1d(const vec* d, int ds, vec* r, int rs) {
  const vec d0 = d[0], d1 = d[ds], d2 = d[2 * ds], d3 = d[3 * ds], d4 = d[4 * ds], d5 = d[5 * ds];
  const vec t0 = d4 - 4.0f * d2, t1 = d3 - 4.0f * d1, t2 = d4 - d2, t3 = 2.0f * (d3 - d1);
  r[0] = 4.0f * d0 - 5.0f * d2 + d4;
  r[rs] = t0 + t1;
  r[2 * rs] = t0 - t1;
  r[3 * rs] = t2 + t3;
  r[4 * rs] = t2 - t3;
  r[5 * rs] = 4.0f * d1 - 5.0f * d3 + d5;
}

// A^T m for six inputs a stride apart into four outputs.
inline void output_1d(const vec* m, int ms, vec* o, int os) {
  const vec m0 = m[0], m1 = m[ms], m2 = m[2 * ms], m3 = m[3 * ms], m4 = m[4 * ms], m5 = m[5 * ms];
  const vec s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;
  o[0] = m0 + s12 + s34;
  o[os] = d12 + 2.0f * d34;
  o[2 * os] = s12 + 4.0f * s34;
  o[3 * os] = d12 + 8.0f * d34 + m5;
}

// The 36 transformed values of one tile, for channels [c0, c0 + VW), into v[xi][t][c].
void input_tile(const Problem& p, int64_t ty, int64_t tx, int64_t c0, float* v, int64_t t, int64_t rows) {
  vec d[36], tmp[36];
  const int64_t y0 = 4 * ty - 1, x0 = 4 * tx - 1;
  const bool inside = y0 >= 0 && x0 >= 0 && y0 + 6 <= p.h && x0 + 6 <= p.w;
  for (int i = 0; i < 6; ++i) {
    const int64_t y = y0 + i;
    for (int j = 0; j < 6; ++j) {
      const int64_t x = x0 + j;
      d[i * 6 + j] = inside || (y >= 0 && y < p.h && x >= 0 && x < p.w) ? load(p.input + (y * p.w + x) * p.c + c0) : vec{};
    }
  }
  for (int j = 0; j < 6; ++j) input_1d(d + j, 6, tmp + j, 6);     // columns
  for (int i = 0; i < 6; ++i) input_1d(tmp + 6 * i, 1, d + 6 * i, 1);  // rows
  for (int xi = 0; xi < 36; ++xi) store(v + (xi * rows + t) * p.c + c0, d[xi]);
}

// `lanes` floats of `from` (nullptr: none) and zeros after them: a channel block's bias or slopes.
inline vec load_partial(const float* from, int64_t lanes) {
  float b[VW] = {};
  if (from) std::memcpy(b, from, sizeof(float) * lanes);
  return load(b);
}

// x, then the activation with `slopes` (one a lane; for Uniform every lane holds p.slope).
inline vec activate(const Problem& p, vec x, vec slopes) {
  return p.activation == Activation::None ? x : x > 0 ? x : x * slopes;
}

// One tile's 4x4 outputs for channels [k0, k0 + VW) from m[xi][t][kp]: A^T m A, bias, activation.
void output_tile(const Problem& p, int64_t ty, int64_t tx, int64_t k0, const float* m, int64_t t, int64_t rows) {
  vec a[36], s[24], o[16];
  for (int xi = 0; xi < 36; ++xi) a[xi] = load(m + (xi * rows + t) * p.kp + k0);
  for (int j = 0; j < 6; ++j) output_1d(a + j, 6, s + j, 6);     // columns: s[4][6]
  for (int i = 0; i < 4; ++i) output_1d(s + 6 * i, 1, o + 4 * i, 1);  // rows: o[4][4]
  const int64_t lanes = std::min<int64_t>(VW, p.k - k0);
  const vec bias = load_partial(p.bias ? p.bias + k0 : nullptr, lanes);
  const vec slopes = p.activation == Activation::PerChannel ? load_partial(p.slopes + k0, lanes) : vec{} + p.slope;
  for (int i = 0; i < 4; ++i) {
    const int64_t y = 4 * ty + i;
    if (y >= p.h) break;
    for (int j = 0; j < 4; ++j) {
      const int64_t x = 4 * tx + j;
      if (x >= p.w) break;
      const vec out = activate(p, o[i * 4 + j] + bias, slopes);
      float* dst = p.output + (y * p.w + x) * p.k + k0;
      if (lanes == VW) {
        store(dst, out);
      } else {
        float tmp[VW];
        store(tmp, out);
        std::memcpy(dst, tmp, sizeof(float) * lanes);
      }
    }
  }
}

// m[r][n * VW ...] = sum_i v[r][i] * u[i][n * VW ...] for R rows and NBK vectors of outputs.
template <int NBK>
inline void micro_kernel(const float* v, const float* u, float* m, int64_t c, int64_t kp) {
  // The first step assigns rather than adds: zero-initialised accumulators made GCC clear a
  // stack copy of them on every call.
  vec acc[R][NBK];
  {
    vec b[NBK];
    for (int n = 0; n < NBK; ++n) b[n] = load(u + n * VW);
    for (int r = 0; r < R; ++r)
      for (int n = 0; n < NBK; ++n) acc[r][n] = v[r * c] * b[n];
  }
  for (int64_t i = 1; i < c; ++i) {
    vec b[NBK];
    for (int n = 0; n < NBK; ++n) b[n] = load(u + i * kp + n * VW);
    for (int r = 0; r < R; ++r) {
      const float a = v[r * c + i];
      for (int n = 0; n < NBK; ++n) acc[r][n] += a * b[n];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int n = 0; n < NBK; ++n) store(m + r * kp + n * VW, acc[r][n]);
}

// One of the 36 products: m (rows x kp) = v (rows x c) * u (c x kp), rows a multiple of R.
void product(const float* v, const float* u, float* m, int64_t rows, int64_t c, int64_t kp) {
  for (int64_t k0 = 0; k0 < kp; k0 += NB * VW) {
    const int64_t nbk = std::min<int64_t>(NB, (kp - k0) / VW);
    for (int64_t r = 0; r < rows; r += R) {
      const float* vr = v + r * c;
      float* mr = m + r * kp + k0;
      switch (nbk) {
        case 1: micro_kernel<1>(vr, u + k0, mr, c, kp); break;
#if WINOGRAD_NB >= 2
        case 2: micro_kernel<2>(vr, u + k0, mr, c, kp); break;
#endif
#if WINOGRAD_NB >= 3
        case 3: micro_kernel<3>(vr, u + k0, mr, c, kp); break;
#endif
#if WINOGRAD_NB >= 4
        case 4: micro_kernel<4>(vr, u + k0, mr, c, kp); break;
#endif
        default: break;
      }
    }
  }
}

}  // namespace

void WINOGRAD_NAME(const Problem& p, int64_t first, int64_t end, float* scratch) {
  const int64_t n = end - first;
  const int64_t rows = (n + R - 1) / R * R;
  float* v = scratch;                  // [36][rows][c]
  float* m = scratch + 36 * rows * p.c;  // [36][rows][kp]
  const int64_t tw = p.tiles_w();
  for (int64_t t = 0; t < n; ++t)
    for (int64_t c0 = 0; c0 < p.c; c0 += VW) input_tile(p, (first + t) / tw, (first + t) % tw, c0, v, t, rows);
  // Rows past the last tile are computed and dropped; zeros keep them from being NaN.
  for (int xi = 0; xi < 36; ++xi) std::memset(v + (xi * rows + n) * p.c, 0, sizeof(float) * (rows - n) * p.c);
  for (int xi = 0; xi < 36; ++xi)
    product(v + xi * rows * p.c, p.u + xi * p.c * p.kp, m + xi * rows * p.kp, rows, p.c, p.kp);
  for (int64_t t = 0; t < n; ++t)
    for (int64_t k0 = 0; k0 < p.k; k0 += VW) output_tile(p, (first + t) / tw, (first + t) % tw, k0, m, t, rows);
}

}  // namespace framelift::infer::winograd
