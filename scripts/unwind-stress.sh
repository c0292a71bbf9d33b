#!/usr/bin/env bash
# Issue 37's check that unwinding holds under load: TestUnwindPython and
# TestUnwindTwoProcesses (package profile), N times in a row (default 20),
# each run beside two busy loops on the machine's cores; stops at the
# first failure. A recording with samples that did not unwind is kept in
# KEEP (default a temporary directory, printed); dump one with
#   BLOOP_UNWIND_DUMP=FILE go test ./profile -run TestUnwindDump -v
#   scripts/unwind-stress.sh [-n N] [-k KEEP]
set -euo pipefail
cd "$(dirname "$0")/.."
n=20
keep=""
while getopts n:k: opt; do
  case $opt in
    n) n=$OPTARG ;;
    k) keep=$OPTARG ;;
    *) exit 2 ;;
  esac
done
tmp=$(mktemp -d)
[ -n "$keep" ] || keep=$tmp/keep
mkdir -p "$keep"
busy=()
cleanup() {
  for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -f "$tmp/profile.test"
}
trap cleanup EXIT
go test -c -o "$tmp/profile.test" ./profile
for _ in 1 2; do
  sh -c 'while :; do :; done' &
  busy+=($!)
done
echo "recordings that did not fully unwind are kept in $keep"
for i in $(seq 1 "$n"); do
  if ! (cd profile && BLOOP_UNWIND_KEEP=$keep "$tmp/profile.test" -test.run '^(TestUnwindPython|TestUnwindTwoProcesses)$' \
    -test.count=1 -test.v >"$tmp/run.log" 2>&1); then
    grep -E 'samples|FAIL|kept|skip' "$tmp/run.log" || true
    echo "run $i of $n: FAIL (log $tmp/run.log)"
    exit 1
  fi
  if grep -q -- '--- SKIP' "$tmp/run.log"; then
    grep -- 'SKIP' -A1 "$tmp/run.log"
    echo "run $i of $n: skipped, nothing measured"
    exit 1
  fi
  echo "run $i of $n: ok; $(grep -oE '[0-9]+ samples, [0-9.]+% unwound[^;]*' "$tmp/run.log" | paste -sd' ' -)"
done
echo "PASS: $n runs in a row beside two busy loops"
