#!/usr/bin/python3
"""Exports small seeded networks to ONNX with Debian's python3-torch, for onnx_ort_check.sh.

    onnx_cases.py OUT_DIR [NAME_FILTER]

For every network and opset it writes OUT/<case>.onnx and a seeded input OUT/<case>.in.f32 (raw
little-endian float32) and lists them in OUT/cases.json. The reference outputs come from ONNX
Runtime (onnx_ort.js), never from this script or from framelift. The networks are the community's
architectures in miniature (random weights, a few channels), written here from their published
definitions, plus graphs that exercise one operator family each (Resize, Pad, GridSample...).
"""
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


def conv(cin, cout, k=3, **kw):
    return nn.Conv2d(cin, cout, k, padding=k // 2, **kw)


class Compact(nn.Module):
    """SRVGGNetCompact (Real-ESRGAN's realesr-animevideov3 / general-x4v3)."""

    def __init__(self, nf=16, nc=4, scale=4, act="prelu"):
        super().__init__()
        self.scale = scale
        layers = [conv(3, nf)]
        make = (lambda: nn.PReLU(nf)) if act == "prelu" else (lambda: nn.LeakyReLU(0.1))
        layers.append(make())
        for _ in range(nc):
            layers += [conv(nf, nf), make()]
        layers.append(conv(nf, 3 * scale * scale))
        self.body = nn.Sequential(*layers)
        self.up = nn.PixelShuffle(scale)

    def forward(self, x):
        return self.up(self.body(x)) + F.interpolate(x, scale_factor=self.scale, mode="nearest")


class RDB(nn.Module):
    """BasicSR's ResidualDenseBlock, under its names (conv1..conv5)."""

    def __init__(self, nf, gc):
        super().__init__()
        for i in range(5):
            setattr(self, f"conv{i + 1}", conv(nf + i * gc, gc if i < 4 else nf))

    def forward(self, x):
        feats = [x]
        for i in range(5):
            y = getattr(self, f"conv{i + 1}")(torch.cat(feats, 1))
            if i < 4:
                y = F.leaky_relu(y, 0.2)
            feats.append(y)
        return feats[-1] * 0.2 + x


class RRDB(nn.Module):
    def __init__(self, nf, gc):
        super().__init__()
        self.rdb1, self.rdb2, self.rdb3 = RDB(nf, gc), RDB(nf, gc), RDB(nf, gc)

    def forward(self, x):
        return self.rdb3(self.rdb2(self.rdb1(x))) * 0.2 + x


class RRDBNet(nn.Module):
    """ESRGAN's RRDBNet under BasicSR's names, one RRDB, x2 by one nearest upsampling step."""

    def __init__(self, nf=16, gc=8):
        super().__init__()
        self.conv_first = conv(3, nf)
        self.body = nn.Sequential(RRDB(nf, gc))
        self.conv_body = conv(nf, nf)
        self.conv_up1 = conv(nf, nf)
        self.conv_hr = conv(nf, nf)
        self.conv_last = conv(nf, 3)

    def forward(self, x):
        feat = self.conv_first(x)
        feat = feat + self.conv_body(self.body(feat))
        feat = F.leaky_relu(self.conv_up1(F.interpolate(feat, scale_factor=2, mode="nearest")), 0.2)
        return self.conv_last(F.leaky_relu(self.conv_hr(feat), 0.2))


class SPAB(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1, self.c2, self.c3 = conv(c, c), conv(c, c), conv(c, c)

    def forward(self, x):
        out1 = self.c1(x)
        out2 = self.c2(out1 * torch.sigmoid(out1))
        out3 = self.c3(out2 * torch.sigmoid(out2))
        sim_att = torch.sigmoid(out3) - 0.5
        return (out3 + x) * sim_att, out1


class SPAN(nn.Module):
    """SPAN (swift parameter-free attention), two blocks, x2."""

    def __init__(self, c=16, scale=2):
        super().__init__()
        self.conv_1 = conv(3, c)
        self.b1, self.b2 = SPAB(c), SPAB(c)
        self.conv_cat = nn.Conv2d(c * 4, c, 1)
        self.up = nn.Sequential(conv(c, 3 * scale * scale), nn.PixelShuffle(scale))

    def forward(self, x):
        f = self.conv_1(x)
        b1, _ = self.b1(f)
        b2, b2_1 = self.b2(b1)
        return self.up(self.conv_cat(torch.cat([f, b2, b1, b2_1], 1)))


class Conv3XC(nn.Module):
    """SPAN's Conv3XC under upstream's names: trained as a 1x1 skip (sk) beside a 1x1 -> 3x3 -> 1x1
    chain (conv.0-2), run in eval as eval_conv, one 3x3 whose weights deploy() composes from the
    branches (upstream recomputes them on each eval forward, outside what the exporter traces)."""

    def __init__(self, cin, cout, gain=2):
        super().__init__()
        self.sk = nn.Conv2d(cin, cout, 1)
        self.conv = nn.Sequential(nn.Conv2d(cin, cin * gain, 1), nn.Conv2d(cin * gain, cout * gain, 3),
                                  nn.Conv2d(cout * gain, cout, 1))
        self.eval_conv = nn.Conv2d(cin, cout, 3, padding=1)

    def deploy(self):
        a, b, c = self.conv
        wa, wc = a.weight.flatten(1), c.weight.flatten(1)  # [hidden, in], [out, hidden]
        w = torch.einsum("omhw,mi->oihw", b.weight, wa)
        bias = b.weight.sum((2, 3)) @ a.bias + b.bias
        w = torch.einsum("op,pihw->oihw", wc, w)
        bias = wc @ bias + c.bias
        w[:, :, 1, 1] += self.sk.weight.flatten(1)
        self.eval_conv.weight.copy_(w)
        self.eval_conv.bias.copy_(bias + self.sk.bias)

    def forward(self, x):
        return self.eval_conv(x)


class UpstreamSPAB(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1_r, self.c2_r, self.c3_r = Conv3XC(c, c), Conv3XC(c, c), Conv3XC(c, c)

    def forward(self, x):
        out1 = F.silu(self.c1_r(x))  # upstream's SiLU is in place: the activated c1 is what it returns
        out3 = self.c3_r(F.silu(self.c2_r(out1)))
        return (out3 + x) * (torch.sigmoid(out3) - 0.5), out1


class UpstreamSPAN(nn.Module):
    """SPAN as published (six SPABs, the input normalised by DIV2K's mean unless norm=False), under
    upstream's module names, so that its export keeps them: the native twin's case."""

    def __init__(self, c=16, scale=2, norm=True):
        super().__init__()
        self.norm = norm
        self.conv_1 = Conv3XC(3, c)
        for i in range(1, 7):
            setattr(self, f"block_{i}", UpstreamSPAB(c))
        self.conv_2 = Conv3XC(c, c)
        self.conv_cat = nn.Conv2d(c * 4, c, 1)
        self.upsampler = nn.Sequential(nn.Conv2d(c, 3 * scale * scale, 3, padding=1), nn.PixelShuffle(scale))

    def deploy(self):
        for m in self.modules():
            if isinstance(m, Conv3XC):
                m.deploy()

    def forward(self, x):
        if self.norm:
            x = (x - torch.tensor([0.4488, 0.4371, 0.4040]).view(1, 3, 1, 1)) * 255.0
        feature = self.conv_1(x)
        y, first = feature, None
        for i in range(1, 7):
            y, c1 = getattr(self, f"block_{i}")(y)
            first = y if i == 1 else first
        return self.upsampler(self.conv_cat(torch.cat([feature, self.conv_2(y), first, c1], 1)))


class WindowBlock(nn.Module):
    """A Swin layer: LayerNorm, window attention with a learned bias (shifted by torch.roll), MLP."""

    def __init__(self, dim, heads, ws, shift):
        super().__init__()
        self.dim, self.heads, self.ws, self.shift = dim, heads, ws, shift
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.bias = nn.Parameter(torch.randn(heads, ws * ws, ws * ws) * 0.1)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        b, c, h, w = x.shape
        ws, heads = self.ws, self.heads
        t = x.permute(0, 2, 3, 1)
        y = self.norm1(t)
        if self.shift:
            y = torch.roll(y, (-self.shift, -self.shift), (1, 2))
        win = y.reshape(b, h // ws, ws, w // ws, ws, c).permute(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, c)
        qkv = self.qkv(win).reshape(-1, ws * ws, 3, heads, c // heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = torch.softmax((q * (c // heads) ** -0.5) @ k.transpose(-2, -1) + self.bias, dim=-1)
        out = self.proj((attn @ v).transpose(1, 2).reshape(-1, ws * ws, c))
        out = out.reshape(b, h // ws, w // ws, ws, ws, c).permute(0, 1, 3, 2, 4, 5).reshape(b, h, w, c)
        if self.shift:
            out = torch.roll(out, (self.shift, self.shift), (1, 2))
        t = t + out
        t = t + self.mlp(self.norm2(t))
        return t.permute(0, 3, 1, 2)


class SwinIRLite(nn.Module):
    """SwinIR in miniature: conv, two window layers (the second shifted), conv, pixel shuffle x2."""

    def __init__(self, dim=16, ws=4):
        super().__init__()
        self.conv_first = conv(3, dim)
        self.layers = nn.Sequential(WindowBlock(dim, 2, ws, 0), WindowBlock(dim, 2, ws, ws // 2))
        self.conv_after = conv(dim, dim)
        self.up = nn.Sequential(conv(dim, 12), nn.PixelShuffle(2))

    def forward(self, x):
        f = self.conv_first(x)
        return self.up(self.conv_after(self.layers(f)) + f)


class PLKBlock(nn.Module):
    def __init__(self, dim, split, kernel):
        super().__init__()
        self.split = split
        self.mixer = nn.Sequential(conv(dim, dim * 2), nn.Mish(), nn.Conv2d(dim * 2, dim, 1))
        self.lk = conv(split, split, kernel)
        self.refine = nn.Conv2d(dim, dim, 1)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        skip = x
        x = self.mixer(x)
        x1, x2 = torch.split(x, [self.split, x.shape[1] - self.split], dim=1)
        x = torch.cat([self.lk(x1), x2], 1)
        x = self.norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        return self.refine(x) + skip


class RealPLKSRLite(nn.Module):
    """RealPLKSR in miniature (LayerNorm variant): partial large-kernel convs, x2."""

    def __init__(self, dim=16, scale=2):
        super().__init__()
        self.scale = scale
        self.feats = nn.Sequential(conv(3, dim), PLKBlock(dim, 4, 9), PLKBlock(dim, 4, 9), nn.Dropout(0.5),
                                   conv(dim, 3 * scale * scale))
        self.up = nn.PixelShuffle(scale)
        # repeat_interleave(x, scale^2, dim=1) as upstream writes it; torch 1.13 exports that with the
        # example's H and W baked in, so the same repetition is a Gather of channel indices here.
        self.register_buffer("repeat", torch.arange(3).repeat_interleave(scale * scale))

    def forward(self, x):
        return self.up(self.feats(x) + torch.index_select(x, 1, self.repeat))


class FlowLite(nn.Module):
    """A RIFE IFBlock in miniature on two frames stacked as 6 channels: strided convs, a transposed
    conv to flow and mask, both frames warped by grid_sample, blended by the mask."""

    def __init__(self, c=16):
        super().__init__()
        self.conv0 = nn.Sequential(nn.Conv2d(6, c, 3, 2, 1), nn.PReLU(c), nn.Conv2d(c, c, 3, 2, 1), nn.PReLU(c))
        self.block = nn.Sequential(conv(c, c), nn.PReLU(c), conv(c, c), nn.PReLU(c))
        self.last = nn.ConvTranspose2d(c, 5, 4, 2, 1)

    @staticmethod
    def warp(img, flow):
        b, _, h, w = img.shape
        gx = torch.linspace(-1.0, 1.0, w).view(1, 1, 1, w).expand(b, 1, h, w)
        gy = torch.linspace(-1.0, 1.0, h).view(1, 1, h, 1).expand(b, 1, h, w)
        grid = torch.cat([gx, gy], 1)
        flow = torch.cat([flow[:, 0:1] / ((w - 1.0) / 2.0), flow[:, 1:2] / ((h - 1.0) / 2.0)], 1)
        g = (grid + flow).permute(0, 2, 3, 1)
        return F.grid_sample(img, g, mode="bilinear", padding_mode="border", align_corners=True)

    def forward(self, x):
        img0, img1 = x[:, :3], x[:, 3:6]
        small = F.interpolate(x, scale_factor=0.5, mode="bilinear", align_corners=False)
        feat = self.conv0(small)
        feat = self.block(feat) + feat
        out = F.interpolate(self.last(feat), scale_factor=4, mode="bilinear", align_corners=False)
        flow, mask = out[:, :4] * 8, torch.sigmoid(out[:, 4:5])
        return self.warp(img0, flow[:, :2]) * mask + self.warp(img1, flow[:, 2:4]) * (1 - mask)


class ResizeModes(nn.Module):
    """Every Resize PyTorch exports, each as its own channels. aligned=False: the modes that are
    the same on every pixel grid (nearest x2 by scale and by size, bilinear and bicubic with
    half-pixel centres), so tiles of them agree with the whole frame; aligned=True: align_corners
    and a 3:2 resize by size, whose sampling positions depend on the picture's size."""

    def __init__(self, aligned):
        super().__init__()
        self.aligned = aligned

    def forward(self, x):
        h, w = x.shape[2], x.shape[3]
        if self.aligned:
            outs = [F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True),
                    F.interpolate(x, scale_factor=2, mode="bicubic", align_corners=True),
                    F.interpolate(F.interpolate(x, scale_factor=3, mode="nearest"), size=(h * 2, w * 2), mode="bilinear",
                                  align_corners=False)]
        else:
            outs = [F.interpolate(x, scale_factor=2, mode="nearest"),
                    F.interpolate(x, size=(h * 2, w * 2), mode="nearest"),
                    F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False),
                    F.interpolate(x, scale_factor=2, mode="bicubic", align_corners=False)]
        return torch.cat(outs, 1)


class PadModes(nn.Module):
    """Pad reflect, edge and constant around a convolution that has no padding of its own."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 5)

    def forward(self, x):
        return torch.cat([self.conv(F.pad(x, (2, 2, 2, 2), mode="reflect")),
                          self.conv(F.pad(x, (1, 3, 3, 1), mode="replicate")),
                          self.conv(F.pad(x, (2, 2, 2, 2), mode="constant", value=0.5))], 1)


class GridModes(nn.Module):
    """GridSample with each interpolation and padding mode PyTorch exports."""

    def __init__(self):
        super().__init__()
        self.offset = conv(3, 2)

    def forward(self, x):
        g = torch.tanh(self.offset(x)).permute(0, 2, 3, 1) * 1.2
        outs = []
        for mode in ("bilinear", "nearest", "bicubic"):
            for pad in ("zeros", "border", "reflection"):
                for align in (False, True):
                    outs.append(F.grid_sample(x, g, mode=mode, padding_mode=pad, align_corners=align))
        return torch.cat(outs, 1)


class DenseOps(nn.Module):
    """Gemm/MatMul/Softmax/LayerNorm/GELU over channels, ConvTranspose, BatchNorm after a ReLU,
    Clip, SpaceToDepth-style unshuffle, InstanceNorm (whole-frame statistics)."""

    def __init__(self, c=8):
        super().__init__()
        self.inp = conv(3, c)
        self.lin = nn.Linear(c, c)
        self.norm = nn.LayerNorm(c)
        self.bn = nn.BatchNorm2d(c)
        self.down = nn.Conv2d(4 * c, c, 1)
        self.upconv = nn.ConvTranspose2d(c, c, 3, stride=2, padding=1, output_padding=1)
        self.inorm = nn.InstanceNorm2d(c, affine=True)
        self.out = conv(c, 3)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        f = self.inp(x)
        t = f.permute(0, 2, 3, 1)
        t = F.gelu(self.lin(self.norm(t)))
        t = t + torch.softmax(t @ t.transpose(-2, -1), dim=-1) @ t * 0.1
        f = self.bn(torch.relu(t.permute(0, 3, 1, 2)))
        f = f + self.down(F.pixel_unshuffle(F.pixel_shuffle(torch.cat([f, f * 0.5, f * 0.25, -f], 1), 2), 2))
        f = self.upconv(torch.clamp(f, -1.0, 1.0))
        return self.out(self.inorm(f))


class MiscOps(nn.Module):
    """The rest of the operator table as PyTorch exports it: pooling, the other activations and
    unary functions, comparisons and Where, Max/Min, Split (chunk), negative-step Slice (flip),
    Tile (repeat), Expand, Range (arange over a dynamic size), Flatten/Gemm, LogSoftmax and the
    other reductions."""

    def __init__(self, c=6):
        super().__init__()
        self.inp = conv(3, c)
        self.fc = nn.Linear(c, c)
        self.out = conv(8 * c, 3)

    def forward(self, x):
        f = self.inp(x)
        b, c, h, w = f.shape
        a, bb = torch.chunk(f, 2, dim=1)
        g = torch.cat([F.elu(a), F.hardsigmoid(bb)], 1)
        pooled = F.max_pool2d(f, 3, 1, 1) + F.avg_pool2d(f, 3, 1, 1, count_include_pad=False)
        unary = torch.exp(-f.abs()) + torch.sqrt(f * f + 1) + torch.log(f * f + 1) + torch.reciprocal(f * f + 2)
        unary = unary + torch.floor(f * 3) / 3 - torch.ceil(f * 2) / 2 + torch.sin(f) * torch.cos(f) + F.softplus(-f)
        gated = torch.where(torch.eq(torch.round(f), 0) | (f > 1.5), f, -f) + torch.maximum(f, g) - torch.minimum(f, -g)
        flipped = torch.flip(f, [3]) + F.hardswish(f)
        ramp = torch.arange(w, dtype=torch.float32).view(1, 1, 1, w).expand(b, 1, h, w) / 64.0
        tiled = f[:, :1].repeat(1, c, 1, 1) * ramp
        stats = self.fc(f.mean(dim=(2, 3)))  # Gemm over the flattened channels
        attn = torch.log_softmax(f, dim=1) + f.amax(dim=1, keepdim=True) - f.amin(dim=1, keepdim=True) + f.sum(1, keepdim=True)
        mixed = f * torch.sigmoid(stats).view(b, c, 1, 1)
        return self.out(torch.cat([g, pooled, unary, gated, flipped, tiled, attn, mixed], 1))


# name -> (factory, opsets, input H x W, channels, tiled check: (tile, overlap; -1 the model's 16) or None)
NETWORKS = {
    # Receptive radius 6 input pixels: the default overlap covers it.
    "compact": (lambda: Compact(), (11, 13, 17), (29, 37), 3, (16, -1)),
    "compact_lrelu": (lambda: Compact(act="lrelu", scale=2), (13,), (29, 37), 3, (16, -1)),
    # 17 convolutions before the upsampling and 3 after: a radius of 19 input pixels.
    "esrgan": (lambda: RRDBNet(), (11, 13, 17), (29, 37), 3, (16, 20)),
    "span": (lambda: SPAN(), (11, 13, 17), (29, 37), 3, (16, -1)),
    # Upstream's names and six blocks: the native span runs it (its eval_convs alone are exported).
    "span_upstream": (lambda: UpstreamSPAN(), (11, 17), (29, 37), 3, (16, -1)),
    "span_upstream_nonorm": (lambda: UpstreamSPAN(c=8, scale=3, norm=False), (17,), (29, 37), 3, (16, -1)),
    # Window attention reaches a window and a shift beyond the convs: 4 + 2 + 3.
    "swinir": (lambda: SwinIRLite(), (11, 13, 17), (28, 36), 3, (16, -1)),
    "realplksr": (lambda: RealPLKSRLite(), (11, 13, 17), (29, 37), 3, (16, -1)),
    "rife_flow": (lambda: FlowLite(), (16, 17), (32, 40), 6, None),
    "resize_modes": (lambda: ResizeModes(False), (11, 13, 17), (29, 37), 3, (16, -1)),
    "resize_aligned": (lambda: ResizeModes(True), (11, 13, 17), (29, 37), 3, None),
    "pad_modes": (lambda: PadModes(), (11, 13, 17), (29, 37), 3, (16, -1)),
    "grid_modes": (lambda: GridModes(), (16, 17), (29, 37), 3, None),
    "dense_ops": (lambda: DenseOps(), (11, 13, 17), (29, 37), 3, None),
    "misc_ops": (lambda: MiscOps(), (11, 13, 17), (29, 37), 3, None),
}


def seeded(factory, seed):
    torch.manual_seed(seed)
    net = factory().eval()
    with torch.no_grad():
        for name, p in net.named_parameters():
            if "weight" in name and p.dim() == 1 and p.numel() > 1:  # PReLU slopes, norms: away from defaults
                p.uniform_(0.1, 0.9)
    return net


def main():
    out = sys.argv[1]
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    os.makedirs(out, exist_ok=True)
    cases = []
    for index, (name, (factory, opsets, (h, w), channels, tile)) in enumerate(NETWORKS.items()):
        if only and only not in name:
            continue
        net = seeded(factory, 100 + index)
        if hasattr(net, "deploy"):
            with torch.no_grad():
                net.deploy()
        torch.manual_seed(7 + index)
        x = torch.rand(1, channels, h, w)
        for opset in opsets:
            case = f"{name}_op{opset}"
            path = os.path.join(out, case + ".onnx")
            with torch.no_grad():
                torch.onnx.export(net, x, path, opset_version=opset, input_names=["input"], output_names=["output"],
                                  dynamic_axes={"input": {2: "height", 3: "width"}, "output": {2: "out_h", 3: "out_w"}})
            x.numpy().astype("<f4").tofile(os.path.join(out, case + ".in.f32"))
            # bf16 grids move GridSample's sampling points by up to a third of a pixel on a 37-pixel
            # side (8 bits of mantissa), which nearest mode turns into whole-pixel jumps.
            bf16_db = 25 if name == "grid_modes" else 30
            cases.append({"case": case, "network": name, "opset": opset, "model": case + ".onnx", "input": case + ".in.f32",
                          "bf16_db": bf16_db,
                          "shape": list(x.shape), "tile": tile[0] if tile else 0,
                          "overlap": tile[1] if tile else -1})
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)
    print(f"onnx_cases: {len(cases)} exports in {out}")


if __name__ == "__main__":
    main()
