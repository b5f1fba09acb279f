// The Winograd F(4x4, 3x3) kernel for AVX-512F: 16 floats a vector, 6 tiles x 64 outputs of
// accumulators (24 of the 32 zmm registers). Compiled with -mavx512f -mfma (CMakeLists.txt) and
// called only where the CPU has them (winograd_f43.cpp).
#define WINOGRAD_VW 16
#define WINOGRAD_NB 4
#define WINOGRAD_NAME run_tiles_avx512
#include "infer/winograd_f43_kernel.inl"
