// RetinaFace as facexlib runs it (facexlib/detection/retinaface.py, RetinaFace.detect_faces with
// use_origin_size): a backbone whose strides 8, 16 and 32 feed a three-level FPN (1x1 laterals, the
// coarser level nearest-upsampled and added, a 3x3 to merge), an SSH context module per level (3x3,
// 5x5 and 7x7 receptive fields as stacked 3x3s, concatenated) and 1x1 heads per level for two
// anchors a pixel: face/background logits, box offsets and five landmark offsets.
//
// Backbones, told apart by their keys: torchvision's ResNet-50 (body.conv1, body.layer1..4) and
// facexlib's MobileNetV1 at width 0.25 (body.stage1..3, depthwise-separable blocks). Every width
// is read from the shapes, so narrower networks in those layouts run too; strides and block counts
// of the MobileNet are its published ones, the ResNet's block counts come from the keys.
//
// facexlib's choices that are not in the weights: leaky ReLU slope 0.1 in FPN and SSH when their
// width is at most 64 (else plain ReLU), 0.1 throughout the MobileNet; priors of sizes 16/32,
// 64/128 and 256/512 px on the 8/16/32 grids (pixel centres at (j + 0.5) step); decoding with
// variances 0.1 and 0.2; a score kept when above the threshold; torchvision's NMS, which facexlib
// calls (areas without the +1 of the original py_cpu_nms).
#include "models/face_detector.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "arch/declaration.h"
#include "infer/conv_layout.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"
#include "weights/load_weights.h"

namespace framelift::models {
namespace {

constexpr int64_t kAnchors = 2;  // min_sizes per level
constexpr int64_t kSteps[3] = {8, 16, 32};
constexpr double kMinSizes[3][2] = {{16, 32}, {64, 128}, {256, 512}};
constexpr double kCenterVariance = 0.1, kSizeVariance = 0.2;
constexpr double kMobileNetSlope = 0.1;
// facexlib's BGR means, subtracted from the 0-255 frame.
constexpr float kMeanBgr[3] = {104, 117, 123};
constexpr int64_t kMaxWidth = 8192;
// facexlib's MobileNetV1: per stage, the stride of each block (the first of stage 1 a plain
// 3x3 convolution, the rest depthwise-separable).
const std::vector<int64_t> kMobileNetStrides[3] = {{2, 1, 2, 1, 2, 1}, {2, 1, 1, 1, 1, 1}, {2, 1}};
constexpr int64_t kResNetLayers = 4;

const std::string kModule = "module.";

[[noreturn]] void layout_error(const std::string& source, const std::string& what) {
  throw Error(ErrorKind::Model, str(source, ": RetinaFace layout: ", what));
}

// DataParallel's "module." prefix, as facexlib's released files carry it, dropped per key as
// facexlib's loader does: weights::load_weights already strips it from files, a dict built in
// memory may still have it.
weights::StateDict without_module_prefix(const weights::StateDict& dict, const std::string& source) {
  weights::StateDict out;
  for (const auto& [key, value] : dict) {
    const bool prefixed = key.rfind(kModule, 0) == 0;
    const std::string name = prefixed ? key.substr(kModule.size()) : key;
    if (!out.emplace(name, value).second) layout_error(source, str("both ", name, " and ", kModule, name));
  }
  return out;
}

// Bias-free convolution then an inference-mode BatchNorm, folded into one.
Conv2d conv_bn(WeightReader& r, const std::string& p, int64_t in, int64_t out, int64_t k, int64_t stride, int64_t groups = 1) {
  Conv2d c;
  c.weight = r.tensor(p + ".0.weight", {out, in / groups, k, k});
  const BatchNorm2d n = read_batch_norm(r, p + ".1", out);
  c.weight = c.weight * n.scale.view({-1, 1, 1, 1});
  c.bias = n.shift;
  c.stride = stride;
  c.padding = (k - 1) / 2;
  c.groups = groups;
  return c;
}

// The same for torchvision's separately named convolution and norm ("conv1", "bn1").
Conv2d conv_bn_named(WeightReader& r, const std::string& conv, const std::string& bn, int64_t in, int64_t out, int64_t k,
                     int64_t stride) {
  Conv2d c;
  c.weight = r.tensor(conv + ".weight", {out, in, k, k});
  const BatchNorm2d n = read_batch_norm(r, bn, out);
  c.weight = c.weight * n.scale.view({-1, 1, 1, 1});
  c.bias = n.shift;
  c.stride = stride;
  c.padding = (k - 1) / 2;
  return c;
}

at::Tensor leaky(const at::Tensor& x, double slope) { return slope > 0 ? at::leaky_relu(x, slope) : at::relu(x); }

int64_t width_of(const weights::StateDict& dict, const std::string& key, int64_t axis, const std::string& source) {
  const auto d = dim_of(dict, key, 4, axis);
  if (!d) layout_error(source, str("tensor ", key, " is missing or not a convolution"));
  if (*d < 1 || *d > kMaxWidth) layout_error(source, str("tensor ", key, " has a width of ", *d, " (1 to ", kMaxWidth, ")"));
  return *d;
}

struct Bottleneck {
  Conv2d conv1, conv2, conv3, downsample;  // downsample undefined when the identity is added
  at::Tensor operator()(const at::Tensor& x) const {
    const at::Tensor y = conv3(at::relu(conv2(at::relu(conv1(x)))));
    return at::relu(y + (downsample.weight.defined() ? downsample(x) : x));
  }
};

struct SeparableBlock {  // facexlib's conv_dw, or its first conv_bn when depthwise is undefined
  Conv2d depthwise, pointwise;
  at::Tensor operator()(const at::Tensor& x) const {
    if (!depthwise.weight.defined()) return leaky(pointwise(x), kMobileNetSlope);
    return leaky(pointwise(leaky(depthwise(x), kMobileNetSlope)), kMobileNetSlope);
  }
};

struct Ssh {
  Conv2d conv3, conv5_1, conv5_2, conv7_2, conv7_3;
  at::Tensor operator()(const at::Tensor& x, double slope) const {
    const at::Tensor c5 = leaky(conv5_1(x), slope);
    return at::relu(at::cat({conv3(x), conv5_2(c5), conv7_3(leaky(conv7_2(c5), slope))}, 1));
  }
};

// The stride-8, 16 and 32 features.
using Levels = std::array<at::Tensor, 3>;

class RetinaFace : public FaceDetector {
 public:
  RetinaFace(const weights::StateDict& raw, const std::string& source, FaceDetectorShape shape)
      : shape_(std::move(shape)), source_(source) {
    const weights::StateDict dict = without_module_prefix(raw, source);
    WeightReader r(dict, source);
    const std::array<int64_t, 3> stages = shape_.backbone == "mobilenet0.25" ? read_mobilenet(r, dict) : read_resnet(r, dict);
    const int64_t out = int64_t(shape_.params.get("out_channel", 0));
    slope_ = out <= 64 ? 0.1 : 0;
    for (size_t i = 0; i < 3; ++i) lateral_[i] = conv_bn(r, str("fpn.output", i + 1), stages[i], out, 1, 1);
    for (size_t i = 0; i < 2; ++i) merge_[i] = conv_bn(r, str("fpn.merge", i + 1), out, out, 3, 1);
    for (size_t i = 0; i < 3; ++i) {
      const std::string p = str("ssh", i + 1, ".");
      ssh_[i] = {conv_bn(r, p + "conv3X3", out, out / 2, 3, 1), conv_bn(r, p + "conv5X5_1", out, out / 4, 3, 1),
                 conv_bn(r, p + "conv5X5_2", out / 4, out / 4, 3, 1), conv_bn(r, p + "conv7X7_2", out / 4, out / 4, 3, 1),
                 conv_bn(r, p + "conv7x7_3", out / 4, out / 4, 3, 1)};
      class_[i] = read_conv(r, str("ClassHead.", i, ".conv1x1"), out, kAnchors * 2, 1);
      box_[i] = read_conv(r, str("BboxHead.", i, ".conv1x1"), out, kAnchors * 4, 1);
      landmark_[i] = read_conv(r, str("LandmarkHead.", i, ".conv1x1"), out, kAnchors * 10, 1);
    }
    r.expect_all_used();
  }

  std::vector<DetectedFace> detect(const at::Tensor& rgb, double confidence, double nms_iou) const override {
    const auto [loc, conf, landms] = heads(rgb);
    const int64_t h = rgb.size(-2), w = rgb.size(-1);
    const at::Tensor priors = prior_boxes(h, w);
    const at::Tensor scale = at::tensor({float(w), float(h)});
    const at::Tensor centres = priors.narrow(1, 0, 2), sizes = priors.narrow(1, 2, 2);
    const at::Tensor l = loc[0], box_centres = centres + l.narrow(1, 0, 2) * kCenterVariance * sizes;
    const at::Tensor box_sizes = sizes * at::exp(l.narrow(1, 2, 2) * kSizeVariance);
    const at::Tensor top_left = box_centres - box_sizes / 2;
    const at::Tensor boxes = at::cat({top_left, box_sizes + top_left}, 1) * scale.repeat({2});
    std::vector<at::Tensor> points;
    for (int64_t k = 0; k < 5; ++k) points.push_back(centres + landms[0].narrow(1, 2 * k, 2) * kCenterVariance * sizes);
    const at::Tensor landmarks = at::cat(points, 1) * scale.repeat({5});
    const at::Tensor scores = conf[0].select(1, 1);
    return suppressed(boxes, scores, landmarks, float(confidence), nms_iou);
  }

  std::array<at::Tensor, 3> heads(const at::Tensor& rgb) const override {
    at::NoGradGuard no_grad;
    const bool batched = rgb.dim() == 4 && rgb.size(0) == 1;
    if (!(rgb.dim() == 3 || batched) || rgb.size(-3) != 3 || rgb.size(-2) < 16 || rgb.size(-1) < 16)
      throw Error(ErrorKind::Usage, framelift::str(source_, ": RetinaFace takes one RGB frame [3, H, W] of at least 16x16, got ", rgb.sizes()));
    // facexlib reads frames as OpenCV gives them: BGR, 0-255, then the means off.
    const at::Tensor mean = at::tensor({kMeanBgr[0], kMeanBgr[1], kMeanBgr[2]}).view({1, 3, 1, 1}).to(rgb.device());
    const at::Tensor bgr = (rgb.to(at::kFloat).reshape({1, 3, rgb.size(-2), rgb.size(-1)}) * 255.0f).flip({1}) - mean;
    const at::Tensor x = bgr.to(device_, dtype_).contiguous(infer::activation_format(device_));
    try {
      const Levels f = features(x);
      std::array<std::vector<at::Tensor>, 3> out;
      for (size_t i = 0; i < 3; ++i) {
        const at::Tensor s = ssh_[i](f[i], slope_);
        out[0].push_back(per_anchor(box_[i](s), 4));
        out[1].push_back(per_anchor(class_[i](s), 2));
        out[2].push_back(per_anchor(landmark_[i](s), 10));
      }
      return {at::cat(out[0], 1), at::softmax(at::cat(out[1], 1), -1), at::cat(out[2], 1)};
    } catch (const c10::Error& e) {
      const std::string what = e.what_without_backtrace();
      throw Error(ErrorKind::Model, str(source_, ": retinaface: ", what.substr(0, what.find('\n'))));
    }
  }

  const FaceDetectorShape& shape() const override { return shape_; }

  void to(c10::Device device, c10::ScalarType dtype) override {
    const auto convert = [&](Conv2d& c) {
      for (at::Tensor* t : {&c.weight, &c.bias})
        if (t->defined()) *t = t->to(device, dtype);
    };
    for (auto& layer : resnet_)
      for (Bottleneck& b : layer) convert(b.conv1), convert(b.conv2), convert(b.conv3), convert(b.downsample);
    convert(stem_);
    for (auto& stage : mobilenet_)
      for (SeparableBlock& b : stage) convert(b.depthwise), convert(b.pointwise);
    for (Conv2d& c : lateral_) convert(c);
    for (Conv2d& c : merge_) convert(c);
    for (Ssh& s : ssh_) convert(s.conv3), convert(s.conv5_1), convert(s.conv5_2), convert(s.conv7_2), convert(s.conv7_3);
    for (size_t i = 0; i < 3; ++i) convert(class_[i]), convert(box_[i]), convert(landmark_[i]);
    device_ = device;
    dtype_ = dtype;
  }

 private:
  std::array<int64_t, 3> read_resnet(WeightReader& r, const weights::StateDict& dict) {
    const int64_t stem = int64_t(shape_.params.get("stem", 64));
    stem_ = conv_bn_named(r, "body.conv1", "body.bn1", 3, stem, 7, 2);
    int64_t in = stem;
    std::array<int64_t, 3> stages{};
    for (int64_t l = 0; l < kResNetLayers; ++l) {
      const int blocks = int(shape_.params.get(str("blocks", l + 1), 0));
      std::vector<Bottleneck>& layer = resnet_[size_t(l)];
      for (int b = 0; b < blocks; ++b) {
        const std::string p = str("body.layer", l + 1, ".", b, ".");
        const int64_t planes = width_of(dict, p + "conv1.weight", 0, source_), out = width_of(dict, p + "conv3.weight", 0, source_);
        const int64_t stride = b == 0 && l > 0 ? 2 : 1;
        Bottleneck k;
        k.conv1 = conv_bn_named(r, p + "conv1", p + "bn1", in, planes, 1, 1);
        k.conv2 = conv_bn_named(r, p + "conv2", p + "bn2", planes, planes, 3, stride);
        k.conv3 = conv_bn_named(r, p + "conv3", p + "bn3", planes, out, 1, 1);
        if (r.has(p + "downsample.0.weight")) {
          k.downsample = conv_bn(r, p + "downsample", in, out, 1, stride);
          k.downsample.padding = 0;
        } else if (in != out || stride != 1) {
          layout_error(source_, str(p, "downsample is missing (", in, " to ", out, " channels, stride ", stride, ")"));
        }
        layer.push_back(k);
        in = out;
      }
      if (l > 0) stages[size_t(l - 1)] = in;
    }
    return stages;
  }

  std::array<int64_t, 3> read_mobilenet(WeightReader& r, const weights::StateDict& dict) {
    int64_t in = 3;
    std::array<int64_t, 3> stages{};
    for (size_t s = 0; s < 3; ++s) {
      for (size_t b = 0; b < kMobileNetStrides[s].size(); ++b) {
        const std::string p = str("body.stage", s + 1, ".", b, ".");
        const int64_t stride = kMobileNetStrides[s][b];
        SeparableBlock k;
        if (s == 0 && b == 0) {
          const int64_t out = width_of(dict, p + "0.weight", 0, source_);
          k.pointwise = conv_bn(r, p.substr(0, p.size() - 1), in, out, 3, stride);
          in = out;
        } else {
          Conv2d dw;
          dw.weight = r.tensor(p + "0.weight", {in, 1, 3, 3});
          const BatchNorm2d n = read_batch_norm(r, p + "1", in);
          dw.weight = dw.weight * n.scale.view({-1, 1, 1, 1});
          dw.bias = n.shift;
          dw.stride = stride;
          dw.padding = 1;
          dw.groups = in;
          k.depthwise = dw;
          const int64_t out = width_of(dict, p + "3.weight", 0, source_);
          Conv2d pw;
          pw.weight = r.tensor(p + "3.weight", {out, in, 1, 1});
          const BatchNorm2d m = read_batch_norm(r, p + "4", out);
          pw.weight = pw.weight * m.scale.view({-1, 1, 1, 1});
          pw.bias = m.shift;
          k.pointwise = pw;
          in = out;
        }
        mobilenet_[s].push_back(k);
      }
      stages[s] = in;
    }
    return stages;
  }

  Levels features(const at::Tensor& x) const {
    Levels c;
    if (shape_.backbone == "mobilenet0.25") {
      at::Tensor y = x;
      for (size_t s = 0; s < 3; ++s) {
        for (const SeparableBlock& b : mobilenet_[s]) y = b(y);
        c[s] = y;
      }
    } else {
      at::Tensor y = at::max_pool2d(at::relu(stem_(x)), {3, 3}, {2, 2}, {1, 1});
      for (size_t l = 0; l < resnet_.size(); ++l) {
        for (const Bottleneck& b : resnet_[l]) y = b(y);
        if (l > 0) c[l - 1] = y;
      }
    }
    Levels p;
    for (size_t i = 0; i < 3; ++i) p[i] = leaky(lateral_[i](c[i]), slope_);
    const auto up = [](const at::Tensor& coarse, const at::Tensor& fine) {
      return at::upsample_nearest2d(coarse, {fine.size(2), fine.size(3)}, c10::nullopt, c10::nullopt);
    };
    p[1] = leaky(merge_[1](p[1] + up(p[2], p[1])), slope_);
    p[0] = leaky(merge_[0](p[0] + up(p[1], p[0])), slope_);
    return p;
  }

  // [1, A k, H, W] -> [1, H W A, k], the order of the priors; in float on the CPU, where the
  // decoding and NMS run.
  static at::Tensor per_anchor(const at::Tensor& y, int64_t k) {
    return y.permute({0, 2, 3, 1}).to(c10::kCPU, at::kFloat).reshape({1, -1, k});
  }

  // facexlib's PriorBox: per level, row-major over the ceil(size / step) grid, two anchors each;
  // centres and sizes relative to the frame (as upstream computes them, in double, stored as float).
  static at::Tensor prior_boxes(int64_t h, int64_t w) {
    std::vector<float> anchors;
    for (int k = 0; k < 3; ++k) {
      const int64_t step = kSteps[k], rows = (h + step - 1) / step, cols = (w + step - 1) / step;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          for (double size : kMinSizes[k]) {
            anchors.push_back(float((double(j) + 0.5) * double(step) / double(w)));
            anchors.push_back(float((double(i) + 0.5) * double(step) / double(h)));
            anchors.push_back(float(size / double(w)));
            anchors.push_back(float(size / double(h)));
          }
    }
    return at::tensor(anchors).view({-1, 4});
  }

  // The boxes scoring above `confidence`, best first, less those a better one overlaps by more
  // than `iou` (torchvision's nms, in float as it computes).
  static std::vector<DetectedFace> suppressed(const at::Tensor& boxes, const at::Tensor& scores, const at::Tensor& landmarks,
                                              float confidence, double iou) {
    const at::Tensor kept = at::nonzero(scores > confidence).flatten();
    const at::Tensor order = kept.index_select(0, std::get<1>(scores.index_select(0, kept).sort(0, true)));
    const at::Tensor b = boxes.index_select(0, order).contiguous(), s = scores.index_select(0, order).contiguous();
    const at::Tensor lm = landmarks.index_select(0, order).contiguous();
    const int64_t n = order.size(0);
    const float* box = b.data_ptr<float>();
    std::vector<float> area(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) area[size_t(i)] = (box[4 * i + 2] - box[4 * i]) * (box[4 * i + 3] - box[4 * i + 1]);
    std::vector<bool> dropped(static_cast<size_t>(n), false);
    std::vector<DetectedFace> faces;
    for (int64_t i = 0; i < n; ++i) {
      if (dropped[size_t(i)]) continue;
      DetectedFace f;
      std::copy_n(box + 4 * i, 4, f.box.begin());
      f.score = s[i].item<float>();
      std::copy_n(lm.data_ptr<float>() + 10 * i, 10, f.landmarks.begin());
      faces.push_back(f);
      for (int64_t j = i + 1; j < n; ++j) {
        if (dropped[size_t(j)]) continue;
        const float w = std::max(0.0f, std::min(box[4 * i + 2], box[4 * j + 2]) - std::max(box[4 * i], box[4 * j]));
        const float h = std::max(0.0f, std::min(box[4 * i + 3], box[4 * j + 3]) - std::max(box[4 * i + 1], box[4 * j + 1]));
        const float inter = w * h;
        if (inter / (area[size_t(i)] + area[size_t(j)] - inter) > iou) dropped[size_t(j)] = true;
      }
    }
    return faces;
  }

  FaceDetectorShape shape_;
  std::string source_;
  double slope_ = 0;
  Conv2d stem_;
  std::array<std::vector<Bottleneck>, kResNetLayers> resnet_;
  std::array<std::vector<SeparableBlock>, 3> mobilenet_;
  std::array<Conv2d, 3> lateral_;
  std::array<Conv2d, 2> merge_;
  std::array<Ssh, 3> ssh_;
  std::array<Conv2d, 3> class_, box_, landmark_;
  c10::Device device_ = c10::kCPU;
  c10::ScalarType dtype_ = at::kFloat;
};

bool published(const FaceDetectorShape& s) {
  const auto& p = s.params;
  if (s.backbone == "mobilenet0.25") return p.get("stem", 0) == 8 && p.get("in_channel", 0) == 32 && p.get("out_channel", 0) == 64;
  return p.get("stem", 0) == 64 && p.get("width", 0) == 64 && p.get("blocks1", 0) == 3 && p.get("blocks2", 0) == 4 &&
         p.get("blocks3", 0) == 6 && p.get("blocks4", 0) == 3 && p.get("out_channel", 0) == 256;
}

}  // namespace

std::optional<FaceDetectorShape> detect_retinaface(const weights::StateDict& raw, const std::string& source) {
  const auto has = [&](const std::string& key) { return raw.count(key) || raw.count(kModule + key); };
  for (const char* key : {"fpn.output1.0.weight", "ssh1.conv3X3.0.weight", "ClassHead.0.conv1x1.weight",
                          "BboxHead.0.conv1x1.weight", "LandmarkHead.0.conv1x1.weight"})
    if (!has(key)) return std::nullopt;
  const weights::StateDict dict = without_module_prefix(raw, source);
  FaceDetectorShape s;
  if (dict.count("body.conv1.weight")) {
    s.backbone = "resnet50";
    s.params["stem"] = double(width_of(dict, "body.conv1.weight", 0, source));
    s.params["width"] = double(width_of(dict, "body.layer1.0.conv1.weight", 0, source));
    for (int l = 1; l <= kResNetLayers; ++l) {
      const std::set<int> blocks = key_indices(dict, str("body.layer", l, "."));
      if (blocks.empty() || *blocks.rbegin() != int(blocks.size()) - 1 || blocks.size() > 64)
        layout_error(source, str("body.layer", l, " has ", blocks.size(), " blocks (1 to 64, numbered from 0)"));
      s.params[str("blocks", l)] = double(blocks.size());
    }
  } else if (dict.count("body.stage1.0.0.weight")) {
    s.backbone = "mobilenet0.25";
    s.params["mobilenet"] = 1;  // for the cost walk
    s.params["stem"] = double(width_of(dict, "body.stage1.0.0.weight", 0, source));
    for (size_t st = 0; st < 3; ++st) {
      const std::set<int> blocks = key_indices(dict, str("body.stage", st + 1, "."));
      if (blocks.size() != kMobileNetStrides[st].size())
        layout_error(source, str("body.stage", st + 1, " has ", blocks.size(), " blocks (facexlib's MobileNetV1 has ",
                                 kMobileNetStrides[st].size(), ")"));
    }
  } else {
    layout_error(source, "the body is neither torchvision's ResNet (body.conv1) nor facexlib's MobileNetV1 (body.stage1)");
  }
  const int64_t lateral_in = width_of(dict, "fpn.output1.0.weight", 1, source), out = width_of(dict, "fpn.output1.0.weight", 0, source);
  if (lateral_in % 2) layout_error(source, str("fpn.output1 takes ", lateral_in, " channels (twice in_channel)"));
  if (out % 4) layout_error(source, str("out_channel ", out, " is not a multiple of 4 (SSH splits it in 2 and 4)"));
  s.params["in_channel"] = double(lateral_in / 2);
  s.params["out_channel"] = double(out);
  return s;
}

std::unique_ptr<FaceDetector> build_face_detector(const weights::StateDict& dict, const std::string& source) {
  std::optional<FaceDetectorShape> shape = detect_retinaface(dict, source);
  if (!shape) throw Error(ErrorKind::Model, str(source, ": not a RetinaFace (fpn, ssh1..3, ClassHead, BboxHead and LandmarkHead expected)"));
  return std::make_unique<RetinaFace>(dict, source, std::move(*shape));
}

std::unique_ptr<FaceDetector> open_face_detector(const std::string& path) {
  return build_face_detector(weights::load_weights(path), path);
}

std::string describe_face_detector(const FaceDetectorShape& shape, const weights::StateDict& dict) {
  int64_t weights = 0;
  for (const auto& [key, t] : dict) weights += t.numel();
  nlohmann::ordered_json hyper = nlohmann::ordered_json::object();
  for (const auto& [k, v] : shape.params) hyper[k] = static_cast<int64_t>(v);
  const std::string variant = published(shape) ? shape.backbone : shape.backbone + " custom widths";
  nlohmann::ordered_json j = {{"arch", "retinaface"},
                              {"description", arch::declaration("retinaface").description},
                              {"variant", variant},
                              {"backbone", shape.backbone},
                              {"task", "face detection"},
                              {"in_channels", 3},
                              {"outputs", "boxes, scores, five landmarks"},
                              {"params", weights},
                              {"hyperparameters", hyper}};
  return j.dump();
}

}  // namespace framelift::models
