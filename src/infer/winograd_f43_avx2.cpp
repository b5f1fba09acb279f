// The Winograd F(4x4, 3x3) kernel for AVX2 with FMA: 8 floats a vector, 6 tiles x 16 outputs of
// accumulators (12 of the 16 ymm registers). Compiled with -mavx2 -mfma (CMakeLists.txt) and
// called only where the CPU has them (winograd_f43.cpp).
#define WINOGRAD_VW 8
#define WINOGRAD_NB 2
#define WINOGRAD_NAME run_tiles_avx2
#include "infer/winograd_f43_kernel.inl"
