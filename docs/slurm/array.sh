#!/bin/sh
# One task of a Slurm job array of bloop struct: each task analyses its
# shard of TREE (--shard auto: K and N from the array's variables) into
# OUT/structs, sharing the remote cache CACHE_URL with the others, and
# writes its manifest OUT/manifest-K.jsonl. A job after the array
# (merge.sh) checks and joins the manifests:
#
#   id=$(sbatch --parsable --export=ALL,TREE=/srv/dist/usr,OUT=/scratch/run,CACHE_URL=http://cache:8080/bloop array.sh)
#   sbatch --dependency=afterok:$id --export=ALL,OUT=/scratch/run merge.sh
#
# A task that is killed leaves no partial output; run again (scontrol
# requeue), it takes what the cache holds and analyses the rest.
#SBATCH --job-name=bloop-struct
#SBATCH --array=1-8
#SBATCH --cpus-per-task=1
#SBATCH --requeue
set -eu
: "${TREE:?the tree to analyse}" "${OUT:?the output directory}" "${CACHE_URL:?the remote cache's URL}"
exec "${BLOOP:-bloop}" struct -q -j "${SLURM_CPUS_PER_TASK:-1}" --cache-url "$CACHE_URL" \
  -o "$OUT/structs" --manifest "$OUT/manifest-$SLURM_ARRAY_TASK_ID.jsonl" --shard auto "$TREE"
