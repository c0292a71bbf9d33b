#!/bin/sh
# The job after a bloop struct job array (array.sh): checks that every
# task wrote its manifest, that the tasks split one list alike (the same
# plan, N and digest) and that no input failed, then joins the manifests
# into OUT/manifest.jsonl, the manifest of one unsharded run but for
# times, cache hits and the shard each record names.
#SBATCH --job-name=bloop-merge
set -eu
: "${OUT:?the array's output directory}"
cat "$OUT"/manifest-*.jsonl > "$OUT/manifest.all"
plans=$(sed -n 's/.*"shard":{"k":[0-9]*,\("n":[0-9]*,"plan":"[a-z]*","digest":"[0-9a-f]*"\)}.*/\1/p' "$OUT/manifest.all" | sort -u)
if [ -z "$plans" ] || [ "$(echo "$plans" | wc -l)" -ne 1 ]; then
  echo "merge: the tasks did not split one list alike: ${plans:-no shard named}" >&2
  exit 1
fi
n=${plans#'"n":'}
n=${n%%,*}
tasks=$(ls "$OUT"/manifest-*.jsonl | wc -l)
if [ "$tasks" -ne "$n" ]; then
  echo "merge: $tasks manifests in $OUT for $n shards" >&2
  exit 1
fi
if grep -E '"outcome":"(failed|refused)"' "$OUT/manifest.all" >&2; then
  echo "merge: inputs above not written" >&2
  exit 1
fi
mv "$OUT/manifest.all" "$OUT/manifest.jsonl"
echo "merge: $(wc -l < "$OUT/manifest.jsonl") inputs from $n shards ($plans)"
