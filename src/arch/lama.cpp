// LaMa (big-lama's FFCResNetGenerator), network in src/models/lama.cpp: a 7x7 convolution,
// stride-2 3x3 ones down, residual blocks of fast Fourier convolutions at the bottom, transposed
// convolutions up, a 7x7 to RGB. Each FFC is a 3x3 convolution over local and global channels
// but global-to-global, which is a spectral transform (1x1 down, a real FFT of the whole map, a
// 1x1 over its real and imaginary parts at about half the width, the inverse FFT, 1x1 up). The
// FFTs are counted as elementwise passes: at about 2.5 log2(pixels) multiply-adds an element,
// they are a few percent of the 3x3 convolutions beside them. Whole frames only (the FFT spans
// the frame); sizes are multiples of 2^downs.
#include "arch/builtin.h"

namespace framelift::arch {
namespace {

void ffc_block(NetWalk& w, double local, double global) {
  const double area = w.area();
  w.set(local, area);
  w.pointwise();               // the reflection-padded local part
  w.conv(local + global, 3);   // local to local and to global
  w.set(global, area);
  w.pointwise();               // the reflection-padded global part
  w.conv(local, 3);            // global to local
  w.set(global, area);
  w.conv(global / 2, 1);       // the spectral transform's 1x1 down
  w.pointwise();               // real FFT
  w.set(global, area / 2);     // real and imaginary parts, half the width
  w.conv(global, 1);
  w.pointwise();               // inverse FFT
  w.set(global / 2, area);
  w.pointwise();               // + its input
  w.conv(global, 1);
  w.set(local + global, area);
  w.pointwise();               // the two sums, norms folded, ReLU
}

ArchCost walk(int, const ArchParams& p) {
  const double ngf = p.get("ngf", 64), local = p.get("local", 128), global = p.get("global", 384);
  const int downs = int(p.get("downs", 3)), blocks = int(p.get("blocks", 18));
  NetWalk w(4);
  w.pointwise();  // the image with its hole blanked, beside the mask
  w.pointwise();  // reflection pad
  w.conv(ngf, 7);
  std::vector<double> widths{ngf};
  for (int i = 1; i <= downs; ++i) {
    const double out = i == downs ? local + global : p.get("w" + std::to_string(i), widths.back() * 2);
    w.pointwise();  // reflection pad
    w.conv(out, 3, 2);
    widths.push_back(out);
  }
  for (int b = 0; b < blocks; ++b)
    residual(w, [&] {
      ffc_block(w, local, global);
      ffc_block(w, local, global);
    });
  for (int i = downs - 1; i >= 0; --i) w.deconv(widths[size_t(i)], 3, 2);
  w.pointwise();  // reflection pad
  w.conv(3, 7);
  w.pointwise();  // sigmoid
  w.pointwise();  // the fill composited into the frame
  return w.finish("lama", 1, 0, 1 << downs, false);
}

}  // namespace

Declaration lama_declaration() {
  return {.name = "lama",
          .description = "LaMa inpainting (big-lama, fast Fourier convolutions)",
          .scales = {1},
          .walk = walk,
          .axes = {{"ngf", "model.model.1.ffc.convl2l.weight", 0}},
          .constraints = {positive("ngf"), positive("local"), positive("global"), multiple_of("global", 2), in_range("downs", 1, 6),
                          in_range("blocks", 1, 64)}};
}

}  // namespace framelift::arch
