#!/usr/bin/env bash
# How evenly --shard splits the analysis time, by each plan, in one run:
#   1. a tree of symbolic links to COUNT (default 50) shared libraries of
#      LIBDIR (default /usr/lib/x86_64-linux-gnu), 0.4-40 MB, taken evenly
#      along their sizes (a real distribution's spread of costs);
#   2. one unsharded cold run at -j1 (one input at a time), whose manifest
#      gives each input's analysis time (wall_seconds);
#   3. for each plan (path, cost), the N (default 4) shards run against
#      that run's cache: their manifests say which inputs each took;
#   4. each shard's summed analysis time, and the largest over the mean;
#   5. stability: one more library (the next in size order not already
#      taken) added to the tree, and how many of the others change shard.
#   scripts/shard-bench.sh [-n N] [-c COUNT] [LIBDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
n=4 count=50
while getopts n:c: opt; do
  case $opt in
    n) n=$OPTARG ;;
    c) count=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
libdir=${1:-/usr/lib/x86_64-linux-gnu}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/bloop" ./cmd/bloop
b=$tmp/bloop

# 1. The tree: regular files only (links would name the same file twice).
find "$libdir" -maxdepth 1 -type f -name '*.so*' -size +400k -size -40M -printf '%s %p\n' |
  sort -n > "$tmp/all"
total=$(wc -l < "$tmp/all")
[ "$total" -gt "$count" ] || { echo "shard-bench: only $total libraries of 0.4-40 MB in $libdir" >&2; exit 1; }
mkdir "$tmp/tree"
awk -v c="$count" -v t="$total" '{ i = NR - 1; if (int(i * c / t) != int((i - 1) * c / t) || i == 0) print $2; else print $2 > "/dev/stderr" }' \
  "$tmp/all" > "$tmp/chosen" 2> "$tmp/rest"
while read -r p; do ln -s "$p" "$tmp/tree/"; done < "$tmp/chosen"
mid=$(sed -n "$((count / 2))p" "$tmp/chosen" | xargs stat -L -c %s)
extra=$(while read -r p; do [ "$(stat -L -c %s "$p")" -ge "$mid" ] && { echo "$p"; break; }; done < "$tmp/rest")
echo "tree: $(wc -l < "$tmp/chosen") libraries of $total, $(du -shL "$tmp/tree" | cut -f1); added later: $(basename "$extra")"

# 2. The unsharded cold run.
"$b" struct -q -j1 -c "$tmp/cache" -o "$tmp/whole" --manifest "$tmp/whole.jsonl" "$tmp/tree"

# 3-4. Each plan's shards, warm; their inputs' times from the cold run.
shards() { # PLAN TAG: writes $tmp/TAG-K.jsonl
  for k in $(seq 1 "$n"); do
    "$b" struct -q -j1 -c "$tmp/cache" -o "$tmp/out-$2" --manifest "$tmp/$2-$k.jsonl" \
      --shard "$k/$n" --shard-plan "$1" "$tmp/tree"
  done
}
for plan in path cost; do
  shards "$plan" "$plan"
  echo "plan $plan, N=$n: per-shard analysis seconds (inputs), largest/mean"
  for k in $(seq 1 "$n"); do
    jq -r .rel "$tmp/$plan-$k.jsonl" | sort > "$tmp/rels"
    jq -r '[.rel, .wall_seconds] | @tsv' "$tmp/whole.jsonl" | sort |
      join -t $'\t' "$tmp/rels" - | awk -F'\t' -v k="$k" '{ s += $2; c++ } END { printf "%s %.2f %d\n", k, s, c }'
  done | tee "$tmp/$plan.sums" | awk '{ printf "  shard %s: %6.2f s (%d)\n", $1, $2, $3 }'
  awk '{ s += $2; if ($2 > m) m = $2 } END { printf "  largest %.2f s, mean %.2f s: %.2fx\n", m, s / NR, m / (s / NR) }' "$tmp/$plan.sums"
done

# 5. Stability: one more input.
ln -s "$extra" "$tmp/tree/"
for plan in path cost; do
  shards "$plan" "$plan-added"
  moved=$(for k in $(seq 1 "$n"); do
    jq -r --arg k "$k" '.rel + " " + $k' "$tmp/$plan-$k.jsonl"
  done | sort > "$tmp/before"; for k in $(seq 1 "$n"); do
    jq -r --arg k "$k" '.rel + " " + $k' "$tmp/$plan-added-$k.jsonl"
  done | sort | join - "$tmp/before" | awk '$2 != $3' | wc -l)
  echo "plan $plan: adding $(basename "$extra") moved $moved of the $(wc -l < "$tmp/before") other inputs to another shard"
done
