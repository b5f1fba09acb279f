#!/usr/bin/python3
"""What libtorch 1.13's oneDNN options would save on framelift's CPU path (issue 17 item 3).

Per-op CPU time of the layers framelift's native Compact and RRDBNet run, bf16 channels-last at
320x236, one intra-op thread, timed with the thread's CPU clock (time.thread_time) so that a
shared, noisy machine changes the numbers little: other processes take wall time, not this
thread's CPU time. Alternating calls, median of ROUNDS. Each option is checked against the plain
call it would replace (max |difference|) before it is timed.

    bench/cpu_ops.py [ROUNDS]

Options: (a) pre-packed oneDNN weights (mkldnn_prepacked::conv2d_prepack, the JIT's own
pre-packing; aten::mkldnn_reorder_conv2d_weight with dense inputs; whole mkldnn-layout tensors),
weights stored channels-last; (b) fused convolution + activation (the pre-packed op's "relu"
attribute, the only one 1.13 fuses), TorchScript freeze + optimize_for_inference in bf16,
PReLU on mkldnn tensors, in-place LeakyReLU; and RRDB's concatenations with reused memory
(framelift's allocator keeps freed blocks, src/infer/memory_budget.cpp).
Docs: docs/performance.md, "Issue 17 item 3".
"""
import statistics
import sys
import time

import torch
import torch.nn.functional as F
import torch.utils.mkldnn as mkldnn_utils

torch.set_num_threads(1)
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 9
CL, BF = torch.channels_last, torch.bfloat16
H, W = 236, 320
torch.manual_seed(0)
x = torch.rand(1, 64, H, W).to(BF).contiguous(memory_format=CL)
w = (torch.randn(64, 64, 3, 3) * 0.05).to(BF)
b = (torch.randn(64) * 0.1).to(BF)
slope = (torch.rand(64) * 0.3).to(BF)
P = torch.ops.mkldnn_prepacked


def timed(cases):
    for f in cases.values():
        f()
    t = {k: [] for k in cases}
    for _ in range(rounds):
        for k, f in cases.items():
            t0 = time.thread_time()
            f()
            t[k].append(time.thread_time() - t0)
    return {k: statistics.median(v) * 1000 for k, v in t.items()}


def report(title, ms, base):
    print(f"\n{title}")
    for k, v in ms.items():
        print(f"  {k:44s} {v:8.2f} ms   {ms[base] / v:5.2f}x of {base}")


def diff(a, b):
    a = a.to_dense() if a.is_mkldnn else a
    return (a.float() - b.float()).abs().max().item()


with torch.inference_mode():
    ref = F.conv2d(x, w, b, 1, 1)
    ctx = P.conv2d_prepack(w, b, [1, 1], [1, 1], [1, 1], 1, [1, 64, H, W], "none")
    ctx_relu = P.conv2d_prepack(w, b, [1, 1], [1, 1], [1, 1], 1, [1, 64, H, W], "relu")
    w_reordered = torch.ops.aten.mkldnn_reorder_conv2d_weight(w.to_mkldnn(), [1, 1], [1, 1], [1, 1], 1)
    conv = torch.nn.Conv2d(64, 64, 3, 1, 1)
    conv.weight.data, conv.bias.data = w.float(), b.float()
    mk_conv = mkldnn_utils.MkldnnConv2d(conv, BF)
    prelu = torch.nn.PReLU(64)
    prelu.weight.data = slope.float()
    mk_prelu = mkldnn_utils.MkldnnPrelu(prelu, BF)
    xm = x.to_mkldnn()
    w_cl = w.contiguous(memory_format=CL)
    try:
        P.conv2d_prepack(w, b, [1, 1], [1, 1], [1, 1], 1, [1, 64, H, W], "leaky_relu")
        print("prepacked conv fuses leaky_relu")
    except RuntimeError as e:
        print("prepacked conv + leaky_relu:", str(e).split("\n")[0])
    checks = {
        "weights channels-last": F.conv2d(x, w_cl, b, 1, 1),
        "prepacked (conv2d_prepack)": P.conv2d_run(x, ctx),
        "reordered weight, dense input": torch.mkldnn_convolution(x, w_reordered, b, [1, 1], [1, 1], [1, 1], 1),
        "mkldnn tensors": mk_conv(xm),
    }
    for k, v in checks.items():
        print(f"max |d| {k:32s} {diff(v, ref):.4g}")
    print(f"max |d| {'prepacked relu':32s} {diff(P.conv2d_run(x, ctx_relu), ref.relu()):.4g}")
    print(f"max |d| {'prelu on mkldnn tensors':32s} {diff(mk_prelu(xm), F.prelu(x, slope)):.4g}")

    report("(a) 3x3 conv 64->64, 320x236", timed({
        "plain (framelift)": lambda: F.conv2d(x, w, b, 1, 1),
        "weights channels-last": lambda: F.conv2d(x, w_cl, b, 1, 1),
        "prepacked (conv2d_prepack)": lambda: P.conv2d_run(x, ctx),
        "reordered weight, dense input": lambda: torch.mkldnn_convolution(x, w_reordered, b, [1, 1], [1, 1], [1, 1], 1),
        "mkldnn tensors (input already converted)": lambda: mk_conv(xm),
        "to_mkldnn + to_dense of the activation": lambda: xm.to_dense().to_mkldnn(),
    }), "plain (framelift)")

    report("(b) conv + activation, activations alone", timed({
        "conv + prelu (Compact, framelift)": lambda: F.prelu(F.conv2d(x, w, b, 1, 1), slope),
        "conv + relu_": lambda: F.relu_(F.conv2d(x, w, b, 1, 1)),
        "prepacked conv, fused relu": lambda: P.conv2d_run(x, ctx_relu),
        "prelu alone": lambda: F.prelu(x, slope),
        "prelu on mkldnn tensors": lambda: mk_prelu(xm),
        "leaky_relu_ alone (RRDB, framelift)": lambda: F.leaky_relu_(x, 0.2),
    }), "conv + prelu (Compact, framelift)")

    # RRDB dense block, nf 64 / gc 32: the convs against the concatenations and activations.
    feats = [x] + [torch.rand(1, 32, H, W).to(BF).contiguous(memory_format=CL) for _ in range(4)]
    ws = [(torch.randn(32 if i < 4 else 64, 64 + 32 * i, 3, 3) * 0.03).to(BF) for i in range(5)]
    cats = [torch.cat(feats[:i + 1], 1) for i in range(5)]
    outs = [torch.empty_like(c) for c in cats]
    report("RRDB dense block (5 convs), 320x236", timed({
        "5 convs": lambda: [F.conv2d(cats[i], ws[i], None, 1, 1) for i in range(5)],
        "4 concatenations, reused memory": lambda: [torch.cat(feats[:i + 1], 1, out=outs[i]) for i in range(1, 5)],
        "4 leaky_relu_ (32 channels)": lambda: [F.leaky_relu_(f, 0.2) for f in feats[1:]],
    }), "5 convs")

    class Chain(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.prelu = torch.nn.Conv2d(64, 64, 3, 1, 1), torch.nn.PReLU(64)

        def forward(self, t):
            return self.prelu(self.conv(t))

    net = Chain().eval().to(memory_format=CL).to(BF)
    opt = torch.jit.optimize_for_inference(torch.jit.trace(net, x))
    print("\nTorchScript optimize_for_inference, bf16: graph ops",
          sorted({n.kind() for n in opt.graph.nodes()} - {"prim::Constant", "prim::GetAttr"}))
