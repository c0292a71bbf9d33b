#!/usr/bin/env bash
# Overhead of `bloop record`: runs each program RUNS times (default 5)
# without and with recording, alternating plain and recorded runs, and
# prints every run, then one summary line per program with the median
# wall times and the slowdown of the recorded median.
#
#   scripts/overhead.sh                     the two programs below
#   scripts/overhead.sh PROGRAM [ARGS...]   one program of your own
#
# Default programs, each about 2.5 s:
#   flat  testdata/bin/hot-gcc12-O2 1500000000   one loop, a shallow stack
#   deep  testdata/prof/bin/deep-gcc12-O2 12000  recursion to 599 frames,
#         qsort callbacks, libm: stack copies of up to 25 KiB
#
# Environment: RUNS (5), FREQ (1000 Hz), RECORD_FLAGS (more record flags:
# "--stack 65528" for the full stack copy, "--stack 8" for sampling with
# no stack copy, the least a recording costs on the machine).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
FREQ=${FREQ:-1000}
read -ra record_flags <<<"${RECORD_FLAGS:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/bloop" ./cmd/bloop

now() { date +%s.%N; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

summary=()
# measure NAME PROGRAM [ARGS...]: RUNS pairs of runs, then a summary line.
measure() {
  local name=$1 plain=() rec=() i t0 t1 t2 mp mr
  shift
  for i in $(seq "$RUNS"); do
    t0=$(now); "$@" >/dev/null; t1=$(now)
    "$tmp/bloop" record -F "$FREQ" "${record_flags[@]}" -o "$tmp/r.rec" -- "$@" >/dev/null 2>"$tmp/rec.err"; t2=$(now)
    plain+=("$(echo "$t1 - $t0" | bc -l)")
    rec+=("$(echo "$t2 - $t1" | bc -l)")
    printf '%s run %d: %.3fs plain, %.3fs recorded (%s)\n' "$name" "$i" "${plain[-1]}" "${rec[-1]}" \
      "$(sed 's/^bloop: //' "$tmp/rec.err" | tr '\n' ' ' | sed 's/ *$//')"
  done
  mp=$(median "${plain[@]}")
  mr=$(median "${rec[@]}")
  summary+=("$(printf '%s (%s): median %.3fs plain, %.3fs recorded at %d Hz: slowdown %.2f%% (%d pairs)' \
    "$name" "$*" "$mp" "$mr" "$FREQ" "$(echo "($mr / $mp - 1) * 100" | bc -l)" "$RUNS")")
}

if [ $# -eq 0 ]; then
  measure flat testdata/bin/hot-gcc12-O2 1500000000
  measure deep testdata/prof/bin/deep-gcc12-O2 12000
else
  measure "$(basename "$1")" "$@"
fi
printf '%s\n' "${summary[@]}"
