#!/usr/bin/python3
"""Reference checkpoint and output for framelift's native MAT (src/models/mat.cpp).

Runs spandrel_extra_arches' MAT (Li et al. 2022, "MAT: Mask-Aware Transformer for Large Hole Image
Inpainting", fenglinglwb's Generator as lama-cleaner ported it) on Debian's python3-torch, at narrow
widths and a 128 px synthesis, and writes next to this script:

  mat-narrow.pth             the Generator's state dict as the releases hold it ("synthesis.*",
                             "mapping.*"; spandrel prefixes "model."), weights stored in fp16 to keep
                             the file small (the network runs on exactly those values in fp32),
                             without the shifted windows' attn_mask buffers (recomputed)
  mat-narrow.ref.safetensors "input" [1, 4, 128, 128]: a real crop and the mask (1: fill; a
                             rectangle and a disc), "output" [1, 3, 128, 128]: spandrel's call,
                             MAT(image, mask).clamp(0, 1), float32

Usage: tests/data/arch/make_mat_references.py [/path/to/spandrel]   (default /tmp/spandrel)

Upstream's MAT wrapper fixes the released sizes (z and w 512, a 512 synthesis, FirstStage's dim 180,
the nf() width table); the narrow network is upstream's Generator at z 16, w 16, resolution 128, with
dim 12 and nf() narrowed, built from upstream's classes unchanged otherwise. 128 is the smallest
synthesis upstream can build: the first stage's transformer always works at 64x64 and needs at least
one convolution down to it and one style block up from it.

Where upstream draws random numbers at each call, the reference uses what framelift fixes:
  * z: upstream's MAT wrapper draws np.random.randn(1, z_dim) once, unseeded; MAT's own
    generate_image.py seeds numpy with 240 first. Here z = np.random.RandomState(240).randn(1, z_dim).
  * the two F.dropout(0.5 * ones, training=True) calls (the first stage's 16x16 tokens [B, 256, dim]
    and the second stage's 16x16 features [B, nf(4), 16, 16]) keep each element (x 2: 1) or drop it
    (0) at random on every call, even in eval mode. Here each is a fixed pattern, the same for every
    image of a batch: after z, the same RandomState's next 32-bit words, one an element in row-major
    order, first stage then second, an element kept where its word's top bit is 0.
  * noise: the releases' Generator is built with use_noise=False (no noise buffers) and spandrel
    passes noise_mode="none", so there is none. truncation_psi=1 (w_avg unused).
"""
import importlib
import os
import sys
import types

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
from make_references import HERE, real_frame, seeded, spandrel_arch, write_safetensors  # noqa: E402

NAME = "mat-narrow"
SEED = 5202
RESOLUTION, Z_DIM, W_DIM, DIM = 128, 16, 16, 12
NF = {128: 8, 64: 12, 32: 16, 16: 16, 8: 16, 4: 8}  # released: 512: 64, 256: 128, 128: 256, then 512
Z_SEED = 240


def mat_module(spandrel):
    spandrel_arch(spandrel, "SPAN/__arch/span.py")  # the spandrel package stubs (util)
    root = os.path.join(spandrel, "libs", "spandrel_extra_arches", "spandrel_extra_arches")
    for name, path in [("spandrel_extra_arches", root),
                       ("spandrel_extra_arches.architectures", os.path.join(root, "architectures")),
                       ("spandrel_extra_arches.architectures.MAT", os.path.join(root, "architectures", "MAT"))]:
        if name not in sys.modules:
            m = types.ModuleType(name)
            m.__path__ = [path]
            sys.modules[name] = m
    return importlib.import_module("spandrel_extra_arches.architectures.MAT.__arch.MAT")


def fixed_draws(z_dim, first_stage_elements, second_stage_elements):
    rs = np.random.RandomState(Z_SEED)
    z = rs.randn(1, z_dim)
    words = rs.randint(0, 2 ** 32, size=first_stage_elements + second_stage_elements, dtype=np.uint32)
    keep = torch.from_numpy((words < 2 ** 31).astype(np.float32))
    return torch.from_numpy(z), keep[:first_stage_elements], keep[first_stage_elements:]


def narrow_mat(mat):
    mat.nf = lambda stage, *_, **__: NF[2 ** stage]
    released_first_stage = mat.FirstStage

    class NarrowFirstStage(released_first_stage):
        def __init__(self, *args, **kwargs):
            kwargs["dim"] = DIM
            super().__init__(*args, **kwargs)

    mat.FirstStage = NarrowFirstStage
    net = mat.MAT.__new__(mat.MAT)
    torch.nn.Module.__init__(net)
    net.model = mat.Generator(z_dim=Z_DIM, c_dim=0, w_dim=W_DIM, img_resolution=RESOLUTION, img_channels=3)
    mat.FirstStage = released_first_stage
    z, keep1, keep2 = fixed_draws(Z_DIM, 256 * DIM, NF[16] * 16 * 16)
    net.z, net.label = z, torch.zeros([1, 0])

    # F.dropout as upstream calls it (0.5 * ones, p 0.5, training): the fixed patterns instead.
    functional = types.ModuleType("F")
    functional.__dict__.update(torch.nn.functional.__dict__)

    def dropout(x, p=0.5, training=True, inplace=False):
        assert p == 0.5 and training and bool((x == 0.5).all())
        keep = keep1 if x.dim() == 3 else keep2
        return keep.view(1, *x.shape[1:]).expand_as(x) * (x / (1 - p))

    functional.dropout = dropout
    mat.F = functional

    def reseed(name, p, g):
        if p.dim() > 1:
            # Upstream's layers scale their weights by 1 / sqrt(fan-in) at run time and are
            # initialised N(0, 1) (the mapping's N(0, 1) / lr_multiplier 0.01): undo seeded()'s
            # fan-in scaling, as a trained net's weights are of that size.
            p.copy_(torch.randn(p.shape, generator=g) * (100.0 if ".mapping." in name else 1.0))
            if "toRGB.conv.weight" in name:
                p.mul_(0.2)  # a fill of a few tenths around grey, most of it inside [-1, 1]
        elif name.endswith("affine.bias"):
            p.add_(1.0)  # styles around 1, as upstream's bias_init=1
        elif ".mapping." in name:
            p.mul_(100.0)

    def after_seeding():
        with torch.no_grad():
            for p in net.parameters():
                p.copy_(p.half().float())  # stored in fp16: both sides run on those values
            w_avg = net.model.mapping.w_avg
            w_avg.copy_(torch.randn(w_avg.shape, generator=torch.Generator().manual_seed(SEED + 1)).half().float())

    net.reseed, net.after_seeding = reseed, after_seeding
    return net


def main():
    spandrel = sys.argv[1] if len(sys.argv) > 1 else "/tmp/spandrel"
    torch.set_num_threads(1)
    net = seeded(narrow_mat(mat_module(spandrel)), SEED).eval()
    h = w = RESOLUTION
    x = real_frame(w, h)
    mask = torch.zeros(1, 1, h, w)
    mask[:, :, 20:52, 40:88] = 1
    yy, xx = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    mask[0, 0][(yy - 84) ** 2 + (xx - 30) ** 2 <= 14 ** 2] = 1
    with torch.no_grad():
        raw = net(x, mask)
        y = raw.clamp(0, 1)  # spandrel's MaskedImageModelDescriptor clamps the call's output
    # The shifted windows' attention masks (0 / -100, 4 of [nW, N, N]: 2 MB here) are left out: framelift
    # recomputes them from the sizes and checks them only where a file has them (the releases do).
    state = {k: (v.half() if v.is_floating_point() else v) for k, v in net.model.state_dict().items()
             if not k.endswith(".attn_mask")}
    torch.save(state, os.path.join(HERE, NAME + ".pth"))
    write_safetensors(os.path.join(HERE, NAME + ".ref.safetensors"), {"input": torch.cat([x, mask], 1), "output": y})
    inside = raw[mask.expand_as(raw) > 0]
    print(f"{NAME}: input {list(x.shape)}, fill range [{inside.min():.3f}, {inside.max():.3f}], "
          f"{(inside.clamp(0, 1) != inside).float().mean():.3f} of it clamped, "
          f"{sum(p.numel() for p in net.parameters())} weights")


if __name__ == "__main__":
    main()
