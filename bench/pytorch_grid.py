#!/usr/bin/python3
"""The eager PyTorch peer of the speed grid (issue 37, bench/speed_grid.sh).

For every network of the grid it builds the upstream module from a spandrel checkout given on the
command line (nothing of it is copied here: tests/data/arch/make_references.py's importer and
seeding are reused), with seeded weights in the upstream key layout, writes the state dict to
OUTDIR/NAME.pth (the file framelift's bench/speed_grid then loads: the same weights on both sides)
and times the module in eager fp32 in NCHW and in channels_last at each of the row's sizes, with
the thread count given, median of N calls after a warm-up call, under torch.inference_mode.
--clock cpu times the calling thread's CPU time (with --threads 1, all of the work; on a loaded
machine preemption does not count), as bench/speed_grid --clock cpu does.

    bench/pytorch_grid.py SPANDREL OUTDIR [--runs N] [--threads N] [--clock wall|cpu] [--only NAME,...]
    bench/pytorch_grid.py SPANDREL --list     (the grid's network names, one a line)

Writes OUTDIR/pytorch.json ({"rows": [{"name", "size", "nchw_ms", "channels_last_ms"}]}) and
OUTDIR/entries.txt (one speed_grid ENTRY a line: NAME=OUTDIR/NAME.pth@WxH,...).
"""
import json
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "data", "arch"))
import make_references as refs  # noqa: E402  (the upstream importer, seeding and small configs)

SMALL = [(64, 64)]
# The small reference configs (tests/data/arch) are cheap: a realistic frame size too.
SMALL_AND_FRAME = [(64, 64), (192, 192)]


def einops_reduce_stub():
    """einops.layers.torch.Reduce for OmniSR's one use ("b c h w -> b c", "mean": a global average
    pool), next to make_references' Rearrange stub, where Debian's einops is missing."""
    layers = sys.modules.get("einops.layers.torch")
    if layers is None or hasattr(layers, "Reduce"):
        return

    class Reduce(torch.nn.Module):
        def __init__(self, pattern, reduction):
            super().__init__()
            if pattern.replace(" ", "") != "bchw->bc" or reduction != "mean":
                raise NotImplementedError(f"Reduce stub: {pattern} {reduction}")

        def forward(self, x):
            return x.mean((2, 3))
    layers.Reduce = Reduce


def realistic_configs(spandrel):
    """The layouts published models use, where the small test configs would hide a cost that grows
    with width or depth (PLKSR's 17x17 kernels over 64 channels: the cliff of issue 37)."""
    arch = lambda rel: refs.spandrel_arch(spandrel, rel)  # noqa: E731
    PLKSR = arch("PLKSR/__arch/PLKSR.py").PLKSR
    RealPLKSR = arch("PLKSR/__arch/RealPLKSR.py").RealPLKSR
    Compact = arch("Compact/__arch/SRVGG.py").SRVGGNetCompact
    RRDBNet = arch("ESRGAN/__arch/RRDB.py").RRDBNet
    SPAN = arch("SPAN/__arch/span.py").SPAN
    einops_reduce_stub()
    OmniSR = arch("OmniSR/__arch/OmniSR.py").OmniSR
    cugan = arch("RealCUGAN/__arch/upcunet_v3.py")

    def span():
        model = SPAN(num_in_ch=3, num_out_ch=3, feature_channels=48, upscale=4)
        model.scale_after_seeding = {"conv_1.": 1 / 255.0}  # as make_references' SPAN: no x255 blow-up
        return model

    # name: (make, seed, sizes[, kind])
    return {
        # OpenModelDB's PLKSR / RealPLKSR layout: dim 64, 28 blocks, 17x17 partial kernels, x4
        "plksr-d64-x4-28b": (lambda: PLKSR(dim=64, n_blocks=28, upscaling_factor=4, kernel_size=17), 3701,
                             [(64, 64), (128, 128)]),
        "realplksr-d64-x4-28b": (lambda: RealPLKSR(dim=64, n_blocks=28, upscaling_factor=4), 3702, [(64, 64), (128, 128)]),
        "realplksr-d64-x2-28b-dysample": (lambda: RealPLKSR(dim=64, n_blocks=28, upscaling_factor=2, dysample=True),
                                          3703, [(64, 64)]),
        # Real-ESRGAN's general / anime video models (realesr-general-x4v3, animevideov3)
        "compact-64x16-x4": (lambda: Compact(num_feat=64, num_conv=16, upscale=4), 3704, [(64, 64), (320, 180)]),
        # ESRGAN: RealESRGAN_x4plus_anime_6B's layout (the 23-block x4plus is 4x its cost a pixel, the
        # same layers: too slow for the grid's few minutes in eager fp32)
        "esrgan-6b-x4": (lambda: RRDBNet(num_filters=64, num_blocks=6, scale=4), 3707, [(64, 64), (128, 128)]),
        "span-f48-x4": (span, 3708, [(64, 64), (320, 180)]),
        # OmniSR x4 (published: 64 features, 5 groups of 1 block, window 8). Its forward needs
        # einops' ellipsis patterns, which Debian lacks and the stubs do not cover: weights only,
        # no eager time (kind "untimed").
        "omnisr-64-x4": (lambda: OmniSR(num_feat=64, block_num=1, res_num=5, window_size=8, up_scale=4), 3709,
                         [(64, 64), (128, 128)], "untimed"),
        "realcugan-2x": (lambda: cugan.UpCunet2x(in_channels=3, out_channels=3), 3710, [(64, 64), (256, 256)]),
    }


def small_configs(spandrel):
    """make_references.py's configurations (the committed tests/data/arch checkpoints), but for
    RIFE and SRFormer, whose upstream files are not spandrel's."""
    configs = {}
    for family in ("span", "swinir", "hat", "dat", "safmn", "plksr", "mosr", "drunet", "nafnet", "fbcnn", "scunet",
                   "swin2sr", "drct", "atd"):
        for name, (make, seed, _size, *kind) in getattr(refs, family + "_configs")(spandrel).items():
            configs[name] = (make, seed, SMALL_AND_FRAME, kind[0] if kind else "")
    return configs


def forward_of(model, kind):
    """The call that runs the network on x, and the state dict framelift reads (the wrappers of
    DRUNet and FBCNN hold the upstream network as .net)."""
    if kind == "fbcnn":
        return (lambda x: model(x)[0]), model.net.state_dict()
    if kind == "drunet":
        return model, model.net.state_dict()
    return model, model.state_dict()


def time_calls(fn, x, runs, clock):
    with torch.inference_mode():
        t0 = clock()
        fn(x)  # warm-up: oneDNN's primitives
        warm = clock() - t0
        # A path over 10 s a call (channels_last's cliffs) is timed once more, not N times.
        times = []
        for _ in range(1 if warm > 10 else runs):
            t0 = clock()
            fn(x)
            times.append(clock() - t0)
    return statistics.median(times) * 1e3


def run_row(name, make, seed, sizes, kind, outdir, runs, clock):
    model = refs.seeded(make(), seed).eval()
    fn, state = forward_of(model, kind)
    pth = os.path.join(outdir, name + ".pth")
    torch.save(state, pth)
    channels = 1 if kind == "grey" else 3
    rows = []
    for w, h in sizes if kind != "untimed" else []:
        g = torch.Generator().manual_seed(37)
        x = torch.rand(1, channels, h, w, generator=g)
        model.to(memory_format=torch.contiguous_format)
        nchw = time_calls(fn, x.contiguous(), runs, clock)
        model.to(memory_format=torch.channels_last)
        cl = time_calls(fn, x.to(memory_format=torch.channels_last), runs, clock)
        rows.append({"name": name, "size": f"{w}x{h}", "nchw_ms": nchw, "channels_last_ms": cl})
        print(f"{name:34} {w}x{h:<5} nchw {nchw:10.2f} ms  channels_last {cl:10.2f} ms", flush=True)
    entry = f"{name}={pth}@" + ",".join(f"{w}x{h}" for w, h in sizes)
    return rows, entry


def main():
    args = sys.argv[1:]
    opts = {"--runs": "5", "--threads": str(os.cpu_count()), "--only": "", "--clock": "wall"}
    for key in list(opts):
        if key in args:
            at = args.index(key)
            opts[key] = args[at + 1]
            del args[at:at + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    spandrel, outdir = args
    configs = {name: (make, seed, sizes, kind[0] if kind else "")
               for name, (make, seed, sizes, *kind) in realistic_configs(spandrel).items()}
    configs.update(small_configs(spandrel))
    if outdir == "--list":
        print("\n".join(configs))
        return
    os.makedirs(outdir, exist_ok=True)
    torch.set_num_threads(int(opts["--threads"]))
    only = [n for n in opts["--only"].split(",") if n]
    unknown = [n for n in only if n not in configs]
    if unknown:
        sys.exit(f"pytorch_grid.py: --only: unknown network {', '.join(unknown)}")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, median of {opts['--runs']} calls", flush=True)
    rows, entries = [], []
    for name in only or list(configs):
        make, seed, sizes, kind = configs[name]
        clock = time.thread_time if opts["--clock"] == "cpu" else time.perf_counter
        r, e = run_row(name, make, seed, sizes, kind, outdir, int(opts["--runs"]), clock)
        rows += r
        entries.append(e)
    with open(os.path.join(outdir, "pytorch.json"), "w") as f:
        json.dump({"torch": torch.__version__, "threads": torch.get_num_threads(), "clock": opts["--clock"], "rows": rows},
                  f, indent=2)
    with open(os.path.join(outdir, "entries.txt"), "w") as f:
        f.write("\n".join(entries) + "\n")


if __name__ == "__main__":
    main()
