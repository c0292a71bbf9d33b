#!/usr/bin/env bash
# Wall time and peak memory of `bloop struct` at -j1 and -j2 on real optimized
# binaries with separate debug info, beside `objdump -d -l` on the same binary
# in the same run. Needs: apt-get install libstdc++6-12-dbg libgsl-dbg python3.11-dbg
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o /tmp/bloop-bench ./cmd/bloop
bins=(/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30
      "$(readlink -f /usr/lib/x86_64-linux-gnu/libgsl.so.27)"
      /usr/bin/python3.11)
measure() { /usr/bin/time -f "%e s  %M KB" "$@" >/dev/null 2>/tmp/bench.err || true; tail -1 /tmp/bench.err; }
printf '%-45s %-22s %-22s %-22s\n' binary "bloop -j1" "bloop -j2" "objdump -d -l"
for b in "${bins[@]}"; do
  [ -e "$b" ] || { echo "skip $b (not installed)"; continue; }
  printf '%-45s %-22s %-22s %-22s\n' "$(basename "$b")" \
    "$(measure /tmp/bloop-bench struct -j1 -o /dev/null "$b")" \
    "$(measure /tmp/bloop-bench struct -j2 -o /dev/null "$b")" \
    "$(measure objdump -d -l "$b")"
done
