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

Usage: tests/data/arch/make_references.py [--vs-rife /path/to/vs-rife] [--srformer /path/to/SRFormer]
       [--ifrnet /path/to/IFRNet] [--film /path/to/frame-interpolation-pytorch] [--style /path/to/pytorch-examples]
       /path/to/spandrel [NAME ...]
       tests/data/arch/make_references.py [--ifrnet ...] [--film ...] [--style ...] [NAME ...]
(the RIFE references come from HolyWu/vs-rife's per-version IFNet files, Practical-RIFE's networks;
the SRFormer ones from a checkout of HVision-NKU/SRFormer; the IFRNet ones from ltkong218/IFRNet;
the FILM ones from dajes/frame-interpolation-pytorch, the PyTorch port of google-research/frame-interpolation;
the fast neural style one from pytorch/examples' fast_neural_style)
"""
import json
import math
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
            if hasattr(module, "reseed"):
                module.reseed(name, p, g)
            for prefix, factor in getattr(module, "scale_after_seeding", {}).items():
                if name.startswith(prefix) and name.endswith("weight"):
                    p.mul_(factor)
    if hasattr(module, "after_seeding"):
        module.after_seeding()
    return module


def einops_rearrange(x, pattern, **sizes):
    """einops.rearrange for the grouping-and-permuting patterns spandrel's arch files use
    ("b (nc ch owh oww) nw -> nc (b nw) (owh oww) ch"): Debian packages no einops. Split every
    input group into its names, permute to the output's order, merge the output's groups. A "1"
    on the output side is a new axis of size 1 (SCUNet's "h p q -> h 1 1 p q")."""
    def groups(side):
        out, depth = [], None
        for token in side.replace("(", " ( ").replace(")", " ) ").split():
            if token == "(":
                depth = []
            elif token == ")":
                out.append(depth)
                depth = None
            elif depth is not None:
                depth.append(token)
            else:
                out.append([token])
        return out
    left, right = (groups(side) for side in pattern.split("->"))
    dims = dict(sizes, **{"1": 1})
    for group, size in zip(left, x.shape):
        unknown = [n for n in group if n not in dims]
        known = 1
        for n in group:
            known *= dims.get(n, 1)
        if len(unknown) == 1:
            dims[unknown[0]] = size // known
    names = [n for g in left for n in g]
    x = x.reshape([dims[n] for n in names])
    order = [n for g in right for n in g if n != "1"]
    x = x.permute([names.index(n) for n in order])
    shape = []
    for g in right:
        size = 1
        for n in g:
            size *= dims[n]
        shape.append(size)
    return x.reshape(shape)


def spandrel_arch(spandrel, relative):
    """One architecture file of spandrel, imported as part of its package but without running
    the package's __init__ files: those want packages (safetensors, ...) Debian does not have.
    The arch files need spandrel.util's hyper-parameter decorator, which records arguments and
    changes nothing in the network (stubbed), spandrel.util.timm (the real one) and the helpers
    next to them (the real ones, by relative import)."""
    import importlib
    import types
    root = os.path.join(spandrel, "libs", "spandrel", "spandrel")

    def package(name, path):
        if name not in sys.modules:
            m = types.ModuleType(name)
            m.__path__ = [path]
            sys.modules[name] = m
        return sys.modules[name]

    try:
        import einops  # noqa: F401
    except ImportError:
        sys.modules["einops"] = types.ModuleType("einops")
        sys.modules["einops"].rearrange = einops_rearrange
        # einops.layers.torch.Rearrange: the same rearrange as a module (DAT's before_RG).
        class Rearrange(torch.nn.Module):
            def __init__(self, pattern, **sizes):
                super().__init__()
                self.pattern, self.sizes = pattern, sizes

            def forward(self, x):
                return einops_rearrange(x, self.pattern, **self.sizes)
        sys.modules["einops.layers"] = types.ModuleType("einops.layers")
        sys.modules["einops.layers.torch"] = types.ModuleType("einops.layers.torch")
        sys.modules["einops.layers.torch"].Rearrange = Rearrange
    package("spandrel", root)
    util = package("spandrel.util", os.path.join(root, "util"))
    util.store_hyperparameters = lambda **_: (lambda cls: cls)
    package("spandrel.architectures", os.path.join(root, "architectures"))
    folder = relative.split("/")[0]
    package(f"spandrel.architectures.{folder}", os.path.join(root, "architectures", folder))
    return importlib.import_module("spandrel.architectures." + relative[: -len(".py")].replace("/", "."))


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


def swinir_configs(spandrel):
    SwinIR = spandrel_arch(spandrel, "SwinIR/__arch/SwinIR.py").SwinIR

    def swinir(**kw):
        # img_size (the training crop) only sizes the stored shift masks: two windows keep them small.
        kw = dict(dict(img_size=16, in_chans=3, mlp_ratio=2.0, qkv_bias=True, drop_path_rate=0.0,
                       ape=False, patch_norm=True, img_range=1.0), **kw)
        model = SwinIR(**kw)
        def reseed(name, p, g):
            # LayerNorm scales around 1 and position biases of a few tenths, as trained ones.
            if ".norm" in "." + name and name.endswith("weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith("relative_position_bias_table"):
                p.copy_(0.2 * torch.randn(p.shape, generator=g))
        model.reseed = reseed
        return model

    return {
        # classical SR (published: embed 180, 6 layers of 6 blocks, 6 heads, window 8, x2/3/4/8)
        "swinir-classical-x2": (lambda: swinir(embed_dim=24, depths=[2, 2], num_heads=[2, 2], window_size=8,
                                               upscale=2, upsampler="pixelshuffle"), 1811, (37, 29)),
        # lightweight SR (published: embed 60, 4 layers of 6, 6 heads, pixelshuffledirect), x3
        "swinir-light-x3": (lambda: swinir(embed_dim=12, depths=[2, 2, 2], num_heads=[3, 3, 3], window_size=8,
                                           upscale=3, upsampler="pixelshuffledirect"), 1812, (27, 21)),
        # real-world SR (published: embed 180 or 240 with 3conv, nearest+conv, x4)
        "swinir-real-x4-3conv": (lambda: swinir(embed_dim=16, depths=[2], num_heads=[2], window_size=8, upscale=4,
                                                upsampler="nearest+conv", resi_connection="3conv"), 1813, (21, 19)),
        # JPEG artifact reduction (published: window 7, img_range 255, gray or colour), scale 1
        "swinir-jpeg-w7": (lambda: swinir(embed_dim=16, depths=[2], num_heads=[2], window_size=7, upscale=1,
                                          upsampler="", img_range=255.0, img_size=14), 1814, (30, 22)),
    }


def scunet_configs(spandrel):
    SCUNet = spandrel_arch(spandrel, "SCUNet/__arch/SCUNet.py").SCUNet

    def scunet(head_dim, **kw):
        class NarrowHeads(SCUNet):
            # Upstream fixes head_dim at 32, so its narrowest level has 32 transformer channels and
            # the smallest network is 70 MB. Narrower heads keep the layout (heads = channels /
            # head_dim, read back from relative_position_params) at a size fit to commit.
            def __setattr__(self, name, value):
                super().__setattr__(name, head_dim if name == "head_dim" else value)

        model = NarrowHeads(input_resolution=256, drop_path_rate=0.0, **kw)

        def reseed(name, p, g):
            # LayerNorm scales around 1 and position biases of a few tenths, as trained ones.
            if (".ln1." in name or ".ln2." in name) and name.endswith("weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith("relative_position_params"):
                p.copy_(0.2 * torch.randn(p.shape, generator=g))
        model.reseed = reseed
        # Random residual branches at fan-in scale grow the signal at each block and skip of the
        # U-Net (to hundreds); trained ones add small corrections. Each block's output 1x1 is damped.
        model.scale_after_seeding = {n[: -len("weight")]: 0.25 for n, _ in model.named_parameters()
                                     if n.endswith("conv1_2.weight")}
        return model

    return {
        # colour (published: in_nc 3, dim 64, head_dim 32, config [4] * 7, window 8): dim 8, two
        # blocks a level (a plain and a shifted window each); odd sizes, reflect-padded to 64 inside
        "scunet-color-d8": (lambda: scunet(4, in_nc=3, config=[2, 2, 2, 2, 2, 2, 2], dim=8), 1861, (75, 53)),
        # grey (in_nc 1), twice the heads (head_dim 2), uneven stacks: an odd count leaves a level's
        # last block unshifted
        "scunet-gray-d8-h2": (lambda: scunet(2, in_nc=1, config=[1, 2, 1, 1, 3, 2, 1], dim=8), 1862, (45, 37), "grey"),
    }


def swin2sr_configs(spandrel):
    Swin2SR = spandrel_arch(spandrel, "Swin2SR/__arch/Swin2SR.py").Swin2SR

    def swin2sr(**kw):
        # img_size (the training crop) only sizes the stored shift masks: two windows keep them small.
        kw = dict(dict(img_size=16, in_chans=3, mlp_ratio=2.0, qkv_bias=True, drop_path_rate=0.0,
                       ape=False, patch_norm=True, img_range=1.0), **kw)
        model = Swin2SR(**kw)

        def reseed(name, p, g):
            # Post-norm: each block's norms scale what it adds (trained ones start at zero and stay
            # small); the embedding's and the body's norms around 1; logit scales near upstream's
            # log(10) start.
            if name.endswith("norm1.weight") or name.endswith("norm2.weight"):
                p.copy_(0.3 + 0.05 * torch.randn(p.shape, generator=g))
            elif ".norm" in "." + name and name.endswith("weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith("logit_scale"):
                p.copy_(math.log(10) + 0.3 * torch.randn(p.shape, generator=g))
        model.reseed = reseed
        return model

    return {
        # classical SR (published: embed 180, 6 layers of 6 blocks, 6 heads, window 8, x2/x4)
        "swin2sr-classical-x2": (lambda: swin2sr(embed_dim=16, depths=[2, 2], num_heads=[2, 2], window_size=8,
                                                 upscale=2, upsampler="pixelshuffle"), 1871, (37, 29)),
        # lightweight SR (published: embed 60, 4 layers of 6, pixelshuffledirect), x3
        "swin2sr-light-x3": (lambda: swin2sr(embed_dim=12, depths=[2, 2, 2], num_heads=[3, 3, 3], window_size=8,
                                             upscale=3, upsampler="pixelshuffledirect"), 1872, (27, 21)),
        # real-world SR (published: embed 180, nearest+conv, x4), with "3conv"
        "swin2sr-real-x4-3conv": (lambda: swin2sr(embed_dim=16, depths=[2], num_heads=[2], window_size=8, upscale=4,
                                                  upsampler="nearest+conv", resi_connection="3conv"), 1873, (21, 19)),
        # JPEG artifact reduction (published: window 7, img_range 255), scale 1
        "swin2sr-jpeg-w7": (lambda: swin2sr(embed_dim=16, depths=[2], num_heads=[2], window_size=7, upscale=1,
                                            upsampler="", img_range=255.0, img_size=14), 1874, (30, 22)),
    }


class NoiseLevelInput(torch.nn.Module):
    """DRUNet's calling convention (spandrel's DRUNet wrapper): the image plus a plane of the noise
    level sigma / 255 as one more input channel. The state dict is the network's own."""

    def __init__(self, net, sigma):
        super().__init__()
        self.net, self.sigma = net, sigma

    def forward(self, x, sigma=None):
        level = torch.full_like(x[:, :1], (self.sigma if sigma is None else sigma) / 255.0)
        return self.net(torch.cat([x, level], 1))


def drunet_configs(spandrel):
    DRUNet = spandrel_arch(spandrel, "DRUNet/__arch/network_unet.py").DRUNet

    def drunet(**kw):
        # published: nc [64, 128, 256, 512], nb 4, strideconv down, convtranspose up, no biases
        model = NoiseLevelInput(DRUNet(act_mode="R", downsample_mode="strideconv", upsample_mode="convtranspose", **kw), 15)
        # Random residual branches at fan-in scale grow the signal at each of the 7 nb blocks on
        # the path; trained ones add small corrections. Their second convolutions are damped.
        nb = kw["nb"]
        blocks = [f"m_{p}.{i}" for p in ("down1", "down2", "down3", "body") for i in range(nb)]
        blocks += [f"m_{p}.{i}" for p in ("up3", "up2", "up1") for i in range(1, nb + 1)]
        model.scale_after_seeding = {f"net.{b}.res.2.": 0.25 for b in blocks}
        return model

    return {
        # colour (in_nc 4: RGB and the noise plane), upstream's default sigma 15; inputs are
        # multiples of 8 (DRUNet does not pad itself; spandrel asks for multiple_of=8).
        "drunet-color-nc8": (lambda: drunet(in_nc=4, out_nc=3, nc=[8, 16, 32, 48], nb=2), 1831, (40, 32), "drunet"),
    }


def nafnet_configs(spandrel):
    NAFNet = spandrel_arch(spandrel, "NAFNet/__arch/NAFNet_arch.py").NAFNet

    def nafnet(**kw):
        model = NAFNet(**kw)
        def reseed(name, p, g):
            # LayerNorm2d scales around 1; beta and gamma (zero at init) of a few tenths, as trained.
            if (".norm1." in name or ".norm2." in name) and name.endswith("weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith(".beta") or name.endswith(".gamma"):
                p.copy_(0.3 * torch.randn(p.shape, generator=g))
        model.reseed = reseed
        return model

    return {
        # published: width 32 or 64, SIDD enc [2, 2, 4, 8] middle 12 dec [2, 2, 2, 2], GoPro/REDS
        # enc [1, 1, 1, 28] middle 1 dec [1, 1, 1, 1]. NAFNet zero-pads to 2^levels itself: odd sizes.
        "nafnet-w8": (lambda: nafnet(img_channel=3, width=8, middle_blk_num=1, enc_blk_nums=[1, 2], dec_blk_nums=[1, 1]),
                      1841, (37, 29)),
    }


class QualityFactorOutput(torch.nn.Module):
    """FBCNN with its quality-factor MLPs narrowed to `hidden` (upstream hard-codes 512, which
    alone would make the file 4 MB; the layer structure and indices stay upstream's), returning
    upstream's (image, qf) pair."""

    def __init__(self, net, nb, nc, hidden):
        super().__init__()
        lin = torch.nn.Linear
        net.qf_pred[nb + 2], net.qf_pred[nb + 4], net.qf_pred[nb + 6] = lin(nc[3], hidden), lin(hidden, hidden), lin(hidden, 1)
        net.qf_embed[0], net.qf_embed[2], net.qf_embed[4] = lin(1, hidden), lin(hidden, hidden), lin(hidden, hidden)
        for level, c in ((3, nc[2]), (2, nc[1]), (1, nc[0])):
            getattr(net, f"to_gamma_{level}")[0] = lin(hidden, c)
            getattr(net, f"to_beta_{level}")[0] = lin(hidden, c)
        self.net = net

    def forward(self, x, qf_input=None):
        return self.net(x, qf_input)


def fbcnn_configs(spandrel):
    FBCNN = spandrel_arch(spandrel, "FBCNN/__arch/FBCNN.py").FBCNN

    def fbcnn(nc, nb, hidden):
        # published: colour or grey, nc [64, 128, 256, 512], nb 4, qf MLPs 512 wide
        net = FBCNN(in_nc=3, out_nc=3, nc=nc, nb=nb, act_mode="R", downsample_mode="strideconv",
                    upsample_mode="convtranspose")
        model = QualityFactorOutput(net, nb, nc, hidden)
        # As DRUNet's: the residual branches' second convolutions damped, as trained ones are.
        blocks = [f"m_{p}.{i}" for p in ("down1", "down2", "down3", "body_encoder", "body_decoder") for i in range(nb)]
        blocks += [f"qf_pred.{i}" for i in range(nb)]
        blocks += [f"m_{p}.{i}" for p in ("up3", "up2", "up1") for i in range(1, nb + 1)]
        model.scale_after_seeding = {f"net.{b}.res.2.": 0.25 for b in blocks}
        return model

    return {
        # FBCNN replicate-pads to 8 itself: odd sizes.
        "fbcnn-nc8": (lambda: fbcnn([8, 16, 24, 32], 2, 32), 1851, (37, 29), "fbcnn"),
    }


def vsrife_module(vsrife, version):
    """One IFNet file of HolyWu/vs-rife (Practical-RIFE's networks, one file per version),
    imported as part of its package without the package's __init__ (which wants VapourSynth)."""
    import importlib
    import types
    if "vsrife" not in sys.modules:
        package = types.ModuleType("vsrife")
        package.__path__ = [os.path.join(vsrife, "vsrife")]
        sys.modules["vsrife"] = package
    return importlib.import_module("vsrife.IFNet_HDv3_v" + version)


class RifeReference(torch.nn.Module):
    """vs-rife's calling convention around its IFNet: the features of both frames from the
    network's own encoder, the sampling grid and the flow divisor for the padded size, and a
    timestep plane. Inputs are already multiples of the version's modulo (no padding)."""

    def __init__(self, net, widths, features):
        super().__init__()
        m = sys.modules[type(net).__module__]
        block0_in, rest_in = 7 + 2 * features, 8 + 4 + 2 * features + 8
        for i in range(5):
            if hasattr(net, f"block{i}"):
                delattr(net, f"block{i}")
        for i, c in enumerate(widths):
            setattr(net, f"block{i}", m.IFBlock(block0_in if i == 0 else rest_in, c=c))
        self.net = net
        self.blocks = len(widths)

    def forward(self, img0, img1, t):
        n, _, h, w = img0.shape
        div = torch.tensor([(w - 1.0) / 2.0, (h - 1.0) / 2.0])
        gx = torch.linspace(-1.0, 1.0, w).view(1, 1, 1, w).expand(n, -1, h, -1)
        gy = torch.linspace(-1.0, 1.0, h).view(1, 1, h, 1).expand(n, -1, -1, w)
        grid = torch.cat([gx, gy], 1)
        timestep = torch.full([n, 1, h, w], t)
        return self.net(img0, img1, timestep, div, grid, self.net.encode(img0), self.net.encode(img1))


def rife_configs(vsrife):
    def rife(version, widths, features, scale_list=None):
        def make():
            m = vsrife_module(vsrife, version)
            net = m.IFNet()
            if scale_list is not None:
                net.scale_list = scale_list
            return RifeReference(net, widths, features)
        return make

    return {
        # 4.22's layout (encoder 32 -> 8 features, 4 blocks at 1/8..1/1) with narrow blocks
        # (published 256/192/96/48), on 96x64 frames (4.22 pads to 32).
        "rife-4.22-narrow": (rife("4_22", [48, 32, 24, 16], 8), 1821, (96, 64), "rife"),
        # 4.25's (encoder 16 -> 4 features, 5 blocks at 1/16..1/1; published 192/128/96/64/32), 128x64.
        "rife-4.25-narrow": (rife("4_25", [32, 24, 16, 16, 8], 4), 1822, (128, 64), "rife"),
    }


def ifrnet_module(ifrnet, variant):
    """One of ltkong218/IFRNet's models/IFRNet{,_S,_L}.py. Their utils.py imports imageio and PIL
    for its file readers, which the network never calls (Debian's python3-torch brings neither):
    stubbed unless installed."""
    import importlib
    import types
    for name, attrs in {"imageio": ["imread", "imwrite", "mimsave"], "PIL": ["Image", "ImageFile"]}.items():
        try:
            importlib.import_module(name)
        except ImportError:
            stub = types.ModuleType(name)
            for a in attrs:
                setattr(stub, a, types.SimpleNamespace(LOAD_TRUNCATED_IMAGES=False))
            sys.modules[name] = stub
    if ifrnet not in sys.path:
        sys.path.insert(0, ifrnet)
    return importlib.import_module("models." + variant)


class IfrnetReference(torch.nn.Module):
    """IFRNet's Model.inference on frames framelift's way: reflection-padded on the right and
    bottom to a multiple of 16 (upstream's four stride-2 levels need it; its benchmarks pad by
    replication or zeros, their own choice per data set), the output cropped back."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def reseed(self, name, p, g):
        # The timestep is one input plane of decoder4's 2 * 96 + 1: at fan-in scale it moves the
        # picture by ~0.002, too little for a test to tell t = 0.3 from 0.5. A trained net leans on it.
        if name == "net.decoder4.convblock.0.0.weight":
            p[:, -1].mul_(40)

    def forward(self, img0, img1, t):
        h, w = img0.shape[2:]
        pad = [0, -w % 16, 0, -h % 16]
        p0, p1 = (torch.nn.functional.pad(x, pad, mode="reflect") for x in (img0, img1))
        embt = torch.tensor(t).float().view(1, 1, 1, 1)
        return self.net.inference(p0, p1, embt)[:, :, :h, :w]


def ifrnet_configs(ifrnet):
    def make(variant):
        return lambda: IfrnetReference(ifrnet_module(ifrnet, variant).Model())

    # The published networks as they are (their widths are fixed in upstream's code: 2.8M, 5.0M
    # and 19.7M weights), on 61x45 crops: odd, padded to 64x48. The weights are stored in fp16
    # (S 5.6 MB, base 10 MB; L's 39 MB is not committed, tests/models/ifrnet_test.cpp checks it
    # when this script has written it), and the reference runs with those rounded values in fp32:
    # the keys and shapes users hold.
    return {
        "ifrnet-s": (make("IFRNet_S"), 1861, (61, 45), "ifrnet", "fp16"),
        "ifrnet-base": (make("IFRNet"), 1862, (61, 45), "ifrnet", "fp16"),
        "ifrnet-l": (make("IFRNet_L"), 1863, (61, 45), "ifrnet", "fp16"),
    }


def film_module(film):
    """dajes/frame-interpolation-pytorch's interpolator.py (FILM's film_net, the port whose releases
    are film_net_fp32.pt and film_net_fp16.pt). Its modules are top-level files (interpolator, util,
    ...), and util.py imports cv2 for an image loader the network never calls (Debian's python3-torch
    brings no OpenCV): stubbed unless installed."""
    import importlib
    import types
    try:
        importlib.import_module("cv2")
    except ImportError:
        sys.modules["cv2"] = types.ModuleType("cv2")
    if film not in sys.path:
        sys.path.insert(0, film)
    return importlib.import_module("interpolator")


class FilmReference(torch.nn.Module):
    """The port's Interpolator as its inference.py calls it: frames in [0, 1] whose sides are
    multiples of 2^(pyramid_levels - 1) (the network pads nothing; upstream's tools zero-pad to 64,
    centred, and crop back) and the timestep as a [1, 1] tensor. The output is not clamped (the
    tools clamp it to [0, 1] afterwards)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, img0, img1, t):
        return self.net(img0, img1, torch.full((1, 1), t))

    def flows(self, img0, img1):
        # The finest level's flows, before the t scaling: forward reads frame 1 from frame 0's
        # pixels, backward frame 0 from frame 1's, channels (dx, dy) in pixels.
        out = self.net.debug_forward(img0, img1, torch.full((1, 1), 0.5))
        return out["forward_flow_pyramid"][0], out["backward_flow_pyramid"][0]


def film_configs(film):
    def make(**kw):
        return lambda: FilmReference(film_module(film).Interpolator(**kw))

    return {
        # The published film_net layout (7 pyramid levels, 5 in the fusion, 3 specialised, cascades
        # of 4, flow convs [3, 3, 3, 3]; filters 64, flow filters [32, 64, 128, 256]: 34.4M weights,
        # 138 MB in fp32) with filters 8 and uneven flow filters (0.57M weights), on 192x128 frames
        # (multiples of 64: the coarsest level is 3x2).
        "film-f8": (make(filters=8, flow_filters=(8, 16, 24, 32)), 2401, (192, 128), "film"),
        # 5 pyramid levels, 4 in the fusion, cascades of 3, 2 specialised, flow convs [2, 3, 3]
        # (multiples of 16: 80x48, the coarsest level 5x3); weights stored in fp16, as
        # film_net_fp16.pt holds them, the reference run with those rounded values in fp32.
        "film-p5-f8-fp16": (make(pyramid_levels=5, fusion_pyramid_levels=4, specialized_levels=2, sub_levels=3,
                                 filters=8, flow_convs=(2, 3, 3), flow_filters=(8, 16, 32)),
                            2402, (80, 48), "film", "fp16"),
    }


class StyleReference(torch.nn.Module):
    """pytorch/examples' TransformerNet as its stylize() runs it: pixels times 255 in, 0-255 out
    (here divided by 255 again). Its output is longer than the input where a side is no multiple
    of 4; that is kept whole (the test compares the input's part)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x * 255) / 255

    def reseed(self, name, p, g):
        # A trained net's scales: instance norms near 1 (fan-in seeding gives 0.1), and a last
        # layer that outputs 0-255 pixels rather than values near 0 (which would make any
        # comparison after the / 255 trivially close).
        if p.dim() == 1 and name.endswith("weight"):
            p.add_(1.0)
        elif name == "net.deconv3.conv2d.weight":
            p.mul_(40.0)
        elif name == "net.deconv3.conv2d.bias":
            p.add_(128.0)


def style_configs(examples):
    """The upstream TransformerNet with narrower layers swapped in (its widths are fixed in its
    constructor; the modules and forward are upstream's): 8/16/32 channels, its five blocks."""
    if os.path.join(examples, "fast_neural_style", "neural_style") not in sys.path:
        sys.path.insert(0, os.path.join(examples, "fast_neural_style", "neural_style"))
    import transformer_net as tn

    def narrow(c1=8, c2=16, c3=32):
        net = tn.TransformerNet()
        net.conv1, net.in1 = tn.ConvLayer(3, c1, 9, 1), torch.nn.InstanceNorm2d(c1, affine=True)
        net.conv2, net.in2 = tn.ConvLayer(c1, c2, 3, 2), torch.nn.InstanceNorm2d(c2, affine=True)
        net.conv3, net.in3 = tn.ConvLayer(c2, c3, 3, 2), torch.nn.InstanceNorm2d(c3, affine=True)
        for i in range(1, 6):
            setattr(net, f"res{i}", tn.ResidualBlock(c3))
        net.deconv1, net.in4 = tn.UpsampleConvLayer(c3, c2, 3, 1, upsample=2), torch.nn.InstanceNorm2d(c2, affine=True)
        net.deconv2, net.in5 = tn.UpsampleConvLayer(c2, c1, 3, 1, upsample=2), torch.nn.InstanceNorm2d(c1, affine=True)
        net.deconv3 = tn.ConvLayer(c1, 3, 9, 1)
        return StyleReference(net)

    # 61x45: no multiple of 4, so upstream's output is 64x48.
    return {"fast_neural_style-w8": (narrow, 3101, (61, 45), "style")}


class LamaReference(torch.nn.Module):
    """spandrel's LaMa (its FFCResNetGenerator, the composite into the frame) at narrower widths:
    the generator's constructor takes them, spandrel's wrapper fixes big-lama's. BatchNorm
    statistics are drawn too (seeded() draws parameters only), so the folded norms are tested."""

    def __init__(self, spandrel, ngf, blocks):
        super().__init__()
        import types
        if "torchvision" not in sys.modules:
            # LaMa.py imports torchvision's rotate for a wrapper big-lama does not use; Debian has
            # no torchvision.
            tv = types.ModuleType("torchvision")
            tv.transforms = types.ModuleType("torchvision.transforms")
            tv.transforms.functional = types.ModuleType("torchvision.transforms.functional")
            tv.transforms.functional.InterpolationMode = types.SimpleNamespace(BILINEAR="bilinear")
            tv.transforms.functional.rotate = None
            sys.modules.update({"torchvision": tv, "torchvision.transforms": tv.transforms,
                                "torchvision.transforms.functional": tv.transforms.functional})
        arch = spandrel_arch(spandrel, "LaMa/__arch/LaMa.py")
        self.net = arch.LaMa()
        self.net.model = arch.FFCResNetGenerator(4, 3, ngf=ngf, n_blocks=blocks)
        g = torch.Generator().manual_seed(ngf * 100 + blocks)
        with torch.no_grad():
            for m in self.net.modules():
                if isinstance(m, torch.nn.BatchNorm2d):
                    m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
                    m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)

        self.tail = f"net.model.model.{len(self.net.model.model) - 2}.weight"

    def reseed(self, name, p, g):
        if p.dim() == 1 and name.endswith("weight"):
            p.add_(1.0)  # norm scales near 1, as trained ones are
        elif name == self.tail:
            p.mul_(8.0)  # a fill that spans 0-1 through the sigmoid, not one near 0.5

    def forward(self, image, mask):
        return self.net(image, mask)


def lama_configs(spandrel):
    # ngf 8: widths 8/16/32 and a 64-channel bottleneck, 16 local and 48 global; two blocks.
    return {"lama-ngf8": (lambda: LamaReference(spandrel, 8, 2), 3201, (64, 48), "lama")}


def ddcolor_configs(spandrel):
    """spandrel_extra_arches' DDColor at narrow widths: its ConvNeXt, U-Net blocks and colour
    decoder are built from upstream's classes with the widths their constructors take
    (ConvNeXt dims 8/16/24/32, depths 1/1/2/1; nf 32; the colour decoder at hidden 32, 8 heads,
    FFN 64, 16 queries, 3 layers; the released models: ConvNeXt-L or -T, nf 512, hidden 256,
    FFN 2048, 100 or 256 queries, 9 layers), the last upsampler weight-normalised as released."""
    import importlib
    import types
    spandrel_arch(spandrel, "SPAN/__arch/span.py")  # the spandrel package stubs (util, timm)
    root = os.path.join(spandrel, "libs", "spandrel_extra_arches", "spandrel_extra_arches")
    for name, path in [("spandrel_extra_arches", root),
                       ("spandrel_extra_arches.architectures", os.path.join(root, "architectures")),
                       ("spandrel_extra_arches.architectures.DDColor", os.path.join(root, "architectures", "DDColor"))]:
        if name not in sys.modules:
            m = types.ModuleType(name)
            m.__path__ = [path]
            sys.modules[name] = m
    dd = importlib.import_module("spandrel_extra_arches.architectures.DDColor.__arch.ddcolor")
    convnext = importlib.import_module("spandrel_extra_arches.architectures.DDColor.__arch.convnext")
    unet = importlib.import_module("spandrel_extra_arches.architectures.DDColor.__arch.unet")

    class NarrowDDColor(dd.DDColor):
        def __init__(self, seed):
            torch.nn.Module.__init__(self)
            torch.manual_seed(seed)  # spectral_norm draws its u and v at construction
            self.num_output_channels, self.input_size, self.do_normalize = 2, (64, 64), False
            enc = dd.Encoder.__new__(dd.Encoder)
            torch.nn.Module.__init__(enc)
            enc.arch = convnext.ConvNeXt(depths=[1, 1, 2, 1], dims=[8, 16, 24, 32])
            enc.encoder_name, enc.hook_names = "narrow", ["norm0", "norm1", "norm2", "norm3"]
            enc.hooks = enc.setup_hooks()
            self.encoder = enc
            self.encoder.eval()
            self.encoder(torch.randn(1, 3, 64, 64))
            self.decoder = dd.Decoder(self.encoder.hooks, nf=32, last_norm="Weight", num_queries=16, num_scales=3, dec_layers=3)
            self.decoder.color_decoder = dd.MultiScaleColorDecoder(
                in_channels=[32, 32, 16], hidden_dim=32, num_queries=16, nheads=8, dim_feedforward=64, dec_layers=3,
                color_embed_dim=16, num_scales=3)
            self.refine_net = torch.nn.Sequential(unet.custom_conv_layer(16 + 3, 2, ks=1, use_activ=False, norm_type=unet.NormType.Spectral))
            self.register_buffer("mean", torch.Tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
            self.register_buffer("std", torch.Tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))
            g = torch.Generator().manual_seed(seed)
            with torch.no_grad():
                for m in self.modules():
                    if isinstance(m, torch.nn.BatchNorm2d):
                        m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
                        m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)

        def reseed(self, name, p, g):
            if p.dim() == 1 and name.endswith("weight"):
                p.add_(1.0)  # norm scales near 1, as trained ones are
            elif name == "decoder.color_decoder.color_embed.layers.2.weight":
                p.mul_(100.0)  # chroma of a trained net's size (a and b of tens), not of a few units

        def after_seeding(self):
            # A trained spectral norm's u and v are its weight's singular vectors (power iteration
            # every training step); the ones drawn at construction belong to other weights, and
            # u . W v of those would be near 0 and the weight huge. Converge them as training does.
            with torch.no_grad():
                for m in self.modules():
                    if hasattr(m, "weight_orig") and hasattr(m, "weight_u"):
                        w = m.weight_orig.reshape(m.weight_orig.shape[0], -1)
                        u, v = m.weight_u, m.weight_v
                        for _ in range(50):
                            v.copy_(torch.nn.functional.normalize(w.t() @ u, dim=0, eps=1e-12))
                            u.copy_(torch.nn.functional.normalize(w @ v, dim=0, eps=1e-12))

    return {"ddcolor-narrow": (lambda: NarrowDDColor(3301), 3301, (64, 64), "ddcolor")}


def hat_configs(spandrel):
    HAT = spandrel_arch(spandrel, "HAT/__arch/HAT.py").HAT

    def hat(**kw):
        kw = dict(dict(img_size=16, in_chans=3, window_size=8, overlap_ratio=0.5, mlp_ratio=2.0, drop_path_rate=0.0,
                       upsampler="pixelshuffle", resi_connection="1conv", num_feat=16), **kw)
        model = HAT(**kw)

        def reseed(name, p, g):
            # LayerNorm scales around 1 and position biases of a few tenths, as trained ones.
            if ".norm" in "." + name and name.endswith("weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith("relative_position_bias_table"):
                p.copy_(0.2 * torch.randn(p.shape, generator=g))
        model.reseed = reseed
        return model

    return {
        # HAT's layout (published: embed 180, 6 groups of 6 blocks, 6 heads, window 16, compress 3,
        # squeeze 30; HAT-S: embed 144, compress 24, squeeze 24) with window 8 and a few blocks, x2.
        "hat-w8-x2": (lambda: hat(embed_dim=24, depths=[2, 2], num_heads=[2, 2], compress_ratio=3, squeeze_factor=6,
                                  upscale=2), 1831, (37, 29)),
        # HAT-S-like ratios, x3, one group of three blocks (an odd block: unshifted again).
        "hat-s-w8-x3": (lambda: hat(embed_dim=24, depths=[3], num_heads=[3], compress_ratio=4, squeeze_factor=4,
                                    upscale=3), 1832, (27, 21)),
    }


def safmn_configs(spandrel):
    SAFMN = spandrel_arch(spandrel, "SAFMN/__arch/safmn.py").SAFMN

    def safmn(**kw):
        model = SAFMN(**kw)

        def reseed(name, p, g):
            if ".norm" in "." + name and name.endswith("weight"):  # LayerNorm scales around 1
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
        model.reseed = reseed
        return model

    return {
        # published: dim 36 (SAFMN), 128 (SAFMN-L), 8 or 16 blocks, ffn 2, x2/x3/x4; inputs are
        # multiples of 8, as spandrel requires
        "safmn-d16-x2": (lambda: safmn(dim=16, n_blocks=2, ffn_scale=2.0, upscaling_factor=2), 1841, (40, 32)),
        "safmn-d12-x4-ffn1.5": (lambda: safmn(dim=12, n_blocks=3, ffn_scale=1.5, upscaling_factor=4), 1842, (24, 16)),
    }


def dat_configs(spandrel):
    module = spandrel_arch(spandrel, "DAT/__arch/DAT.py")

    def dat(num_feat=None, **kw):
        # img_size (the training crop) only sizes the stored shift masks: a few windows keep them small.
        kw = dict(dict(img_size=16, in_chans=3, qkv_bias=True, drop_path_rate=0.0, img_range=1.0), **kw)
        model = module.DAT(**kw)
        if num_feat is not None:
            # Upstream fixes the pixel-shuffle reconstruction at 64 features, whose x3 convolution alone
            # would make the file 1.3 MB; the layer structure stays upstream's, narrowed.
            model.conv_before_upsample[0] = torch.nn.Conv2d(kw["embed_dim"], num_feat, 3, 1, 1)
            model.upsample = module.Upsample(kw["upscale"], num_feat)
            model.conv_last = torch.nn.Conv2d(num_feat, kw["in_chans"], 3, 1, 1)
        norms = {n: m for n, m in model.named_modules() if isinstance(m, (torch.nn.LayerNorm, torch.nn.BatchNorm2d))}

        def reseed(name, p, g):
            # Norm scales around 1, batch statistics of a trained net (else BatchNorm is the identity
            # and its folding goes unchecked), channel-attention temperatures around 1.
            owner = name.rsplit(".", 1)[0]
            if owner in norms and name.endswith("weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
                if isinstance(norms[owner], torch.nn.BatchNorm2d):
                    norms[owner].running_mean.copy_(0.1 * torch.randn(p.shape, generator=g))
                    norms[owner].running_var.copy_(0.5 + torch.rand(p.shape, generator=g))
            elif name.endswith("temperature"):
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g))
        model.reseed = reseed
        return model

    return {
        # DAT-light's layout (published: embed 60, one group of 18 blocks, 6 heads, split 8x32,
        # expansion 2, 3conv, pixelshuffledirect) with three blocks: a spatial, a channel and a
        # shifted spatial block, x2; split 4x16 (the same 1:4 rectangles: 8x32's stored index tables
        # alone would take 2 MB); embed 64 gives the position-bias MLP two channels (DAT-light's one)
        "dat-light-x2": (lambda: dat(embed_dim=64, split_size=[4, 16], depth=[3], num_heads=[4], expansion_factor=2.0,
                                     upscale=2, resi_connection="3conv", upsampler="pixelshuffledirect"), 1861, (37, 29)),
        # DAT-S's layout (published: 6 groups of 6 blocks, embed 180, split 8x16, expansion 2; DAT and
        # DAT-2: split 8x32, expansion 4 and 2) with two groups (the second shifts its first block),
        # split 4x8 (DAT-S's 1:2), expansion 1.5, 1conv, pixelshuffle, x3
        "dat-s-x3": (lambda: dat(embed_dim=48, split_size=[4, 8], depth=[2, 2], num_heads=[4, 4], expansion_factor=1.5,
                                 upscale=3, resi_connection="1conv", upsampler="pixelshuffle", num_feat=16), 1862, (27, 21)),
    }


def atd_configs(spandrel):
    module = spandrel_arch(spandrel, "ATD/__arch/atd_arch.py")

    def atd(num_feat=None, **kw):
        kw = dict(dict(img_size=16, in_chans=3, window_size=8, num_tokens=16, reducted_dim=4, mlp_ratio=2.0, qkv_bias=True,
                       img_range=1.0, resi_connection="1conv"), **kw)
        model = module.ATD(**kw)
        if num_feat is not None:
            # Upstream fixes the pixel-shuffle reconstruction at 64 features; narrowed to keep the file
            # small, the layer structure upstream's.
            model.conv_before_upsample[0] = torch.nn.Conv2d(kw["embed_dim"], num_feat, 3, 1, 1)
            model.upsample = module.Upsample(kw["upscale"], num_feat)
            model.conv_last = torch.nn.Conv2d(num_feat, kw["in_chans"], 3, 1, 1)

        def reseed(name, p, g):
            # Norm scales around 1 (LayerNorm and the refinement's InstanceNorm), position biases of a
            # few tenths, dictionary-attention scales in (0, 1) where the clamp passes them, the
            # category attention's logit scale near upstream's log(10) start, the refinement gate around 0.
            if (".norm" in "." + name) and name.endswith("weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith("relative_position_bias_table"):
                p.copy_(0.2 * torch.randn(p.shape, generator=g))
            elif name.endswith("attn_atd.scale"):
                p.copy_(torch.rand(p.shape, generator=g) * 1.2 - 0.1)
            elif name.endswith("logit_scale"):
                p.copy_(math.log(10) + 0.3 * torch.randn(p.shape, generator=g))
            elif name.endswith("sigma"):
                p.copy_(torch.randn(p.shape, generator=g))
            elif name.endswith(".td"):
                p.copy_(torch.randn(p.shape, generator=g))
        model.reseed = reseed
        return model

    return {
        # ATD's layout (published: embed 210, 6 groups of 6 layers, 6 heads, window 16, 128 dictionary
        # tokens, reducted dim 20, ConvFFN kernel 5, mlp 2, pixelshuffle, category size 256 as spandrel
        # assumes) narrowed: embed 24, two groups of two layers, window 8, 16 tokens, x2. The 40 x 24
        # padded map has 960 tokens: three full categories of 256 and one padded by the flip.
        "atd-x2": (lambda: atd(embed_dim=24, depths=[2, 2], num_heads=[2, 2], category_size=256, convffn_kernel_size=5,
                               upscale=2, upsampler="pixelshuffle", num_feat=16), 1871, (35, 21)),
        # ATD-light's layout (published: embed 48, 4 groups of 6 layers, 4 heads, window 16, 64 tokens,
        # reducted dim 8, kernel 7, mlp 1, pixelshuffledirect; spandrel's category size 128 for embed
        # 48) with two groups of three layers (an odd count: the last unshifted, and no refinement), 3conv, x3.
        "atd-light-x3": (lambda: atd(embed_dim=48, depths=[3, 3], num_heads=[4, 4], category_size=128, num_tokens=24,
                                     reducted_dim=8, convffn_kernel_size=7, mlp_ratio=1.0, upscale=3,
                                     upsampler="pixelshuffledirect", resi_connection="3conv"), 1872, (35, 21)),
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


def mosr_configs(spandrel):
    MoSR = spandrel_arch(spandrel, "MoSR/__arch/mosr_arch.py").MoSR

    def mosr(**kw):
        model = MoSR(**kw)

        def reseed(name, p, g):
            if name.endswith("norm.weight"):  # LayerNorm scales around 1
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
        model.reseed = reseed
        return model

    return {
        # published: dim 64, 24 blocks (MoSR) or 16/48 (t, l), expansion 1.5, kernel 7, x2/x4;
        # each upsampler once
        "mosr-d16-x2-ps": (lambda: mosr(dim=16, n_block=2, upscale=2, upsampler="ps"), 1851, (37, 29)),
        "mosr-d16-x4-gps-k5": (lambda: mosr(dim=16, n_block=2, upscale=4, upsampler="gps", kernel_size=5), 1852, (23, 19)),
        "mosr-d16-x3-dys-cr0.5": (lambda: mosr(dim=16, n_block=2, upscale=3, upsampler="dys", conv_ratio=0.5), 1853, (31, 21)),
    }


def drct_configs(spandrel):
    module = spandrel_arch(spandrel, "DRCT/__arch/drct_arch.py")

    class Padded(module.DRCT):
        """Upstream's network does not pad itself: DRCT's test code (ming053l/DRCT, as HAT's) reflect-
        pads the input on the right and bottom to the window and crops the output. Same state dict."""

        def forward(self, x):
            h, w = x.shape[2:]
            ws = self.window_size
            y = super().forward(torch.nn.functional.pad(x, (0, -w % ws, 0, -h % ws), "reflect"))
            return y[:, :, : h * self.upscale, : w * self.upscale]

    def drct(num_feat, **kw):
        kw = dict(dict(in_chans=3, qkv_bias=True, drop_path_rate=0.0, img_range=1.0, upsampler="pixelshuffle"), **kw)
        model = Padded(**kw)
        # Upstream fixes the reconstruction at 64 features; narrowed (as DAT's) to keep the file small.
        model.conv_before_upsample[0] = torch.nn.Conv2d(kw["embed_dim"], num_feat, 3, 1, 1)
        model.upsample = module.Upsample(kw["upscale"], num_feat)
        model.conv_last = torch.nn.Conv2d(num_feat, kw["in_chans"], 3, 1, 1)

        def reseed(name, p, g):
            # LayerNorm scales around 1 and position biases of a few tenths, as trained ones.
            if ".norm" in "." + name and name.endswith("weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith("relative_position_bias_table"):
                p.copy_(0.2 * torch.randn(p.shape, generator=g))
        model.reseed = reseed
        return model

    return {
        # DRCT's layout (published: embed 180, 6 (DRCT) or 12 (DRCT-L) dense groups, 6 heads, window 16,
        # growth 32, MLP ratio 2) narrowed: embed 16, growth 6 and 4 heads give the dense blocks 4, 2, 4,
        # 2, 4 heads as upstream's rule does for 180/32/6; window 8 (16's stored index tables alone
        # would take 5 MB); a 16 px training crop stores shift masks, so blocks 2 and 4 shift; x2.
        "drct-w8-x2": (lambda: drct(16, embed_dim=16, depths=[6, 6], num_heads=[4, 4], gc=6, window_size=8, mlp_ratio=2.0,
                                    img_size=16, upscale=2, resi_connection="1conv"), 1891, (37, 29)),
        # One group, MLP ratio 1.5, no conv_after_body ("identity"), x3, and a training crop of one
        # window: upstream then stores no shift masks and shifts no block.
        "drct-w8-x3-noshift": (lambda: drct(16, embed_dim=20, depths=[6], num_heads=[4], gc=6, window_size=8, mlp_ratio=1.5,
                                            img_size=8, upscale=3, resi_connection="identity"), 1892, (27, 21)),
    }


def srformer_module(srformer):
    """HVision-NKU/SRFormer's basicsr/archs/srformer_arch.py, imported without basicsr: the file
    wants basicsr's architecture registry (stubbed: a decorator that changes nothing) and two
    helpers of its arch_util (whose other imports, torchvision and basicsr's compiled ops, Debian
    lacks): to_2tuple and trunc_normal_, stood in for by a pair and torch's own truncated normal,
    which only initialise weights that seeded() overwrites anyway."""
    import importlib.util
    import types
    if "srformer_archs.srformer_arch" in sys.modules:
        return sys.modules["srformer_archs.srformer_arch"]
    registry = types.SimpleNamespace(register=lambda *_a, **_k: (lambda cls: cls))
    for name in ("basicsr", "basicsr.utils", "basicsr.utils.registry"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["basicsr.utils.registry"].ARCH_REGISTRY = registry
    package = types.ModuleType("srformer_archs")
    package.__path__ = [os.path.join(srformer, "basicsr", "archs")]
    sys.modules["srformer_archs"] = package
    util = types.ModuleType("srformer_archs.arch_util")
    util.to_2tuple = lambda x: tuple(x) if isinstance(x, (tuple, list)) else (x, x)
    util.trunc_normal_ = torch.nn.init.trunc_normal_
    sys.modules["srformer_archs.arch_util"] = util
    spec = importlib.util.spec_from_file_location("srformer_archs.srformer_arch",
                                                  os.path.join(srformer, "basicsr", "archs", "srformer_arch.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def srformer_configs(srformer):
    SRFormer = srformer_module(srformer).SRFormer

    def make(**kw):
        # img_size (the training crop) sizes the stored shift masks; upstream turns the shift off
        # when it is not larger than the window, so it is two windows wide.
        kw = dict(dict(in_chans=3, mlp_ratio=2.0, qkv_bias=True, drop_path_rate=0.0, ape=False, patch_norm=True,
                       img_range=1.0), **kw)
        kw.setdefault("img_size", 2 * kw["window_size"])
        model = SRFormer(**kw)

        def reseed(name, p, g):
            # LayerNorm scales around 1 and position biases of a few tenths, as trained ones.
            if ".norm" in "." + name and name.endswith("weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith("relative_position_bias_table"):
                p.copy_(0.2 * torch.randn(p.shape, generator=g))
        model.reseed = reseed
        return model

    return {
        # SRFormer-light (published: embed 60, 4 groups of 6, 6 heads, window 16, pixelshuffledirect), x3
        "srformer-light-x3": (lambda: make(embed_dim=24, depths=[2], num_heads=[2], window_size=16, upscale=3,
                                           upsampler="pixelshuffledirect"), 2301, (27, 21)),
        # SRFormer (published: embed 180, 6 groups of 6, 6 heads, window 22 or 24, pixelshuffle), x2;
        # window 10 has window 22's odd half shift (5, 11), whose permuted mask upstream bands at
        # -(shift // 2) rounded down: the stored buffers of window 22 would make a 2 MB file.
        "srformer-x2-w10": (lambda: make(embed_dim=16, depths=[2, 2], num_heads=[2, 2], window_size=10, upscale=2,
                                         upsampler="pixelshuffle"), 2302, (37, 29)),
        # nearest+conv (upstream's real-world reconstruction) with "3conv", x4
        "srformer-real-x4-3conv": (lambda: make(embed_dim=16, depths=[2], num_heads=[4], window_size=12, upscale=4,
                                                upsampler="nearest+conv", resi_connection="3conv"), 2303, (21, 19)),
    }


def main():
    args = sys.argv[1:]
    vsrife = None
    if "--vs-rife" in args:
        at = args.index("--vs-rife")
        vsrife = args[at + 1]
        del args[at:at + 2]
    srformer = None
    if "--srformer" in args:
        at = args.index("--srformer")
        srformer = args[at + 1]
        del args[at:at + 2]
    ifrnet = None
    if "--ifrnet" in args:
        at = args.index("--ifrnet")
        ifrnet = args[at + 1]
        del args[at:at + 2]
    style = None
    if "--style" in args:
        at = args.index("--style")
        style = args[at + 1]
        del args[at:at + 2]
    film = None
    if "--film" in args:
        at = args.index("--film")
        film = args[at + 1]
        del args[at:at + 2]
    configs = {}
    if ifrnet:
        configs.update(ifrnet_configs(ifrnet))
    if film:
        configs.update(film_configs(film))
    if style:
        configs.update(style_configs(style))
    if not args and not ifrnet and not film and not style:
        sys.exit(__doc__)
    # Without a spandrel checkout (IFRNet or FILM alone), every name given is one of theirs.
    if not args or args[0] in configs:
        return make_all(configs, args or list(configs))
    spandrel = args[0]
    configs.update(span_configs(spandrel))
    configs.update(swinir_configs(spandrel))
    configs.update(hat_configs(spandrel))
    configs.update(dat_configs(spandrel))
    configs.update(safmn_configs(spandrel))
    configs.update(plksr_configs(spandrel))
    configs.update(mosr_configs(spandrel))
    configs.update(drunet_configs(spandrel))
    configs.update(nafnet_configs(spandrel))
    configs.update(lama_configs(spandrel))
    configs.update(ddcolor_configs(spandrel))
    configs.update(fbcnn_configs(spandrel))
    configs.update(scunet_configs(spandrel))
    configs.update(swin2sr_configs(spandrel))
    configs.update(drct_configs(spandrel))
    configs.update(atd_configs(spandrel))
    if vsrife:
        configs.update(rife_configs(vsrife))
    if srformer:
        configs.update(srformer_configs(srformer))
    make_all(configs, args[1:] or list(configs))


def make_all(configs, wanted):
    torch.set_num_threads(1)
    for name in wanted:
        make, seed, (w, h), *kind = configs[name]
        model = seeded(make(), seed).eval()
        if kind[:1] in (["ifrnet"], ["film"]):
            # As RIFE's: frames 30 and 33 (real motion); outputs at t = 0.5 and 0.3 from Model.inference
            # (IFRNet) or the Interpolator (FILM).
            if kind[1:] == ["fp16"]:
                with torch.no_grad():
                    for p in model.parameters():
                        p.copy_(p.half().float())
            a, b = real_frame(w, h, 30), real_frame(w, h, 33)
            with torch.no_grad():
                half, t03 = model(a, b, 0.5), model(a, b, 0.3)
            tensors = {"img0": a, "img1": b, "t0.5": half, "t0.3": t03}
            if kind[0] == "film":
                # FILM's finest flows too, to tell the flow pyramid's errors from the fusion's.
                with torch.no_grad():
                    tensors["flow_forward"], tensors["flow_backward"] = model.flows(a, b)
                # Odd-size frames (11 pixels short of the multiple each way) the way upstream's
                # tools run them: zero-padded to the multiple, centred, then cropped back.
                oa, ob = real_frame(w - 11, h - 11, 30), real_frame(w - 11, h - 11, 33)
                top, left = 11 // 2, 11 // 2
                pad = (left, 11 - left, top, 11 - top)
                with torch.no_grad():
                    odd = model(torch.nn.functional.pad(oa, pad), torch.nn.functional.pad(ob, pad), 0.5)
                tensors.update({"odd_img0": oa, "odd_img1": ob, "odd_t0.5": odd[:, :, top:top + h - 11, left:left + w - 11]})
            state = model.net.state_dict()
            if kind[1:] == ["fp16"]:
                state = {k: v.half() for k, v in state.items()}
            torch.save(state, os.path.join(HERE, name + ".pth"))
            write_safetensors(os.path.join(HERE, name + ".ref.safetensors"), tensors)
            print(f"{name}: frames {list(a.shape)} range [{half.min():.3f}, {half.max():.3f}], "
                  f"{sum(p.numel() for p in model.parameters())} weights")
            continue
        if kind == ["rife"]:
            # Frames 30 and 33: a face turning, real motion. The state dict is the IFNet's, as in
            # a flownet.pkl; outputs at t = 0.5 and 0.25.
            a, b = real_frame(w, h, 30), real_frame(w, h, 33)
            with torch.no_grad():
                half, quarter = model(a, b, 0.5), model(a, b, 0.25)
            torch.save(model.net.state_dict(), os.path.join(HERE, name + ".pth"))
            write_safetensors(os.path.join(HERE, name + ".ref.safetensors"),
                              {"img0": a, "img1": b, "t0.5": half, "t0.25": quarter})
            print(f"{name}: frames {list(a.shape)} range [{half.min():.3f}, {half.max():.3f}]")
            continue
        x = real_frame(w, h)
        if kind == ["style"]:
            with torch.no_grad():
                y = model(x)
            torch.save(model.net.state_dict(), os.path.join(HERE, name + ".pth"))
            write_safetensors(os.path.join(HERE, name + ".ref.safetensors"), {"input": x, "output": y})
            print(f"{name}: input {list(x.shape)} output {list(y.shape)} range [{y.min():.3f}, {y.max():.3f}]")
            continue
        if kind == ["ddcolor"]:
            # The grey frame as DDColor's pipeline makes it (L only, back to RGB) does not matter
            # to the network's arithmetic; a real colour crop exercises every channel.
            with torch.no_grad():
                y = model(x)
            torch.save(model.state_dict(), os.path.join(HERE, name + ".pth"))
            write_safetensors(os.path.join(HERE, name + ".ref.safetensors"), {"input": x, "output": y})
            print(f"{name}: input {list(x.shape)} output {list(y.shape)} range [{y.min():.3f}, {y.max():.3f}], "
                  f"{sum(p.numel() for p in model.parameters())} weights")
            continue
        if kind == ["lama"]:
            # A rectangle and a disc to fill, the rest kept: spandrel's composite as the output,
            # the image and mask as the network's 4-channel input.
            mask = torch.zeros(1, 1, h, w)
            mask[:, :, 10:26, 20:44] = 1
            yy, xx = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
            mask[0, 0][(yy - 36) ** 2 + (xx - 12) ** 2 <= 36] = 1
            with torch.no_grad():
                y = model(x, mask)
            torch.save(model.net.state_dict(), os.path.join(HERE, name + ".pth"))
            write_safetensors(os.path.join(HERE, name + ".ref.safetensors"), {"input": torch.cat([x, mask], 1), "output": y})
            inside = y[mask.expand_as(y) > 0]
            print(f"{name}: input {list(x.shape)} fill range [{inside.min():.3f}, {inside.max():.3f}]")
            continue
        if kind == ["grey"]:
            x = x.mean(1, keepdim=True)  # one channel: the grey models' input
        if kind == ["drunet"]:
            # The default sigma 15 and, for the stage's sigma= option, 50.
            with torch.no_grad():
                y, y50 = model(x), model(x, 50)
            torch.save(model.net.state_dict(), os.path.join(HERE, name + ".pth"))
            write_safetensors(os.path.join(HERE, name + ".ref.safetensors"), {"input": x, "output": y, "output_sigma50": y50})
            print(f"{name}: input {list(x.shape)} output {list(y.shape)} range [{y.min():.3f}, {y.max():.3f}]")
            continue
        if kind == ["fbcnn"]:
            # Upstream returns the image and the predicted quality factor (in [0, 1]: QF / 100); given
            # a quality (qf_input) it conditions on that instead, for the stage's quality= option.
            with torch.no_grad():
                y, qf = model(x)
                y30, _ = model(x, torch.tensor([[0.3]]))
            torch.save(model.net.state_dict(), os.path.join(HERE, name + ".pth"))
            write_safetensors(os.path.join(HERE, name + ".ref.safetensors"),
                              {"input": x, "output": y, "qf": qf, "output_quality30": y30})
            print(f"{name}: input {list(x.shape)} output {list(y.shape)} range [{y.min():.3f}, {y.max():.3f}] qf {qf.item()}")
            continue
        with torch.no_grad():
            y = model(x)
        torch.save(model.state_dict(), os.path.join(HERE, name + ".pth"))
        write_safetensors(os.path.join(HERE, name + ".ref.safetensors"), {"input": x, "output": y})
        print(f"{name}: input {list(x.shape)} output {list(y.shape)} range [{y.min():.3f}, {y.max():.3f}]")


if __name__ == "__main__":
    main()
