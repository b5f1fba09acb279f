#!/usr/bin/python3
"""Published-size interpolators with seeded weights, for speed rows of bench/interpolation.sh:
their arithmetic, and so their frames/s, is the released networks'; their frames are not (no
real weights for them are in the packs this project may use), so the benchmark shows no PSNR for
them. Writes DIR/ifrnet-s.pth, ifrnet-base.pth, ifrnet-l.pth (ltkong218/IFRNet's Model classes)
and DIR/film.pth (dajes/frame-interpolation-pytorch's Interpolator at film_net's defaults).
    bench/seeded_interpolators.py DIR IFRNET_CHECKOUT FILM_CHECKOUT"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "arch"))
import torch  # noqa: E402
from make_references import film_module, ifrnet_module, seeded  # noqa: E402

out, ifrnet, film = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
for name, variant, seed in (("ifrnet-s", "IFRNet_S", 1), ("ifrnet-base", "IFRNet", 2), ("ifrnet-l", "IFRNet_L", 3)):
    torch.save(seeded(ifrnet_module(ifrnet, variant).Model(), seed).state_dict(), os.path.join(out, name + ".pth"))
torch.save(seeded(film_module(film).Interpolator(), 4).state_dict(), os.path.join(out, "film.pth"))
print(out)
