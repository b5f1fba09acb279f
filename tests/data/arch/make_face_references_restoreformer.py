#!/usr/bin/python3
"""Reference checkpoints and outputs for framelift's native RestoreFormer / RestoreFormer++
(src/models/restoreformer.cpp).

Runs the authors' own network class, VQVAEGANMultiHeadTransformer of wzhouxiff/RestoreFormerPlusPlus
(RestoreFormer/modules/vqvae/vqvae_arch.py; the same file builds both), on Debian's python3-torch at
narrow widths with seeded weights, and writes next to this script:

  restoreformer-pp-narrow.pth   RestoreFormer++ as the released RestoreFormer++.ckpt holds it: a
                                Lightning {"state_dict": {"vqvae.<key>": ...}} (what upstream's
                                RestoreFormer.py unwraps)
  restoreformer-narrow.pth      RestoreFormer as a plain state dict (the original repository's
                                RestoreFormer.pth, which spandrel loads)
  NAME.ref.safetensors          "input" [1, 3, 64, 64] (a real crop, [0, 1]) and "output": (y + 1) / 2
                                of upstream's net((x - 0.5) / 0.5)[0], float32, not clamped

Weights are stored in fp16 to keep the files small; upstream runs on exactly those values in fp32.

Usage: tests/data/arch/make_face_references_restoreformer.py /path/to/RestoreFormerPlusPlus

Upstream's inference (RestoreFormer/RestoreFormer.py) builds the released networks with the class's
defaults (ch 64, ch_mult 1/2/2/4/4/8, two residual blocks a level, attention at 16, a 512 face,
a codebook of 1024 codes 256 wide) and head_size 8, ex_multi_scale_num 0 (RestoreFormer) or
head_size 4, ex_multi_scale_num 1 (RestoreFormer++: the decoder attends at 16 and 32). The narrow
networks keep the attention resolutions and head counts and shrink the rest: a 64 face, three
levels (ch 32; the GroupNorms' 32 groups need multiples of 32), one residual block a level, 64 codes
16 wide. RestoreFormer++'s first level is twice as wide (ch_mult 2/1/1) so that the widening and
narrowing blocks' 1x1 shortcuts (nin_shortcut, at every width change of the released net) run too.
"""
import importlib.util
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_references import HERE, real_frame, seeded, write_safetensors  # noqa: E402

FACE = 64
CONFIGS = {
    # name: (seed, ch_mult, head_size, ex_multi_scale_num, Lightning layout)
    "restoreformer-pp-narrow": (4301, (2, 1, 1), 4, 1, True),
    "restoreformer-narrow": (4302, (1, 1, 1), 8, 0, False),
}


def vqvae_arch(repo):
    path = os.path.join(repo, "RestoreFormer", "modules", "vqvae", "vqvae_arch.py")
    spec = importlib.util.spec_from_file_location("restoreformer_vqvae_arch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def narrow(vq, ch_mult, head_size, ex_multi_scale_num):
    net = vq.VQVAEGANMultiHeadTransformer(n_embed=64, embed_dim=16, ch=32, ch_mult=ch_mult, num_res_blocks=1,
                                          attn_resolutions=(16,), resolution=FACE, z_channels=16,
                                          head_size=head_size, ex_multi_scale_num=ex_multi_scale_num)

    def reseed(name, p, g):
        if p.dim() == 1 and name.endswith("weight"):
            p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))  # GroupNorm scales near 1, as trained ones
        elif name == "quantize.embedding.weight":
            p.mul_(4.0)  # codes as far apart as the encoder's latents are wide (unit scale), not 1/4 of it
    net.reseed = reseed
    return net


def lookup_margin(net, x):
    """Distinct codes the lookup picks and the smallest gap between a latent's nearest and
    second-nearest code (squared distance): how close the argmin comes to a tie."""
    hs = net.encoder(x)
    z = net.quant_conv(hs["out"])
    _, _, (_, _, indices, d) = net.quantize(z)
    top2 = d.topk(2, dim=1, largest=False).values
    return indices.unique().numel(), (top2[:, 1] - top2[:, 0]).min().item()


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else "/tmp/restoreformer/rfpp"
    torch.set_num_threads(1)
    vq = vqvae_arch(repo)
    x = real_frame(FACE, FACE)
    for name, (seed, ch_mult, head_size, ex, lightning) in CONFIGS.items():
        net = seeded(narrow(vq, ch_mult, head_size, ex), seed).eval()
        with torch.no_grad():
            for p in net.parameters():
                p.copy_(p.half().float())
            y = net((x - 0.5) / 0.5)[0]
            codes, margin = lookup_margin(net, (x - 0.5) / 0.5)
        out = (y + 1) / 2
        state = {k: v.half() for k, v in net.state_dict().items()}
        if lightning:
            state = {"state_dict": {"vqvae." + k: v for k, v in state.items()}}
        torch.save(state, os.path.join(HERE, name + ".pth"))
        write_safetensors(os.path.join(HERE, name + ".ref.safetensors"), {"input": x, "output": out})
        size = sum(os.path.getsize(os.path.join(HERE, name + e)) for e in (".pth", ".ref.safetensors"))
        print(f"{name}: output range [{out.min():.3f}, {out.max():.3f}], {codes} distinct codes, smallest "
              f"top-2 distance gap {margin:.4f}, {sum(p.numel() for p in net.parameters())} weights, files {size} bytes")


if __name__ == "__main__":
    main()
