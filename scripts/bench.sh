#!/usr/bin/env bash
# Wall time and peak memory of `bloop struct` at -j1 and -j2 beside
# `objdump -d -l` on the same binary, in the same run, with the ratios:
# bloop -j2 / objdump (lower is better) and -j1 / -j2 (the speedup from the
# second core). Real optimized binaries with separate debug info; a binary
# whose package is not installed is skipped. Needs:
#   apt-get install libstdc++6-12-dbg libgsl-dbg python3.11-dbg openjdk-17-dbg \
#                   linux-image-$(uname -r | sed 's/-[a-z0-9]*$//')-cloud-amd64-dbg
# Usage: scripts/bench.sh [-n RUNS] [-b] [-t SECONDS] [BINARY...]
#   -n RUNS     repeat each command and report the median (default 1)
#   -b          bloop only, no objdump (quick)
#   -t SECONDS  bound on one command (default 600; objdump -d -l on vmlinux
#               runs for more than 20 minutes): shown as "> SECONDS"
set -euo pipefail
cd "$(dirname "$0")/.."
runs=1 objdump=1 limit=600
while getopts n:bt: opt; do
  case $opt in
    n) runs=$OPTARG ;;
    b) objdump=0 ;;
    t) limit=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
CGO_ENABLED=0 go build -o /tmp/bloop-bench ./cmd/bloop
if [ $# -gt 0 ]; then
  bins=("$@")
else
  vmlinux=$(ls /usr/lib/debug/boot/vmlinux-* 2>/dev/null | sort -V | tail -1 || true)
  bins=(/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30
        "$(readlink -f /usr/lib/x86_64-linux-gnu/libgsl.so.27 2>/dev/null || echo libgsl.so.27)"
        /usr/bin/python3.11
        /usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so
        "${vmlinux:-vmlinux}")
fi

# measure CMD...: prints "seconds KB" (median of $runs runs, by time).
measure() {
  local out=()
  for _ in $(seq "$runs"); do
    if /usr/bin/time -f "%e %M" -o /tmp/bench.time timeout "$limit" "$@" >/dev/null 2>/tmp/bench.err; then
      out+=("$(cat /tmp/bench.time)")
    elif [ "$(tail -1 /tmp/bench.time | cut -d' ' -f1 | cut -d. -f1)" -ge "$limit" ] 2>/dev/null; then
      out+=("timeout 0")
    else
      out+=("fail 0")
    fi
  done
  printf '%s\n' "${out[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p"
}
ratio() {
  if [ "$2" = timeout ]; then awk -v a="$1" -v l="$limit" 'BEGIN { printf "< %.3f", a / l }'; return; fi
  awk -v a="$1" -v b="$2" 'BEGIN { if (a+0 > 0 && b+0 > 0) printf "%.2f", a / b; else printf "-" }'
}
cell() {
  awk -v s="$1" -v k="$2" -v l="$limit" 'BEGIN {
    if (s == "fail") print "failed"; else if (s == "timeout") printf "> %d s", l; else printf "%.1f s %.0f MB", s, k / 1024 }'
}

printf '%-26s %-17s %-17s %-17s %-13s %s\n' binary "bloop -j1" "bloop -j2" "objdump -d -l" "j2/objdump" "j1/j2"
for b in "${bins[@]}"; do
  [ -e "$b" ] || { echo "skip $b (not installed)"; continue; }
  read -r s1 m1 < <(measure /tmp/bloop-bench struct --nocache -j1 -o /dev/null "$b")
  read -r s2 m2 < <(measure /tmp/bloop-bench struct --nocache -j2 -o /dev/null "$b")
  so=- mo=0 ocell=-
  if [ "$objdump" = 1 ]; then
    read -r so mo < <(measure objdump -d -l "$b")
    ocell=$(cell "$so" "$mo")
  fi
  printf '%-26s %-17s %-17s %-17s %-13s %s\n' "$(basename "$b")" "$(cell "$s1" "$m1")" "$(cell "$s2" "$m2")" \
    "$ocell" "$(ratio "$s2" "$so")" "$(ratio "$s1" "$s2")"
done
