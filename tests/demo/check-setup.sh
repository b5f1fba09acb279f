#!/usr/bin/env bash
# scripts/setup.sh's promises (README, docs/build.md): one `setup: PHASE: ...` line per phase in
# order and a last `setup: next:` line; the default builds only the `framelift` program; the
# compiler's output goes to build/setup.log; a failed phase prints the log's error lines and exits
# 1; an unknown option is one line and exit 2. Run on the configured tree (everything up to date).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
fail() { echo "check-setup: $*" >&2; exit 1; }

out=$(scripts/setup.sh)
echo "$out"
phases=$(sed -n 's/^setup: \([a-z]*\):.*/\1/p' <<<"$out" | tr '\n' ' ')
[ "$phases" = "apt npm configure build models next " ] || fail "phases were '$phases'"
[ "$(grep -vc '^setup: ' <<<"$out")" = 0 ] || fail "lines other than 'setup: ...' on stdout"
grep -q '^setup: build: the framelift program (' <<<"$out" || fail "the build line does not say it built the program only"
[ -s build/setup.log ] || fail "build/setup.log is empty"

# What the default build asks ninja for: the program's target and nothing else (a test binary
# would be named tests/test_...). `ninja -n` after a real `cmake --build` lists nothing to do, so
# ask what the program target needs and check that no test is in it.
needed=$(ninja -C build -t inputs framelift_cli 2>/dev/null || true)
[ -n "$needed" ] || fail "ninja -t inputs framelift_cli listed nothing"
! grep -q 'tests/' <<<"$needed" || fail "the program's target pulls in test files"
grep -q 'src/cli/main.cpp' <<<"$needed" || fail "the program's target does not compile src/cli/main.cpp"

# A failing phase: a cmake that fails as a broken configure would.
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
printf '#!/bin/sh\necho "CMake Error at CMakeLists.txt:1: boom from the fake cmake"\nexit 1\n' >"$fake/cmake"
chmod +x "$fake/cmake"
set +e
err=$(PATH="$fake:$PATH" scripts/setup.sh 2>&1 >/dev/null)
rc=$?
set -e
[ $rc = 1 ] || fail "a failed configure exited $rc, not 1"
grep -q '^setup: configure failed; the end of build/setup.log:' <<<"$err" || fail "no 'configure failed' line: $err"
grep -q 'boom from the fake cmake' <<<"$err" || fail "the log's error line was not shown: $err"

set +e
err=$(scripts/setup.sh --frobnicate 2>&1 >/dev/null)
rc=$?
set -e
[ $rc = 2 ] || fail "an unknown option exited $rc, not 2"
[ "$(wc -l <<<"$err")" = 1 ] && grep -q -- "--frobnicate" <<<"$err" || fail "unknown option: '$err'"

# Leave the tree configured as it was (the fake run stopped at configure).
scripts/setup.sh >/dev/null
echo "check-setup: ok"
