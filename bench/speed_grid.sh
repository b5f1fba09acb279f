#!/usr/bin/env bash
# The speed grid (issue 37) in one run: eager PyTorch (bench/pytorch_grid.py: the upstream modules
# from a spandrel checkout, fp32, NCHW and channels_last) and framelift (bench/speed_grid: its
# default path and its plain NCHW fp32 path) on the same weights, sizes and thread count, one after
# the other, then one merged table: ratio = framelift default / eager NCHW fp32 (below 1: faster).
#   bench/speed_grid.sh SPANDREL_CHECKOUT [BUILD_DIR] [RUNS] [JSON_OUT]
# The networks without a spandrel module are timed by framelift alone (no eager column): RIFE
# (tests/data/arch's seeded 4.22 and 4.25, native), the ncnn exports of the npm packages (Compact
# animevideov3 as its native network and on the ncnn graph interpreter, Real-CUGAN, waifu2x), SRFormer.
# Environment: FRAMELIFT_GRID_ONLY=NAME,... (rows of the PyTorch side to run; the framelift-only rows
# are skipped then), FRAMELIFT_GRID_THREADS (default: this process's CPUs), FRAMELIFT_GRID_CLOCK=cpu
# (both sides time the calling thread's CPU time: with FRAMELIFT_GRID_THREADS=1, the way to a table
# on a loaded machine; default wall).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
spandrel=${1:?usage: bench/speed_grid.sh SPANDREL_CHECKOUT [BUILD_DIR] [RUNS] [JSON_OUT]}
build=${2:-$here/build}
runs=${3:-5}
json_out=${4:-$build/speed-grid.json}
threads=${FRAMELIFT_GRID_THREADS:-$(nproc)}
clock=${FRAMELIFT_GRID_CLOCK:-wall}
[ -d "$spandrel/libs/spandrel/spandrel/architectures" ] || { echo "bench/speed_grid.sh: $spandrel: not a spandrel checkout" >&2; exit 1; }
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "bench/speed_grid.sh: python3-torch missing (apt-get install python3-torch)" >&2; exit 1; }
cmake --build "$build" --target speed_grid >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Row by row, eager PyTorch then framelift on the same weights, so that a change in the machine's
# load falls on both sides of a row.
if [ -n "${FRAMELIFT_GRID_ONLY:-}" ]; then names=${FRAMELIFT_GRID_ONLY//,/ }
else names=$(/usr/bin/python3 "$here/bench/pytorch_grid.py" "$spandrel" --list); fi
for name in $names; do
  /usr/bin/python3 "$here/bench/pytorch_grid.py" "$spandrel" "$work/$name" --runs "$runs" --threads "$threads" --clock "$clock" --only "$name" |
    tail -n +2
  mapfile -t entry <"$work/$name/entries.txt"
  "$build/speed_grid" --runs "$runs" --threads "$threads" --clock "$clock" --json "$work/$name/framelift.json" "${entry[@]}" |
    tail -n +6
done
# The networks without a spandrel module: framelift alone.
others=()
if [ -z "${FRAMELIFT_GRID_ONLY:-}" ]; then
  arch=$here/tests/data/arch
  npm=$here/.deps/npm/waifu2x/package
  others+=("rife:rife-4.22-narrow=$arch/rife-4.22-narrow.pth@64x64,256x256"
           "rife:rife-4.25-narrow=$arch/rife-4.25-narrow.pth@64x64,256x256"
           "srformer-light-x3=$arch/srformer-light-x3.pth@64x64,256x256"
           "srformer-x2-w10=$arch/srformer-x2-w10.pth@64x64,256x256")
  if [ -d "$npm" ]; then
    others+=("animevideov3-x4-ncnn-native=$npm/real-esrgan/models/realesr-animevideov3-x4.param@64x64,320x180"
             "ncnn-graph:animevideov3-x4-ncnn-graph=$npm/real-esrgan/models/realesr-animevideov3-x4.param@64x64,320x180"
             "realcugan-up2x-ncnn=$npm/real-cugan/models-se/up2x-no-denoise.param@64x64,256x256"
             "waifu2x-upconv7-ncnn=$npm/waifu2x/models-upconv_7_anime_style_art_rgb/noise0_scale2.0x_model.param@64x64,256x256"
             "ncnn-graph:waifu2x-upconv7-ncnn-graph=$npm/waifu2x/models-upconv_7_anime_style_art_rgb/noise0_scale2.0x_model.param@64x64,256x256")
  fi
  mkdir -p "$work/others"
  "$build/speed_grid" --runs "$runs" --threads "$threads" --clock "$clock" --json "$work/others/framelift.json" "${others[@]}" |
    tail -n +6
fi

/usr/bin/python3 - "$work" "$json_out" <<'EOF'
import glob, json, os, sys
work, out = sys.argv[1:3]
py = {"torch": "?", "rows": []}
fl = None
for d in sorted(glob.glob(os.path.join(work, "*"))):
    if os.path.exists(os.path.join(d, "pytorch.json")):
        p = json.load(open(os.path.join(d, "pytorch.json")))
        py["torch"] = p["torch"]
        py["rows"] += p["rows"]
    f = json.load(open(os.path.join(d, "framelift.json")))
    fl = f if fl is None else dict(fl, rows=fl["rows"] + f["rows"])
eager = {(r["name"], r["size"]): r for r in py["rows"]}
print(f"\n{fl['cpu']} ({fl['flags']}), {fl['threads']} threads, {fl['clock']} clock, torch {py['torch']}, median of {fl['runs']}")
head = ("network", "size", "prec", "framelift", "fl nchw32", "eager nchw", "eager cl", "vs eager", "proxy")
print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
merged = []
for r in fl["rows"]:
    e = eager.get((r["name"], r["size"]))
    cells = [r["name"], r["size"], r["precision"], f"{r['default_ms']:.1f}", f"{r['nchw_fp32_ms']:.1f}"]
    if e:
        cells += [f"{e['nchw_ms']:.1f}", f"{e['channels_last_ms']:.1f}", f"{r['default_ms'] / e['nchw_ms']:.2f}x",
                  f"{r['nchw_fp32_ms'] / e['nchw_ms']:.2f}"]
    else:
        cells += ["-", "-", "-", "-"]
    print("| " + " | ".join(cells) + " |")
    merged.append(dict(r, **({"eager_nchw_ms": e["nchw_ms"], "eager_channels_last_ms": e["channels_last_ms"]} if e else {})))
json.dump({"cpu": fl["cpu"], "flags": fl["flags"], "threads": fl["threads"], "torch": py["torch"], "rows": merged},
          open(out, "w"), indent=2)
print(f"\nvs eager: framelift default / eager NCHW fp32 (below 1: framelift faster); proxy: framelift's own NCHW fp32 "
      f"path / eager NCHW fp32 (the quick guard's reference; how closely it tracks eager: docs/performance.md). JSON: {out}")
EOF
