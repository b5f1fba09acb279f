#!/usr/bin/python3
"""Reference checkpoints and outputs for framelift's native GFPGAN (v1.3/v1.4, "GFPGANv1Clean").

Runs spandrel's copy of GFPGAN's clean architecture (GFPGANv1Clean: a U-Net of bilinear ResBlocks
whose style code and SFT conditions drive StyleGAN2GeneratorCSFT) at a face size of 64 and narrow
widths, with seeded weights, in float32 on CPU, on a real 64x64 crop (make_references.real_frame).
The network is fed the crop as GFPGANer feeds it ((x - 0.5) / 0.5) and its image is stored as
tensor2img reads it ((y + 1) / 2), so NAME.ref.safetensors holds "input" and "output" in the
[0, 1] convention of src/models/face_restorer.h.

The StyleGAN decoder adds noise after every style convolution. Upstream's forward draws it afresh
per call by default (randomize_noise=True); framelift uses the noise buffers the state dict holds
(stylegan_decoder.noises.noiseN), which is what randomize_noise=False runs, so the references are
made that way.

Usage: tests/data/arch/make_face_references_gfpgan.py /path/to/spandrel
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_references import HERE, real_frame, seeded, spandrel_arch, write_safetensors  # noqa: E402


class SeededGFPGAN(torch.nn.Module):
    """GFPGANv1Clean with weights drawn by make_references.seeded, then brought to the sizes a
    trained net's have where fan-in scaling gets them wrong: the modulated convolutions' weights
    carry a leading axis of 1 (so seeded's fan-in would count their outputs too), the modulations'
    biases start at 1 upstream (styles near 1), the SFT scales sit near 1, and the noise
    strengths are made large enough that a wrong noise map shows."""

    def __init__(self, arch, seed, **kw):
        super().__init__()
        torch.manual_seed(seed)  # the noise buffers are drawn at construction
        self.net = arch.GFPGANv1Clean(out_size=64, decoder_load_path=None, fix_decoder=False,
                                      input_is_latent=True, **kw)

    def reseed(self, name, p, g):
        if name.endswith("modulated_conv.weight"):
            p.mul_(p.shape[1] ** 0.5)
        elif name.endswith("modulation.bias"):
            p.add_(1.0)
        elif name.endswith("constant_input.weight"):
            p.mul_(p[0].numel() ** 0.5)
        elif "condition_scale" in name and name.endswith(".2.bias"):
            p.add_(1.0)
        elif name.startswith("net.stylegan_decoder.style_conv") and name.endswith(".weight") and p.dim() == 1:
            p.mul_(3.0)  # noise strength: 0.3 on average

    def forward(self, x):
        image, _ = self.net((x - 0.5) / 0.5, return_rgb=False, randomize_noise=False)
        return (image + 1) / 2


def configs(spandrel):
    arch = spandrel_arch(spandrel, "GFPGAN/__arch/gfpganv1_clean_arch.py")
    return {
        # The released layout (sft_half, different_w, 8 MLP layers) at 1/32 of its widths: the
        # U-Net 8 wide, the decoder 16, styles of 16.
        "gfpgan-narrow": (lambda: SeededGFPGAN(arch, 3401, num_style_feat=16, channel_multiplier=2, num_mlp=8,
                                               different_w=True, narrow=1 / 32, sft_half=True), 3401),
        # SFT over all channels, one style for every layer, channel multiplier 1 (the 64 level
        # half as wide as the ones below it: U-Net 4 there, decoder 8), 2 MLP layers.
        "gfpgan-narrow-full-sft": (lambda: SeededGFPGAN(arch, 3402, num_style_feat=8, channel_multiplier=1, num_mlp=2,
                                                        different_w=False, narrow=1 / 32, sft_half=False), 3402),
    }


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    wanted = set(sys.argv[2:])
    x = real_frame(64, 64)
    for name, (make, seed) in configs(sys.argv[1]).items():
        if wanted and name not in wanted:
            continue
        model = seeded(make(), seed).eval()
        with torch.no_grad():
            y = model(x)
            again = model(x)
        assert torch.equal(y, again), "the stored noise makes the output deterministic"
        torch.save(model.net.state_dict(), os.path.join(HERE, name + ".pth"))
        write_safetensors(os.path.join(HERE, name + ".ref.safetensors"), {"input": x, "output": y})
        print(f"{name}: input {list(x.shape)} output {list(y.shape)} range [{y.min():.3f}, {y.max():.3f}], "
              f"{sum(p.numel() for p in model.parameters())} weights")


if __name__ == "__main__":
    main()
