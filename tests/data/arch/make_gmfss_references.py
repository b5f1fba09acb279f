#!/usr/bin/python3
"""Reference checkpoint and outputs for framelift's native GMFSS (union) interpolator (issue 35).

Runs upstream's own modules (98mxr/GMFSS_union, model/: GMFlow, IFNet_HDv3, MetricNet, FusionNet,
gmfss.Model's reuse + inference) on CPU with seeded weights at narrow widths. Upstream fixes its
widths in code, so the files are loaded with those integer literals changed and nothing else
(see NARROW below). Upstream's softmax splatting is a CUDA kernel only (cupy): model.softsplat is
replaced by softsplat() below, written from the kernel's definition: every source pixel is added
into the four integer pixels around (x + u, y + v) with bilinear weights, non-finite targets are
skipped, and the 'soft' mode splats [in * exp(metric), exp(metric)] and divides by the second plus
1e-7.

Writes, next to this script:
  gmfss-narrow.pth             one merged state dict, keys prefixed flownet., ifnet., metricnet.,
                               fusionnet. (weights stored in fp16, the reference run on those values)
  gmfss-narrow.ref.safetensors the outputs at t = 0.5 and 0.3 on 128x128 crops of frames 30 and 33,
                               the 117x117 crop at t = 0.5 (reflect-padded right and bottom to 128,
                               as framelift pads, cropped back), GMFlow's flow from frame 30 to 33, sums of the
                               input frames (the test remakes them with ffmpeg and checks them), and
                               a small splatting case for the splat alone

Usage: tests/data/arch/make_gmfss_references.py /path/to/GMFSS_union
"""
import importlib.util
import os
import re
import subprocess
import sys
import types

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
from make_references import seeded, write_safetensors, HERE  # noqa: E402

MEGAMIND = "/usr/share/doc/opencv-doc/examples/data/Megamind.avi"


def frame(w, h, n):
    """tests/models/arch_support.cpp's real_frame: the even crop before RGB conversion, cut back."""
    ew, eh = w + w % 2, h + h % 2
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", MEGAMIND, "-vf", f"select=eq(n\\,{n}),crop={ew}:{eh}:260:180",
         "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"], check=True, capture_output=True).stdout
    a = np.frombuffer(raw, dtype=np.uint8).reshape(eh, ew, 3)[:h, :w]
    return torch.from_numpy(a.copy()).permute(2, 0, 1).unsqueeze(0).float() / 255.0


def splat_sum(inp, flow):
    """Forward warping by summation, from the definition of upstream's softsplat_out kernel."""
    n, c, h, w = inp.shape
    x = torch.arange(w, dtype=torch.float32).view(1, 1, w) + flow[:, 0]
    y = torch.arange(h, dtype=torch.float32).view(1, h, 1) + flow[:, 1]
    finite = torch.isfinite(x) & torch.isfinite(y)
    x = torch.where(finite, x, torch.zeros_like(x))
    y = torch.where(finite, y, torch.zeros_like(y))
    x0, y0 = torch.floor(x), torch.floor(y)
    x1, y1 = x0 + 1, y0 + 1
    corners = [(x0, y0, (x1 - x) * (y1 - y)), (x1, y0, (x - x0) * (y1 - y)),
               (x0, y1, (x1 - x) * (y - y0)), (x1, y1, (x - x0) * (y - y0))]
    out = torch.zeros(n, c, h * w)
    for cx, cy, weight in corners:
        ok = finite & (cx >= 0) & (cx < w) & (cy >= 0) & (cy < h)
        index = (cy.clamp(0, h - 1) * w + cx.clamp(0, w - 1)).long()
        for b in range(n):
            sel = ok[b].flatten()
            src = (inp[b].reshape(c, -1) * weight[b].flatten())[:, sel]
            out[b].index_add_(1, index[b].flatten()[sel], src)
    return out.view(n, c, h, w)


def softsplat(tenIn, tenFlow, tenMetric, strMode):
    assert strMode == "soft"
    e = tenMetric.exp()
    out = splat_sum(torch.cat([tenIn * e, e], 1), tenFlow)
    return out[:, :-1] / (out[:, -1:] + 0.0000001)


# Upstream's width literals, per file, and what the narrow reference uses instead.
NARROW = {
    "model/gmflow/backbone.py": [("feature_dims = [64, 96, 128]", "feature_dims = [12, 16, 24]")],
    "model/gmflow/gmflow.py": [("feature_channels, 256, 3", "feature_channels, 24, 3"), ("nn.Conv2d(256, upsample", "nn.Conv2d(24, upsample")],
    "model/IFNet_HDv3.py": [("IFBlock(7, c=192)", "IFBlock(7, c=12)"), ("IFBlock(8+4, c=128)", "IFBlock(8+4, c=10)"),
                            ("IFBlock(8+4, c=96)", "IFBlock(8+4, c=12)"), ("IFBlock(8+4, c=64)", "IFBlock(8+4, c=8)")],
    "model/MetricNet.py": [(r"\b64\b", "12")],
    "model/FusionNet.py": [(r"\b(32|64|96|128)\b", lambda m: {"32": "6", "64": "12", "96": "16", "128": "24"}[m.group(1)])],
}


def load_upstream(root):
    sys.modules["cupy"] = types.ModuleType("cupy")
    for pkg in ("model", "model.gmflow"):
        m = types.ModuleType(pkg)
        m.__path__ = [os.path.join(root, *pkg.split("."))]
        sys.modules[pkg] = m
    sys.modules["model.softsplat"] = types.SimpleNamespace(softsplat=softsplat)
    # Upstream moves its constant tensors to CUDA; on CPU that is the identity.
    torch.Tensor.cuda = lambda self, *a, **k: self
    order = ["gmflow/position", "gmflow/utils", "gmflow/geometry", "gmflow/matching", "gmflow/trident_conv",
             "gmflow/backbone", "gmflow/transformer", "gmflow/gmflow", "warplayer", "IFNet_HDv3", "MetricNet",
             "FusionNet", "gmfss"]
    for rel in order:
        path = f"model/{rel}.py"
        with open(os.path.join(root, path)) as f:
            text = f.read()
        for pattern, repl in NARROW.get(path, []):
            new = re.sub(pattern, repl, text) if pattern.startswith("\\b") else text.replace(pattern, repl)
            assert new != text, (path, pattern)
            text = new
        name = "model." + rel.replace("/", ".")
        module = types.ModuleType(name)
        module.__package__ = name.rsplit(".", 1)[0]
        module.__file__ = os.path.join(root, path)
        sys.modules[name] = module
        exec(compile(text, module.__file__, "exec"), module.__dict__)
    return sys.modules["model.gmfss"], sys.modules["model.gmflow.gmflow"]


class Whole(torch.nn.Module):
    """The four networks as one module whose state dict is the merged file's."""

    def __init__(self, gmfss, gmflow):
        super().__init__()
        self.flownet = gmflow.GMFlow(feature_channels=32, num_transformer_layers=2, ffn_dim_expansion=2)
        self.ifnet = sys.modules["model.IFNet_HDv3"].IFNet()
        self.metricnet = sys.modules["model.MetricNet"].MetricNet()
        self.fusionnet = sys.modules["model.FusionNet"].AnimeInterp()
        self.model = gmfss.Model.__new__(gmfss.Model)
        for k in ("flownet", "ifnet", "metricnet", "fusionnet"):
            setattr(self.model, k, getattr(self, k))

    def reseed(self, name, p, g):
        # LayerNorms near 1 as trained ones are (fan-in seeding gives 0.1), and the last layer of
        # the fusion around mid-grey so that most of the clamped output is inside (0, 1).
        if "norm" in name and name.endswith("weight") and p.dim() == 1:
            p.add_(1.0)
        if name == "fusionnet.synnet.residual_model_tail.conv_last.bias":
            p.add_(0.5)

    def forward(self, a, b, t):
        reuse = self.model.reuse(a, b, 1.0)
        return self.model.inference(a, b, reuse, t), reuse


def main():
    root = sys.argv[1]
    gmfss, gmflow = load_upstream(root)
    torch.set_num_threads(1)
    net = seeded(Whole(gmfss, gmflow), 3501).eval()
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(p.half().float())
    a, b = frame(128, 128, 30), frame(128, 128, 33)
    with torch.no_grad():
        half, reuse = net(a, b, 0.5)
        t03, _ = net(a, b, 0.3)
        oa, ob = frame(117, 117, 30), frame(117, 117, 33)
        pad = lambda x: torch.nn.functional.pad(x, (0, 11, 0, 11), mode="reflect")
        odd, _ = net(pad(oa), pad(ob), 0.5)
    g = torch.Generator().manual_seed(3502)
    # The splat alone: odd sizes, flows out of the frame, whole-pixel flows (ties of the floor),
    # several sources onto one target, a non-finite flow.
    sin = torch.randn(2, 3, 7, 9, generator=g)
    sflow = torch.randn(2, 2, 7, 9, generator=g) * 3
    sflow[0, :, :3, :3] = torch.tensor([2.0, -1.0]).view(2, 1, 1)
    sflow[1, 0, 0, :] = 20.0
    sflow[1, 1, 6, :] = -9.5
    sflow[0, 0, 5, 5] = float("inf")
    smetric = torch.randn(2, 1, 7, 9, generator=g)
    sout = softsplat(sin, sflow, smetric, "soft")
    inside = ((half > 0) & (half < 1)).float().mean().item()
    tensors = {"t0.5": half, "t0.3": t03, "odd_t0.5": odd[:, :, :117, :117],
               "flow01": reuse[0],
               "img_sums": torch.stack([a.sum(), b.sum(), oa.sum(), ob.sum()]),
               "splat_in": sin, "splat_flow": sflow, "splat_metric": smetric, "splat_out": sout}
    state = {k: v.half() for k, v in net.state_dict().items() if not k.startswith("model.")}
    torch.save(state, os.path.join(HERE, "gmfss-narrow.pth"))
    write_safetensors(os.path.join(HERE, "gmfss-narrow.ref.safetensors"), tensors)
    print(f"gmfss-narrow: {sum(v.numel() for v in state.values())} weights, t0.5 range [{half.min():.3f}, "
          f"{half.max():.3f}], {inside:.0%} inside (0, 1), flow01 range [{reuse[0].min():.2f}, {reuse[0].max():.2f}], "
          f"t0.3 vs t0.5 max diff {(t03 - half).abs().max():.3f}")


if __name__ == "__main__":
    main()
