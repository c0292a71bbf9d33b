#!/usr/bin/env bash
# Runs every fuzz target of the module, one after the other, each for the
# same fixed time or number of executions, and prints a line per target.
#
#   scripts/fuzz.sh [FUZZTIME [REGEXP]]
#
# FUZZTIME is go test's -fuzztime: 10s (the default, what the tests run),
# or 10000000x for ten million executions. REGEXP picks targets by name.
# FUZZ_MAX_SECONDS bounds each target's wall time for long runs: the
# target is then interrupted, which ends its fuzzing cleanly, and its line
# shows how many inputs it ran.
# Minimization is capped: on the slow targets (a whole ELF load per input)
# the default minute per new input would leave little time to fuzz.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-10s}
only=${2:-.}
fail=0
# Targets from the sources: no test binary is built to list them.
targets=$(go list -f '{{.ImportPath}} {{.Dir}}' ./... | while read -r pkg dir; do
  grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed "s|^func |$pkg |" || true
done | grep -E " ($only)" || true)
[ -n "$targets" ] || { echo "fuzz.sh: no fuzz target matches $only" >&2; exit 2; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
while read -r pkg target; do
  start=$EPOCHREALTIME
  cap=()
  if [ -n "${FUZZ_MAX_SECONDS:-}" ]; then
    cap=(timeout -s INT "$FUZZ_MAX_SECONDS")
  fi
  rc=0
  "${cap[@]}" go test -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" -fuzzminimizetime 100x "$pkg" >"$log" 2>&1 || rc=$?
  # 124: stopped at FUZZ_MAX_SECONDS, a pass when go test said so.
  if [ $rc = 0 ] || { [ $rc = 124 ] && grep -q '^PASS$' "$log"; }; then
    res=ok
  else
    res=FAIL
    fail=1
  fi
  secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
  execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | awk '{ print $2 }')
  printf '%-4s %-16s %-15s %11s execs %6ss\n' "$res" "${pkg#bloop/}" "$target" "${execs:-?}" "$secs"
  if [ $res = FAIL ]; then
    grep -v '^fuzz: elapsed' "$log" | head -60
  fi
done <<<"$targets"
exit $fail
