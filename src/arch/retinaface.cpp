// RetinaFace face detection, network in src/models/retinaface.cpp: a ResNet-50 (torchvision's
// Bottlenecks) or MobileNetV1-0.25 body to strides 8, 16 and 32, an FPN over those three levels,
// an SSH context module and three 1x1 heads (two anchors a pixel) per level. Widths from the
// checkpoint (stem, width, blocks1..4 for the ResNet; stem for the MobileNet, whose other widths
// scale with it; in_channel, out_channel), missing ones the published ResNet-50's. A whole frame
// at its own size, untiled: the detector pads nothing (its grids round up).
#include <string>

#include "arch/builtin.h"

namespace framelift::arch {
namespace {

void conv_bn(NetWalk& w, double out, int k, int stride = 1) {
  w.conv(out, k, stride);  // the norm folds into it
  w.pointwise();           // activation
}

void resnet(NetWalk& w, const ArchParams& p, double stages[3]) {
  const double stem = p.get("stem", 64), width = p.get("width", 64);
  conv_bn(w, stem, 7, 2);
  w.resize(0.5);  // max pool
  for (int l = 0; l < 4; ++l) {
    const double planes = width * double(1 << l), out = 4 * planes;
    const int blocks = int(p.get("blocks" + std::to_string(l + 1), l == 2 ? 6 : l == 1 ? 4 : 3));
    for (int b = 0; b < blocks; ++b) {
      const int stride = b == 0 && l > 0 ? 2 : 1;
      const double in = w.channels(), area = w.area();
      w.keep();
      conv_bn(w, planes, 1);
      conv_bn(w, planes, 3, stride);
      w.conv(out, 1);
      if (b == 0) {  // the projection of the input
        w.keep();
        w.set(in, area);
        w.conv(out, 1, stride);
        w.release(out, area / (stride * stride));
      }
      w.pointwise();  // + identity, ReLU
      w.release(in, area);
    }
    if (l > 0) {
      stages[l - 1] = out;
      w.keep();
    }
  }
}

void mobilenet(NetWalk& w, const ArchParams& p, double stages[3]) {
  // facexlib's MobileNetV1 (0.25): 8 .. 256 wide, scaled with the stem.
  const double f = p.get("stem", 8) / 8;
  const struct {
    double out;
    int stride;
  } blocks[] = {{16, 1}, {32, 2}, {32, 1}, {64, 2}, {64, 1}, {128, 2}, {128, 1}, {128, 1},
                {128, 1}, {128, 1}, {128, 1}, {256, 2}, {256, 1}};
  conv_bn(w, 8 * f, 3, 2);
  for (size_t i = 0; i < std::size(blocks); ++i) {
    w.depthwise(3);
    if (blocks[i].stride == 2) w.resize(0.5);  // the depthwise filter's stride
    w.pointwise();
    conv_bn(w, blocks[i].out * f, 1);
    if (i == 4 || i == 10 || i == 12) {
      stages[i == 4 ? 0 : i == 10 ? 1 : 2] = w.channels();
      w.keep();
    }
  }
}

ArchCost walk(int, const ArchParams& p) {
  const double out = p.get("out_channel", 256);
  double stages[3] = {512, 1024, 2048};
  NetWalk w(3);
  w.pointwise();  // to BGR 0-255, less the means
  if (p.get("mobilenet", 0) > 0) mobilenet(w, p, stages);
  else resnet(w, p, stages);
  const double area[3] = {1.0 / 64, 1.0 / 256, 1.0 / 1024};
  for (int i = 2; i >= 0; --i) {  // laterals, coarse to fine, each merged with the one above
    w.set(stages[i], area[i]);
    conv_bn(w, out, 1);
    if (i < 2) {
      w.pointwise();  // + the coarser level, upsampled
      conv_bn(w, out, 3);
    }
    w.keep();
  }
  for (int i = 0; i < 3; ++i) {
    w.set(out, area[i]);
    w.conv(out / 2, 3);
    w.set(out, area[i]);
    conv_bn(w, out / 4, 3);
    w.keep();
    w.conv(out / 4, 3);
    w.set(out / 4, area[i]);
    conv_bn(w, out / 4, 3);
    w.conv(out / 4, 3);
    w.release(out / 4, area[i]);
    w.concat(out);
    w.conv(2 * 2 + 2 * 4 + 2 * 10, 1);  // the class, box and landmark heads together
  }
  for (int i = 0; i < 3; ++i) w.release(stages[i] + out, area[i]);
  return w.finish("retinaface", 1, 0, 1, false);
}

}  // namespace

Declaration retinaface_declaration() {
  return {.name = "retinaface",
          .description = "RetinaFace face detection with five landmarks (facexlib: ResNet-50 or MobileNet0.25)",
          .scales = {1},
          .walk = walk,
          .axes = {},
          .constraints = {}};
}

}  // namespace framelift::arch
