#!/usr/bin/env bash
# Runs every fuzz target of the module, one after the other, each for the
# same fixed time or number of executions, and prints a line per target.
#
#   scripts/fuzz.sh [FUZZTIME [REGEXP]]
#
# FUZZTIME is a time (10s, the default and what the tests run; 5m; 1h)
# or a number of executions (10000000x). REGEXP picks targets by name.
# FUZZ_MAX_SECONDS bounds each target's wall time for long runs: the
# target is then interrupted, which ends its fuzzing cleanly, and its line
# shows how many inputs it ran.
# A time is not passed to go test as -fuzztime: Go 1.26's fuzzing
# coordinator can fail a target with "context deadline exceeded" when its
# -fuzztime runs out while a worker is busy (golang/go#75804, fixed in
# 1.27), which failed CI on a loaded machine with no failing input. The
# target instead runs for an unbounded count and is interrupted after the
# time, as FUZZ_MAX_SECONDS does; its test binary is built (and its seed
# corpus run) first, so the time is all fuzzing.
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
trap 'rm -f "$log" "$log.note"' EXIT
count=$fuzztime limit=${FUZZ_MAX_SECONDS:-}
case $fuzztime in
  *x) ;;
  *[0-9][smh]) count=1000000000x limit=$fuzztime ;;
  *) echo "fuzz.sh: FUZZTIME $fuzztime is neither a time (10s, 5m, 1h) nor a count (1000x)" >&2; exit 2 ;;
esac
# interrupted tells a failure the interrupt made from one an input made:
# a worker that the interrupt reached before the coordinator did is
# reported "hung or terminated unexpectedly" with the input it was
# running (seen in CI at 9.4 s of a 10 s run). Such an input is run again
# alone, bounded in time: when it passes, the failure was the interrupt's
# and the input written to testdata is removed; a real crash or hang
# fails again.
interrupted() {
  grep -q 'fuzzing process hung or terminated unexpectedly' "$log" || return 1
  local input
  input=$(grep -o 'testdata/fuzz/[A-Za-z0-9_]*/[0-9a-f]*' "$log" | head -1)
  [ -n "$input" ] || return 1
  local dir
  dir=$(go list -f '{{.Dir}}' "$1")
  timeout 120 go test -count=1 -run "^$2/${input##*/}\$" "$1" </dev/null >/dev/null 2>&1 || return 1
  if ! git ls-files --error-unmatch "$dir/$input" >/dev/null 2>&1; then
    rm -f "$dir/$input"
    rmdir "$dir/testdata/fuzz/$2" "$dir/testdata/fuzz" "$dir/testdata" 2>/dev/null || true
  fi
  echo "     $2: the interrupt reached a worker first; its input ${input##*/} passes alone" >>"$log.note"
}
while read -r pkg target; do
  rc=0
  if [ "$count" != "$fuzztime" ]; then
    go test -run '^$' -fuzz "^$target\$" -fuzztime 1x "$pkg" </dev/null >"$log" 2>&1 || rc=$?
  fi
  start=$EPOCHREALTIME
  cap=()
  if [ -n "$limit" ]; then
    cap=(timeout -s INT "$limit")
  fi
  if [ $rc = 0 ]; then
    "${cap[@]}" go test -run '^$' -fuzz "^$target\$" -fuzztime "$count" -fuzzminimizetime 100x "$pkg" </dev/null >"$log" 2>&1 || rc=$?
  fi
  # 124: stopped at the time limit: a pass when go test said so, or when
  # it was still gathering its baseline (the seeds of a slow target on a
  # loaded machine) and reported no failure; a failure prints --- FAIL.
  if [ $rc = 0 ] || { [ $rc = 124 ] && { grep -q '^PASS$' "$log" || ! grep -qE '^(--- FAIL|FAIL|panic:)|fatal error' "$log"; }; }; then
    res=ok
  elif [ $rc = 124 ] && interrupted "$pkg" "$target"; then
    res=ok
  else
    res=FAIL
    fail=1
  fi
  secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
  execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | awk '{ print $2 }' || true)
  printf '%-4s %-16s %-15s %11s execs %6ss\n' "$res" "${pkg#bloop/}" "$target" "${execs:-?}" "$secs"
  if [ -s "$log.note" ]; then
    cat "$log.note"
    rm -f "$log.note"
  fi
  if [ $res = FAIL ]; then
    grep -v '^fuzz: elapsed' "$log" | head -60
  fi
done <<<"$targets"
exit $fail
