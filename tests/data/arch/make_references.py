#!/usr/bin/python3
"""Reference checkpoints and outputs for framelift's native architectures (issue 18).

Runs the upstream implementations outside the project: the architecture code comes from a
checkout of chaiNNer-org/spandrel (or an author's repository) given on the command line, and
nothing of it is copied here. For each small configuration it builds the upstream module with
seeded random weights in the upstream key layout, runs it in float32 on CPU (Debian's
python3-torch, the libtorch framelift links) on a crop of a real frame (Megamind.avi, frame 30,
the crop tests/models/arch_support.cpp's real_frame makes), and writes, next to this script:

  NAME.pth             the state dict, as torch.save writes it (what users hold)
  NAME.ref.safetensors "input" [1, C, H, W] and "output" [1, C, sH, sW], float32

Usage: tests/data/arch/make_references.py /path/to/spandrel [NAME ...]
"""
import json
import os
import struct
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
MEGAMIND = "/usr/share/doc/opencv-doc/examples/data/Megamind.avi"


def real_frame(w, h, frame=30):
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", MEGAMIND, "-vf", f"select=eq(n\\,{frame}),format=rgb24,crop={w}:{h}:260:180",
         "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        check=True, capture_output=True).stdout
    a = np.frombuffer(raw, dtype=np.uint8).reshape(h, w, 3)
    return torch.from_numpy(a.copy()).permute(2, 0, 1).unsqueeze(0).float() / 255.0


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        data = t.detach().contiguous().float().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def seeded(module, seed):
    """Every parameter and buffer drawn from one seed, scaled like a trained net's (fan-in)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            fan_in = p[0].numel() if p.dim() > 1 else 1
            p.copy_(torch.randn(p.shape, generator=g) * (1.0 / fan_in) ** 0.5 * (1 if p.dim() > 1 else 0.1))
            for prefix, factor in getattr(module, "scale_after_seeding", {}).items():
                if name.startswith(prefix) and name.endswith("weight"):
                    p.mul_(factor)
    return module


def spandrel_arch(spandrel, relative):
    """One architecture file of spandrel, loaded alone: the package's __init__ wants packages
    (safetensors, ...) Debian does not have, and the arch files need only spandrel.util's
    hyper-parameter decorator, which records arguments and changes nothing in the network."""
    import importlib.util
    import types
    util = types.ModuleType("spandrel.util")
    util.store_hyperparameters = lambda **_: (lambda cls: cls)
    sys.modules.setdefault("spandrel", types.ModuleType("spandrel"))
    sys.modules["spandrel.util"] = util
    architectures = os.path.join(spandrel, "libs", "spandrel", "spandrel", "architectures")

    def load(name, path):
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    # Arch files import shared layers (DySample, ...) by absolute name from __arch_helpers:
    # those resolve to the checkout's own files, each loaded alone as the arch file is.
    helpers = os.path.join(architectures, "__arch_helpers")
    for package in ("spandrel.architectures", "spandrel.architectures.__arch_helpers"):
        sys.modules.setdefault(package, types.ModuleType(package))
    for file in sorted(os.listdir(helpers)):
        name = "spandrel.architectures.__arch_helpers." + file[:-3]
        if file.endswith(".py") and file != "__init__.py" and name not in sys.modules:
            try:
                load(name, os.path.join(helpers, file))
            except ImportError:
                pass  # a helper needing what Debian lacks; the archs used here do not import it
    return load(relative.replace("/", "_"), os.path.join(architectures, relative))


def span_configs(spandrel):
    SPAN = spandrel_arch(spandrel, "SPAN/__arch/span.py").SPAN

    def normalised(**kw):
        # A trained SPAN's stem absorbs the x255 of its input normalisation; random weights do not,
        # and their activations would reach the hundreds, which no trained network has.
        model = SPAN(**kw)
        model.scale_after_seeding = {"conv_1.": 1 / 255.0}
        return model

    return {
        # feature_channels 16 (published: 48, 52), x2, with the input normalisation
        "span-f16-x2": (lambda: normalised(num_in_ch=3, num_out_ch=3, feature_channels=16, upscale=2), 1801, (37, 29)),
        # without normalisation (a no_norm buffer in the dict), x4
        "span-f8-x4-nonorm": (lambda: SPAN(num_in_ch=3, num_out_ch=3, feature_channels=8, upscale=4, norm=False),
                              1802, (23, 19)),
    }


def plksr_configs(spandrel):
    PLKSR = spandrel_arch(spandrel, "PLKSR/__arch/PLKSR.py").PLKSR
    RealPLKSR = spandrel_arch(spandrel, "PLKSR/__arch/RealPLKSR.py").RealPLKSR
    return {
        # PLKSR (published: dim 64, 28 blocks, kernel 17; tiny: 12 blocks, kernel 13), CCM, x2
        "plksr-d16-x2": (lambda: PLKSR(dim=16, n_blocks=3, upscaling_factor=2, kernel_size=17), 1901, (37, 29)),
        # the ICCM mixer, no element-wise attention, kernel 13, x4
        "plksr-d16-x4-iccm-noea": (lambda: PLKSR(dim=16, n_blocks=2, upscaling_factor=4, ccm_type="ICCM",
                                                 kernel_size=13, use_ea=False), 1902, (23, 19)),
        # the DCCM mixer with the rectangular sparse large kernel (the paper's ablation), x3
        "plksr-d16-x3-dccm-rect": (lambda: PLKSR(dim=16, n_blocks=2, upscaling_factor=3, ccm_type="DCCM",
                                                 kernel_size=15, lk_type="RectSparsePLK"), 1903, (31, 21)),
        # RealPLKSR with its default GroupNorm (statistics of the whole frame), x2
        "realplksr-d16-x2": (lambda: RealPLKSR(dim=16, n_blocks=3, upscaling_factor=2), 1911, (37, 29)),
        # with the per-pixel LayerNorm instead, x4
        "realplksr-d16-x4-ln": (lambda: RealPLKSR(dim=16, n_blocks=2, upscaling_factor=4, layer_norm=True),
                                1912, (23, 19)),
        # LayerNorm and the DySample upsampler, x2 (4 offset groups)
        "realplksr-d16-x2-ln-dysample": (lambda: RealPLKSR(dim=16, n_blocks=2, upscaling_factor=2, layer_norm=True,
                                                           dysample=True), 1913, (37, 29)),
        # GroupNorm and DySample at x3 (3 groups: odd scales), x1 with LayerNorm (no end conv)
        "realplksr-d16-x3-dysample": (lambda: RealPLKSR(dim=16, n_blocks=2, upscaling_factor=3, dysample=True),
                                      1914, (31, 21)),
        "realplksr-d16-x1-ln": (lambda: RealPLKSR(dim=16, n_blocks=2, upscaling_factor=1, layer_norm=True),
                                1915, (37, 29)),
    }


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    spandrel = sys.argv[1]
    configs = {}
    configs.update(span_configs(spandrel))
    configs.update(plksr_configs(spandrel))
    wanted = sys.argv[2:] or list(configs)
    torch.set_num_threads(1)
    for name in wanted:
        make, seed, (w, h) = configs[name]
        model = seeded(make(), seed).eval()
        x = real_frame(w, h)
        with torch.no_grad():
            y = model(x)
        torch.save(model.state_dict(), os.path.join(HERE, name + ".pth"))
        write_safetensors(os.path.join(HERE, name + ".ref.safetensors"), {"input": x, "output": y})
        print(f"{name}: input {list(x.shape)} output {list(y.shape)} range [{y.min():.3f}, {y.max():.3f}]")


if __name__ == "__main__":
    main()
