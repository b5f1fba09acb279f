#!/usr/bin/python3
"""The PyTorch peer of bench/pytorch.sh: a video upscaled the way Real-ESRGAN's video script
does it (ffmpeg decodes to raw RGB on a pipe, eager PyTorch runs the network one frame at a
time, ffmpeg encodes raw RGB from a pipe to x264), with the same .pth weights framelift runs.

Three configurations: "default" (fp32, NCHW: what a user gets from the upstream script on a CPU),
"expert" (channels-last memory and bf16 weights and activations under inference_mode: what
someone who knows oneDNN does on a CPU with AVX512-BF16) and "expert-fp32" (channels-last fp32
under inference_mode: the same person on a CPU without bf16, where bf16 is emulated and slower). The networks are written here from their published structure
(SRVGGNetCompact and RRDBNet), with hyper-parameters read off the checkpoint's shapes.

    bench/pytorch_peer.py WEIGHTS.pth INPUT OUTPUT MODE [FRAMES]
"""
import json
import re
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Compact(nn.Module):
    """Real-ESRGAN's SRVGGNetCompact: conv + PReLU chain at input size, a conv to 3*s^2, pixel
    shuffle, plus the nearest-upscaled input."""

    def __init__(self, feat, num_conv, scale):
        super().__init__()
        self.scale = scale
        layers = [nn.Conv2d(3, feat, 3, 1, 1), nn.PReLU(feat)]
        for _ in range(num_conv):
            layers += [nn.Conv2d(feat, feat, 3, 1, 1), nn.PReLU(feat)]
        layers += [nn.Conv2d(feat, 3 * scale * scale, 3, 1, 1)]
        self.body = nn.ModuleList(layers)

    def forward(self, x):
        y = x
        for layer in self.body:
            y = layer(y)
        return F.pixel_shuffle(y, self.scale) + F.interpolate(x, scale_factor=self.scale, mode="nearest")


class DenseBlock(nn.Module):
    def __init__(self, nf, gc):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(nf + i * gc, gc if i < 4 else nf, 3, 1, 1) for i in range(5)])

    def forward(self, x):
        feats = [x]
        for i, conv in enumerate(self.convs):
            y = conv(torch.cat(feats, 1))
            if i < 4:
                feats.append(F.leaky_relu(y, 0.2))
        return y * 0.2 + x


class Rrdb(nn.Module):
    def __init__(self, nf, gc):
        super().__init__()
        self.blocks = nn.ModuleList([DenseBlock(nf, gc) for _ in range(3)])

    def forward(self, x):
        y = x
        for b in self.blocks:
            y = b(y)
        return y * 0.2 + x


class RrdbNet(nn.Module):
    """ESRGAN's RRDBNet at x4 (two nearest x2 + conv steps)."""

    def __init__(self, nf, nb, gc):
        super().__init__()
        self.conv_first = nn.Conv2d(3, nf, 3, 1, 1)
        self.body = nn.ModuleList([Rrdb(nf, gc) for _ in range(nb)])
        self.conv_body = nn.Conv2d(nf, nf, 3, 1, 1)
        self.conv_up1 = nn.Conv2d(nf, nf, 3, 1, 1)
        self.conv_up2 = nn.Conv2d(nf, nf, 3, 1, 1)
        self.conv_hr = nn.Conv2d(nf, nf, 3, 1, 1)
        self.conv_last = nn.Conv2d(nf, 3, 3, 1, 1)

    def forward(self, x):
        feat = self.conv_first(x)
        y = feat
        for b in self.body:
            y = b(y)
        feat = feat + self.conv_body(y)
        feat = F.leaky_relu(self.conv_up1(F.interpolate(feat, scale_factor=2, mode="nearest")), 0.2)
        feat = F.leaky_relu(self.conv_up2(F.interpolate(feat, scale_factor=2, mode="nearest")), 0.2)
        return self.conv_last(F.leaky_relu(self.conv_hr(feat), 0.2))


def compact_from(sd):
    """Keys body.N.weight (convs at even N, PReLU at odd N)."""
    convs = sorted(int(m.group(1)) for k in sd if (m := re.fullmatch(r"body\.(\d+)\.weight", k)) and sd[k].dim() == 4)
    feat = sd["body.0.weight"].shape[0]
    last = sd[f"body.{convs[-1]}.weight"].shape[0]
    scale = int(round((last / 3) ** 0.5))
    net = Compact(feat, len(convs) - 2, scale)
    net.body.load_state_dict({k[len("body."):]: v for k, v in sd.items()})
    return net, scale


OLD_ESRGAN_TAIL = {"model.3.": "conv_up1.", "model.6.": "conv_up2.", "model.8.": "conv_hr.", "model.10.": "conv_last."}


def new_rrdb_key(k):
    """An old-layout ESRGAN key (model.0, model.1.sub.N.RDBk.convj.0, model.1.sub.NB, model.3/6/8/10)
    or a new-layout one (conv_first, body.N.rdbk.convj, ...) as this file's RrdbNet names it."""
    if k.startswith("model.0."):
        return "conv_first." + k[len("model.0."):]
    m = re.fullmatch(r"model\.1\.sub\.(\d+)\.RDB(\d)\.conv(\d)\.0\.(weight|bias)", k)
    if m:
        return f"body.{m.group(1)}.blocks.{int(m.group(2)) - 1}.convs.{int(m.group(3)) - 1}.{m.group(4)}"
    m = re.fullmatch(r"model\.1\.sub\.\d+\.(weight|bias)", k)
    if m:
        return "conv_body." + m.group(1)
    for old, new in OLD_ESRGAN_TAIL.items():
        if k.startswith(old):
            return new + k[len(old):]
    m = re.fullmatch(r"body\.(\d+)\.rdb(\d)\.conv(\d)\.(weight|bias)", k)
    if m:
        return f"body.{m.group(1)}.blocks.{int(m.group(2)) - 1}.convs.{int(m.group(3)) - 1}.{m.group(4)}"
    return k


def rrdb_from(sd):
    sd = {new_rrdb_key(k): v for k, v in sd.items()}
    nf = sd["conv_first.weight"].shape[0]
    gc = sd["body.0.blocks.0.convs.0.weight"].shape[0]
    nb = 1 + max(int(k.split(".")[1]) for k in sd if k.startswith("body."))
    net = RrdbNet(nf, nb, gc)
    net.load_state_dict(sd)
    return net, 4


def load(path):
    sd = torch.load(path, map_location="cpu")
    for key in ("params_ema", "params", "state_dict"):
        if isinstance(sd, dict) and key in sd and isinstance(sd[key], dict):
            sd = sd[key]
    if "body.0.weight" in sd and "conv_first.weight" not in sd:
        return compact_from(sd)
    return rrdb_from(sd)


def probe(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height,r_frame_rate",
                          "-of", "json", path], check=True, capture_output=True, text=True).stdout
    s = json.loads(out)["streams"][0]
    return s["width"], s["height"], s["r_frame_rate"]


def main():
    weights, src, dst, mode = sys.argv[1:5]
    frames = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    torch.set_num_threads(int(subprocess.run(["nproc"], capture_output=True, text=True).stdout))
    net, scale = load(weights)
    net.eval()
    dtype = torch.float32
    if mode not in ("default", "expert", "expert-fp32"):
        sys.exit(f"pytorch_peer.py: unknown mode {mode}")
    if mode.startswith("expert"):
        net = net.to(memory_format=torch.channels_last)
    if mode == "expert":
        net = net.bfloat16()
        dtype = torch.bfloat16
    w, h, rate = probe(src)
    dec = subprocess.Popen(["ffmpeg", "-v", "error", "-i", src] + (["-frames:v", str(frames)] if frames else []) +
                           ["-f", "rawvideo", "-pix_fmt", "rgb24", "-"], stdout=subprocess.PIPE)
    enc = subprocess.Popen(["ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{w * scale}x{h * scale}",
                            "-r", rate, "-i", "-", "-c:v", "libx264", "-pix_fmt", "yuv420p", dst], stdin=subprocess.PIPE)
    size = w * h * 3
    n = 0
    start = time.time()
    with torch.inference_mode():
        while True:
            raw = dec.stdout.read(size)
            if len(raw) < size:
                break
            x = torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(h, w, 3).permute(2, 0, 1).unsqueeze(0)
            x = x.to(dtype) / 255.0
            if mode.startswith("expert"):
                x = x.contiguous(memory_format=torch.channels_last)
            y = net(x).float().clamp_(0, 1).mul_(255).round_().to(torch.uint8)
            enc.stdin.write(y[0].permute(1, 2, 0).contiguous().numpy().tobytes())
            n += 1
    enc.stdin.close()
    enc.wait()
    dec.wait()
    print(json.dumps({"frames": n, "seconds": time.time() - start}))


if __name__ == "__main__":
    main()
