#!/usr/bin/env bash
# Structure cache: time of a miss (empty cache: analyse and store) against
# a hit (copy the stored file), RUNS pairs (default 5), medians and ratio,
# and a check that both wrote the same bytes as an uncached run.
#
#   scripts/cache-bench.sh [BINARY]
#
# Default binary: libstdc++'s debug build (apt-get install libstdc++6-12-dbg).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
bin=${1:-/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30}
[ -f "$bin" ] || { echo "cache-bench: $bin missing" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/bloop" ./cmd/bloop
"$tmp/bloop" struct -q --nocache -o "$tmp/plain.hpcstruct" "$bin"
miss=() hit=()
for i in $(seq "$RUNS"); do
  rm -rf "$tmp/cache"
  t0=$EPOCHREALTIME; "$tmp/bloop" struct -q -c "$tmp/cache" -o "$tmp/miss.hpcstruct" "$bin"
  t1=$EPOCHREALTIME; "$tmp/bloop" struct -q -c "$tmp/cache" -o "$tmp/hit.hpcstruct" "$bin"
  t2=$EPOCHREALTIME
  cmp -s "$tmp/plain.hpcstruct" "$tmp/miss.hpcstruct" && cmp -s "$tmp/plain.hpcstruct" "$tmp/hit.hpcstruct" \
    || { echo "cache-bench: cached output differs from the uncached run" >&2; exit 1; }
  miss+=("$(echo "$t1 - $t0" | bc -l)")
  hit+=("$(echo "$t2 - $t1" | bc -l)")
  printf 'run %d: miss %.3fs, hit %.3fs\n' "$i" "${miss[-1]}" "${hit[-1]}"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
mm=$(median "${miss[@]}")
mh=$(median "${hit[@]}")
printf 'median: miss %.3fs, hit %.3fs: the hit is %.1fx faster (%s, %d bytes, identical to --nocache)\n' \
  "$mm" "$mh" "$(echo "$mm / $mh" | bc -l)" "$(basename "$bin")" "$(stat -c %s "$tmp/plain.hpcstruct")"
