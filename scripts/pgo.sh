#!/usr/bin/env bash
# Writes cmd/bloop/default.pgo, the CPU profile `go build` optimizes the
# bloop command with (profile-guided optimization: hot calls inlined,
# interface calls devirtualized). The profile is of bloop's own work on
# the kinds of input it is measured on, by a build without the old one:
#   bloop report, cold and warm (and warm again, as it is run most), of
#     a frame-pointer perf.data of a C++ program (testdata/prof/fpwork.cpp),
#     a --call-graph dwarf one of python3.11 (testdata/prof/work.py),
#     a frame-pointer one of g++ compiling (cc1plus: distinct stacks);
#   bloop struct of libstdc++ and libpython3.11.
# Needs perf, g++ and python3.11; about three minutes. Run it again when
# the hot paths move (a profile that no longer matches costs nothing but
# the gain).
#
#   scripts/pgo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -pgo=off -o "$tmp/bloop" ./cmd/bloop
b=$tmp/bloop
mkdir "$tmp/prof"
g++ -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -o "$tmp/fpwork" testdata/prof/fpwork.cpp
perf record -q -F 20000 -g -o "$tmp/fp.data" -- sh -c "$tmp/fpwork 1800 & $tmp/fpwork 1800; wait" >/dev/null 2>&1
perf record -q -F 999 --call-graph dwarf -o "$tmp/py.data" python3.11 testdata/prof/work.py 80000 >/dev/null 2>&1
perf record -q -F 20000 -g -o "$tmp/gxx.data" -- sh -c "for i in 1 2 3 4 5 6; do g++ -O2 -c testdata/src/stl.cpp -o $tmp/o.o; done" >/dev/null 2>&1
n=0
prof() { # prof ARGS...: bloop ARGS with a CPU profile of its own
  n=$((n + 1))
  "$b" "$1" --cpuprofile "$tmp/prof/$n.prof" "${@:2}" >/dev/null
}
for d in fp py gxx; do
  prof report -c "$tmp/cache" --nocache --no-debuginfod "$tmp/$d.data"
  prof report -c "$tmp/cache" --no-debuginfod "$tmp/$d.data" # fills the cache
  for _ in 1 2 3; do
    prof report -c "$tmp/cache" --no-debuginfod "$tmp/$d.data"
  done
done
for l in libstdc++.so.6 libpython3.11.so.1.0; do
  f=$(ldconfig -p | awk -v l="$l" '$1 == l && /x86-64/ {print $NF; exit}')
  [ -n "$f" ] && prof struct --nocache -o /dev/null "$f"
done
go tool pprof -proto "$tmp"/prof/*.prof >cmd/bloop/default.pgo 2>/dev/null
echo "cmd/bloop/default.pgo: $n profiles, $(stat -c %s cmd/bloop/default.pgo) bytes"
