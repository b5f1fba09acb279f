#!/usr/bin/python3
"""Reference checkpoint and outputs for framelift's native CodeFormer (src/models/codeformer.cpp).

Runs spandrel_extra_arches' CodeFormer (sczhou's network: a VQGAN encoder, a transformer that
predicts codebook indices, the VQGAN generator with controllable feature transformation) on
Debian's python3-torch, at narrow widths, and writes next to this script:

  codeformer-narrow.pth             {"params_ema": state dict}, as the released codeformer.pth
                                    wraps it; weights stored in fp16 to keep the file small (the
                                    network runs on exactly those values in fp32)
  codeformer-narrow.ref.safetensors "input" [1, 3, 32, 32] (a real crop) and "output_w0",
                                    "output_w0.5", "output_w1": (y + 1) / 2 of upstream's
                                    net((x - 0.5) / 0.5, weight=w)[0], float32, not clamped

Usage: tests/data/arch/make_face_references_codeformer.py [/path/to/spandrel]   (default /tmp/spandrel)

Upstream's CodeFormer class fixes the released sizes in its constructor and forward (a 512 face,
nf 64, ch_mult 1/2/2/4/4/8, a 16x16 latent of 256-wide codes, its block-index tables). The narrow
network is that class with the VQAutoEncoder built at other sizes and those tables set to what
the same rules give at them; upstream's forward then runs unchanged. The rules are checked here
against upstream's own tables at the released sizes.
"""
import importlib
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(__file__))
from make_references import HERE, real_frame, seeded, spandrel_arch, write_safetensors  # noqa: E402

NAME = "codeformer-narrow"
SEED = 4101

# The narrow network: a 32x32 face, two levels 32 wide (the GroupNorms' 32 groups need multiples
# of 32), two residual blocks a level, attention at the 16x16 latent as released; a codebook of 64
# codes 32 wide; a transformer 32 wide (8 heads of 4), 2 layers; fused at both sizes, 16 and 32
# (released: 32 to 256 of 512), so both of the generator's fusion rules run.
FACE, NF, CH_MULT, RES_BLOCKS, ATTN = 32, 32, [1, 1], 2, [16]
CODEBOOK, EMB_DIM, DIM_EMBD, N_LAYERS, CONNECT = 64, 32, 32, 2, ["16", "32"]


def codeformer_module(spandrel):
    spandrel_arch(spandrel, "SPAN/__arch/span.py")  # the spandrel package stubs (util)
    root = os.path.join(spandrel, "libs", "spandrel_extra_arches", "spandrel_extra_arches")
    for name, path in [("spandrel_extra_arches", root),
                       ("spandrel_extra_arches.architectures", os.path.join(root, "architectures")),
                       ("spandrel_extra_arches.architectures.CodeFormer", os.path.join(root, "architectures", "CodeFormer"))]:
        if name not in sys.modules:
            m = types.ModuleType(name)
            m.__path__ = [path]
            sys.modules[name] = m
    return importlib.import_module("spandrel_extra_arches.architectures.CodeFormer.__arch.codeformer")


def block_tables(cf, encoder, generator):
    """Where the encoder's features are taken and the generator fuses them, by resolution, by the
    rule upstream's tables follow: the encoder's after the last residual block of a level; the
    generator's after the first residual block of a level, except at the smallest (attention)
    level, after its last one (before the last attention block)."""
    def levels(blocks, first_res, step):
        out, res, current = {}, first_res, []
        for i, b in enumerate(blocks):
            if isinstance(b, (cf.Downsample, cf.Upsample)):
                out[res] = current
                res, current = (res // 2 if step < 0 else res * 2), []
            elif isinstance(b, cf.ResBlock):
                current.append(i)
        out[res] = current
        return out

    enc = levels(encoder.blocks, encoder.resolution, -1)
    smallest = min(enc)
    # The encoder's last level ends with the middle blocks (RB, Attn, RB): those are not the level's.
    enc[smallest] = enc[smallest][:-2]
    gen = levels(generator.blocks, generator.resolution // 2 ** (generator.num_resolutions - 1), 1)
    gen[smallest] = gen[smallest][2:]  # the middle blocks come first in the generator
    encoder_block = {str(r): ids[-1] for r, ids in enc.items()}
    generator_block = {str(r): (ids[-1] if r == smallest else ids[0]) for r, ids in gen.items()}
    return encoder_block, generator_block


def check_rules_on_released(cf):
    released = cf.CodeFormer()
    enc, gen = block_tables(cf, released.encoder, released.generator)
    assert enc == released.fuse_encoder_block, (enc, released.fuse_encoder_block)
    assert gen == released.fuse_generator_block, (gen, released.fuse_generator_block)


def narrow_codeformer(cf):
    original = cf.VQAutoEncoder.__init__

    def narrow_init(self, *args, **kwargs):
        original(self, FACE, NF, CH_MULT, "nearest", RES_BLOCKS, ATTN, CODEBOOK, EMB_DIM)

    cf.VQAutoEncoder.__init__ = narrow_init
    try:
        net = cf.CodeFormer(dim_embd=DIM_EMBD, n_head=8, n_layers=N_LAYERS, codebook_size=CODEBOOK,
                            latent_size=(FACE // 2 ** (len(CH_MULT) - 1)) ** 2, connect_list=CONNECT)
    finally:
        cf.VQAutoEncoder.__init__ = original
    # What the constructor sized for the released network: the code embedding (256 wide there),
    # the fusion blocks' widths and the block tables.
    net.feat_emb = torch.nn.Linear(EMB_DIM, DIM_EMBD)
    net.channels = {str(FACE // 2 ** i): NF * m for i, m in enumerate(CH_MULT)}
    net.fuse_encoder_block, net.fuse_generator_block = block_tables(cf, net.encoder, net.generator)
    net.fuse_convs_dict = torch.nn.ModuleDict({s: cf.Fuse_sft_block(net.channels[s], net.channels[s]) for s in CONNECT})
    # forward asks for the released latent's shape ([b, 16, 16, 256]); the codes are the same
    # whatever it asks, only their arrangement is the latent's own.
    lookup = net.quantize.get_codebook_feat
    side = FACE // 2 ** (len(CH_MULT) - 1)
    net.quantize.get_codebook_feat = lambda idx, shape: lookup(idx, [shape[0], side, side, EMB_DIM])

    def reseed(name, p, g):
        # GroupNorm and LayerNorm scales around 1, as trained ones; position embeddings of a few tenths.
        if p.dim() == 1 and name.endswith("weight"):
            p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
        elif name == "position_emb":
            p.copy_(0.3 * torch.randn(p.shape, generator=g))
    net.reseed = reseed
    return net


def main():
    spandrel = sys.argv[1] if len(sys.argv) > 1 else "/tmp/spandrel"
    torch.set_num_threads(1)
    cf = codeformer_module(spandrel)
    check_rules_on_released(cf)
    net = seeded(narrow_codeformer(cf), SEED).eval()
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(p.half().float())
    x = real_frame(FACE, FACE)
    tensors = {"input": x}
    with torch.no_grad():
        for w in (0, 0.5, 1):
            y = net((x - 0.5) / 0.5, weight=w)[0]
            tensors[f"output_w{w}"] = (y + 1) / 2
            # The codes the transformer picked, and how close the runner-up was (bf16 may flip near ties).
            logits = net(((x - 0.5) / 0.5), weight=w)[1][0]
            top2 = logits.topk(2, dim=-1).values
            print(f"w={w}: range [{tensors[f'output_w{w}'].min():.3f}, {tensors[f'output_w{w}'].max():.3f}], "
                  f"{logits.argmax(-1).unique().numel()} distinct codes, smallest top-2 logit gap {(top2[:, 0] - top2[:, 1]).min():.4f}")
    state = {k: v.half() for k, v in net.state_dict().items()}
    torch.save({"params_ema": state}, os.path.join(HERE, NAME + ".pth"))
    write_safetensors(os.path.join(HERE, NAME + ".ref.safetensors"), tensors)
    for a, b in (("output_w0", "output_w0.5"), ("output_w0.5", "output_w1")):
        print(f"{a} vs {b}: max difference {(tensors[a] - tensors[b]).abs().max():.4f}")
    print(f"{sum(p.numel() for p in net.parameters())} weights; files "
          f"{os.path.getsize(os.path.join(HERE, NAME + '.pth')) + os.path.getsize(os.path.join(HERE, NAME + '.ref.safetensors'))} bytes")


if __name__ == "__main__":
    main()
