#!/usr/bin/env bash
# bloop diff on structure files of large libraries: wall time (median of
# RUNS, default 3), peak memory, the files' procedures and sizes, and the
# function-level statuses the diff finds. Pairs:
#   - Oniguruma built by gcc 11 and 12, clang 14 and 16 (scripts/onig-build.sh,
#     librust-onig-sys-dev): gcc 11 -> 12, clang 14 -> 16, gcc 12 -> clang 16;
#   - libgsl.so.27 and libc.so.6 (libgsl-dbg, libc6-dbg): hpcstruct's
#     reference file (../shared/hpcstruct-real) against bloop's default mode;
#   - python3.11 (python3.11-dbg): bloop's default mode against --compat hpcstruct.
# Pairs whose inputs are missing are skipped.
#
#   scripts/diff-bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/bloop" ./cmd/bloop
b=$tmp/bloop

pairs=()
if scripts/onig-build.sh "$tmp/onig" gcc-11 gcc-12 clang-14 clang-16 >/dev/null 2>&1; then
  for cc in gcc-11 gcc-12 clang-14 clang-16; do
    "$b" struct -q --nocache -o "$tmp/onig-$cc.hpcstruct" "$tmp/onig/libonig-$cc.so"
  done
  pairs+=("$tmp/onig-gcc-11.hpcstruct $tmp/onig-gcc-12.hpcstruct")
  pairs+=("$tmp/onig-clang-14.hpcstruct $tmp/onig-clang-16.hpcstruct")
  pairs+=("$tmp/onig-gcc-12.hpcstruct $tmp/onig-clang-16.hpcstruct")
else
  echo "diff-bench: Oniguruma not built (compilers or librust-onig-sys-dev missing): skipped" >&2
fi
lib=/usr/lib/x86_64-linux-gnu
for l in libgsl.so.27 libc.so.6; do
  ref=../shared/hpcstruct-real/$l.hpcstruct
  [ "$l" = libgsl.so.27 ] && bin=$lib/libgsl.so.27.0.0 || bin=$lib/$l
  if [ -f "$ref" ] && [ -f "$bin" ]; then
    "$b" struct -q --nocache -o "$tmp/$l.hpcstruct" "$bin"
    pairs+=("$ref $tmp/$l.hpcstruct")
  fi
done
if [ -x /usr/bin/python3.11 ]; then
  "$b" struct -q --nocache -o "$tmp/py-default.hpcstruct" /usr/bin/python3.11
  "$b" struct -q --nocache --compat hpcstruct -o "$tmp/py-compat.hpcstruct" /usr/bin/python3.11
  pairs+=("$tmp/py-default.hpcstruct $tmp/py-compat.hpcstruct")
fi

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
printf '| a | b | procedures a / b | MB a / b | wall (median of %d) | peak MB | summary |\n|---|---|---|---|---|---|---|\n' "$RUNS"
for p in "${pairs[@]}"; do
  set -- $p
  walls=() peak=0
  for i in $(seq "$RUNS"); do
    /usr/bin/time -q -f '%e %M' -o "$tmp/time" "$b" diff "$1" "$2" > "$tmp/out" || [ $? = 1 ]
    read -r w m < "$tmp/time"
    walls+=("$w")
    [ "$m" -gt "$peak" ] && peak=$m
  done
  printf '| %s | %s | %d / %d | %.1f / %.1f | %.2f s | %d | %s |\n' \
    "$(basename "$1")" "$(basename "$2")" "$(grep -c '<P ' "$1")" "$(grep -c '<P ' "$2")" \
    "$(echo "$(stat -c %s "$1") / 1048576" | bc -l)" "$(echo "$(stat -c %s "$2") / 1048576" | bc -l)" \
    "$(median "${walls[@]}")" "$((peak / 1024))" "$(tail -1 "$tmp/out" | sed 's/.*; functions /functions /')"
done
