#!/usr/bin/python3
"""Reference checkpoints and outputs for framelift's RetinaFace (src/models/retinaface.cpp).

Runs facexlib's own RetinaFace (facexlib/detection/retinaface.py, retinaface_net.py,
retinaface_utils.py) from a checkout given on the command line, with seeded weights, on a real
crop at its own size (detect_faces(use_origin_size=True): no resize), and writes next to this
script, for each configuration:

  NAME.pth             the state dict as torch.save writes it
  NAME.ref.safetensors "input" [1, 3, H, W] RGB in [0, 1] (what framelift's detector takes);
                       facexlib's raw heads "loc" [1, P, 4], "conf" [1, P, 2] (softmaxed),
                       "landms" [1, P, 10]; "detections" [K, 15] from detect_faces at
                       "threshold" (x1 y1 x2 y2 score, then five landmark x y), NMS IoU 0.4

Debian packages no torchvision, cv2 or PIL: the imports facexlib makes of them are shims here.
torchvision's part is small and re-written: IntermediateLayerGetter, resnet50 (a Bottleneck ResNet
with torchvision's parameter names, its widths set per configuration so that a narrow one stays
small) and ops.nms (the greedy suppression torchvision's CPU kernel does). The input facexlib sees
is the crop as cv2 would read it: BGR, 0-255, float32.

Configurations:
  retinaface-mnet        facexlib's MobileNetV1 body at half its published widths (4 .. 128, as
                         conv_bn / conv_dw build them), in_channel 16, out_channel 32 (leaky 0.1
                         in FPN and SSH, as for out_channel <= 64); every key saved with the
                         "module." prefix facexlib's released files carry
  retinaface-r50-narrow  a ResNet-50 layout (Bottlenecks 1/2/1/1 per stage rather than 3/4/6/3)
                         at base width 4 (stage outputs 16/32/64/128), in_channel 16,
                         out_channel 68 (> 64: leaky 0, the published ResNet-50's 256 path)

Usage: tests/data/arch/make_face_references_retinaface.py /path/to/facexlib-checkout [NAME ...]
"""
import os
import sys
import types
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from make_references import seeded, real_frame, write_safetensors, HERE  # noqa: E402


class ResNetWidths:
    base = 64
    blocks = (3, 4, 6, 3)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.downsample is None else self.downsample(x)
        return self.relu(out + identity)


class ResNet(nn.Module):
    """torchvision.models.resnet50's children and parameter names (v1.5: stride on the 3x3)."""

    def __init__(self):
        super().__init__()
        base, blocks = ResNetWidths.base, ResNetWidths.blocks
        self.inplanes = base
        self.conv1 = nn.Conv2d(3, base, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(base)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._layer(base, blocks[0], 1)
        self.layer2 = self._layer(base * 2, blocks[1], 2)
        self.layer3 = self._layer(base * 4, blocks[2], 2)
        self.layer4 = self._layer(base * 8, blocks[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(base * 32, 1000)

    def _layer(self, planes, n, stride):
        downsample = None
        if stride != 1 or self.inplanes != planes * 4:
            downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes * 4, 1, stride, bias=False), nn.BatchNorm2d(planes * 4))
        layers = [Bottleneck(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * 4
        layers += [Bottleneck(self.inplanes, planes) for _ in range(1, n)]
        return nn.Sequential(*layers)


class IntermediateLayerGetter(nn.ModuleDict):
    """torchvision's: the children up to the last returned one, outputs renamed."""

    def __init__(self, model, return_layers):
        wanted = dict(return_layers)
        layers = OrderedDict()
        for name, module in model.named_children():
            layers[name] = module
            wanted.pop(name, None)
            if not wanted:
                break
        super().__init__(layers)
        self.return_layers = dict(return_layers)

    def forward(self, x):
        out = OrderedDict()
        for name, module in self.items():
            x = module(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out


def nms(boxes, scores, iou_threshold):
    """torchvision.ops.nms on CPU: best first, drop what overlaps a kept box by IoU > threshold."""
    x1, y1, x2, y2 = boxes.unbind(1)
    areas = (x2 - x1) * (y2 - y1)
    order = scores.sort(0, descending=True)[1]
    suppressed = torch.zeros(len(order), dtype=torch.bool)
    keep = []
    for a, i in enumerate(order.tolist()):
        if suppressed[i]:
            continue
        keep.append(i)
        for j in order[a + 1:].tolist():
            if suppressed[j]:
                continue
            w = (torch.min(x2[i], x2[j]) - torch.max(x1[i], x1[j])).clamp(min=0)
            h = (torch.min(y2[i], y2[j]) - torch.max(y1[i], y1[j])).clamp(min=0)
            inter = w * h
            iou = inter / (areas[i] + areas[j] - inter)
            NMS_MARGINS.append(abs(float(iou) - iou_threshold))
            if iou > iou_threshold:
                suppressed[j] = True
    return torch.tensor(keep, dtype=torch.long)


NMS_MARGINS = []


def install_shims():
    cv2 = types.ModuleType("cv2")
    cv2.COLOR_RGB2BGR, cv2.INTER_LINEAR = 4, 1
    pil = types.ModuleType("PIL")
    pil_image = types.ModuleType("PIL.Image")
    pil_image.Image = type("Image", (), {})
    pil.Image = pil_image
    tv = types.ModuleType("torchvision")
    tv_models = types.ModuleType("torchvision.models")
    tv_utils = types.ModuleType("torchvision.models._utils")
    tv_ops = types.ModuleType("torchvision.ops")
    tv_utils.IntermediateLayerGetter = IntermediateLayerGetter
    tv_models.resnet50 = lambda pretrained=False: ResNet()
    tv_models._utils = tv_utils
    tv_ops.nms = nms
    tv.models, tv.ops = tv_models, tv_ops
    sys.modules.update({"cv2": cv2, "PIL": pil, "PIL.Image": pil_image, "torchvision": tv, "torchvision.models": tv_models,
                        "torchvision.models._utils": tv_utils, "torchvision.ops": tv_ops})


def facexlib_detection(checkout):
    """facexlib.detection's modules without facexlib/__init__ (which imports every subpackage)."""
    import importlib
    install_shims()
    for name, path in [("facexlib", os.path.join(checkout, "facexlib")),
                       ("facexlib.detection", os.path.join(checkout, "facexlib", "detection"))]:
        m = types.ModuleType(name)
        m.__path__ = [path]
        sys.modules[name] = m
    return (importlib.import_module("facexlib.detection.retinaface"), importlib.import_module("facexlib.detection.retinaface_net"))


def build(checkout, network, in_channel, out_channel, half_mobilenet=False):
    rf, net = facexlib_detection(checkout)
    published = rf.generate_config

    def config(name):
        cfg = dict(published(name))
        cfg["in_channel"], cfg["out_channel"] = in_channel, out_channel
        return cfg

    rf.generate_config = config
    if half_mobilenet:
        class HalfMobileNetV1(nn.Module):
            def __init__(self):
                super().__init__()
                self.stage1 = nn.Sequential(net.conv_bn(3, 4, 2, leaky=0.1), net.conv_dw(4, 8, 1), net.conv_dw(8, 16, 2),
                                            net.conv_dw(16, 16, 1), net.conv_dw(16, 32, 2), net.conv_dw(32, 32, 1))
                self.stage2 = nn.Sequential(net.conv_dw(32, 64, 2), *[net.conv_dw(64, 64, 1) for _ in range(5)])
                self.stage3 = nn.Sequential(net.conv_dw(64, 128, 2), net.conv_dw(128, 128, 1))
        rf.MobileNetV1 = HalfMobileNetV1
    try:
        return rf.RetinaFace(network_name=network, device=torch.device("cpu"))
    finally:
        rf.generate_config = published


class Seeded(nn.Module):
    """Norm scales near 1 (seeded() draws them at ~0.1); calibrate() then sets statistics."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def reseed(self, name, p, g):
        if p.dim() == 1 and name.endswith("weight"):
            p.add_(1.0)


def calibrate(model, x, g):
    """What training leaves, on the crop itself: BatchNorm's running statistics those of the
    batch (then jittered, variances floored), so that activations stay of unit size through the
    layers instead of growing or fading; the heads scaled so that the face logits spread over a
    few units around 0 (scores across 0 to 1) and the offsets over about one (boxes near their
    priors, exp() finite)."""
    norms = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    with torch.no_grad():
        for m in norms:
            m.momentum = 1.0
        model.train()
        model(x)
        model.eval()
        for m in norms:
            m.momentum = 0.1
            m.running_mean.add_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
            m.running_var.mul_(torch.rand(m.running_var.shape, generator=g) * 0.4 + 0.8)
            # No channel scaled up beyond its layer's typical size: a channel the batch left nearly
            # constant would be scaled by up to 1 / sqrt(eps) and turn rounding into signal, layer
            # after layer (fp32 itself then agrees with fp64 to only ~100 dB, bf16 to ~15 dB).
            m.running_var.clamp_(min=float(m.running_var.mean()))
        loc, conf, landms = model(x)
        logits = torch.log(conf[..., 1] / conf[..., 0])
        for heads, spread, target in [(model.ClassHead, logits.std(), 3.0), (model.BboxHead, loc.std(), 0.8),
                                      (model.LandmarkHead, landms.std(), 1.0)]:
            for h in heads:
                h.conv1x1.weight.mul_(target / spread)
                h.conv1x1.bias.mul_(target / spread)
        # Face and background even on average, so that a threshold keeps the tail.
        _, conf, _ = model(x)
        offset = float(torch.log(conf[..., 1] / conf[..., 0]).mean())
        for h in model.ClassHead:
            h.conv1x1.bias[0::2] += offset / 2
            h.conv1x1.bias[1::2] -= offset / 2


CONFIGS = {
    # name: (network, in_channel, out_channel, resnet base width, resnet blocks, seed, threshold,
    # "module." prefix, crop). Crops of odd sizes, so that every stride-2 level rounds up (ceil),
    # as PriorBox assumes; the ResNet's smaller, to keep its file small at out_channel 68.
    "retinaface-mnet": ("mobile0.25", 16, 32, None, None, 4101, 0.98, True, (161, 123)),
    "retinaface-r50-narrow": ("resnet50", 16, 68, 4, (1, 2, 1, 1), 4102, 0.98, False, (65, 49)),
}


def make(checkout, name):
    network, in_channel, out_channel, base, blocks, seed, threshold, prefix, (width, height) = CONFIGS[name]
    if base:
        ResNetWidths.base, ResNetWidths.blocks = base, blocks
    model = build(checkout, network, in_channel, out_channel, half_mobilenet=network == "mobile0.25")
    seeded(Seeded(model), seed)
    x = real_frame(width, height)
    bgr = (x[0].permute(1, 2, 0).numpy()[:, :, ::-1] * 255.0).astype(np.float32)
    network_input = torch.from_numpy(bgr.transpose(2, 0, 1).copy()).unsqueeze(0) - model.mean_tensor
    calibrate(model, network_input, torch.Generator().manual_seed(seed + 1))
    with torch.no_grad():
        loc, conf, landms = model(network_input)
        NMS_MARGINS.clear()
        dets = model.detect_faces(bgr, conf_threshold=threshold, nms_threshold=0.4)
    scores = conf[0, :, 1]
    margin = (scores - threshold).abs().min().item()
    assert margin > 1e-4 and min(NMS_MARGINS) > 1e-4, f"{name}: a score ({margin:.1e}) or an IoU ({min(NMS_MARGINS):.1e}) too close to its threshold"
    state = model.state_dict()
    if prefix:
        state = OrderedDict(("module." + k, v) for k, v in state.items())
    torch.save(state, os.path.join(HERE, name + ".pth"))
    write_safetensors(os.path.join(HERE, name + ".ref.safetensors"),
                      {"input": x, "loc": loc, "conf": conf, "landms": landms, "detections": torch.from_numpy(np.asarray(dets)),
                       "threshold": torch.tensor([threshold])})
    print(f"{name}: input {list(x.shape)}, {loc.shape[1]} priors, {int((scores > threshold).sum())} above {threshold}, "
          f"{len(dets)} after NMS; score margin {margin:.2e}, IoU margin {min(NMS_MARGINS):.2e}; "
          f"{sum(v.numel() for v in model.state_dict().values())} weights")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    torch.set_num_threads(1)
    for name in sys.argv[2:] or list(CONFIGS):
        make(sys.argv[1], name)


if __name__ == "__main__":
    main()
