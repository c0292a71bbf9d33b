#!/usr/bin/env bash
# Overhead of `bloop record` at 1 kHz: runs a CPU-bound corpus program
# RUNS times (default 5) without and with recording, alternating, and
# prints the median wall times and the median slowdown.
#
#   scripts/overhead.sh [PROGRAM [ARGS...]]
#
# Default program: testdata/bin/hot-gcc12-O2 with 1.5e9 iterations (~2.5 s).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
FREQ=${FREQ:-1000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/bloop" ./cmd/bloop
if [ $# -eq 0 ]; then
  set -- testdata/bin/hot-gcc12-O2 1500000000
fi
now() { date +%s.%N; }
plain=() rec=()
for i in $(seq "$RUNS"); do
  t0=$(now); "$@" >/dev/null; t1=$(now)
  "$tmp/bloop" record -F "$FREQ" -o "$tmp/r.rec" -- "$@" >/dev/null 2>"$tmp/rec.err"; t2=$(now)
  plain+=("$(echo "$t1 - $t0" | bc -l)")
  rec+=("$(echo "$t2 - $t1" | bc -l)")
  printf 'run %d: %.3fs plain, %.3fs recorded (%s)\n' "$i" "${plain[-1]}" "${rec[-1]}" "$(sed 's/^bloop: //' "$tmp/rec.err")"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
mp=$(median "${plain[@]}")
mr=$(median "${rec[@]}")
printf 'median: %.3fs plain, %.3fs recorded at %d Hz: slowdown %.2f%%\n' "$mp" "$mr" "$FREQ" "$(echo "($mr / $mp - 1) * 100" | bc -l)"
