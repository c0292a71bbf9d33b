#!/usr/bin/env bash
# Runs `bloop struct -v` over every ELF file below DIR, each with a time and
# memory bound, and prints a table of outcomes:
#   ok         written, no problem worked around
#   problems   written; procedures with problems worked around (-v kinds)
#   corrupt    written; the loader repaired or ignored corrupt data (-v kinds)
#   refused    exit 1 with a one-line error (not ELF we read, unsupported, ...)
#   skipped    procedures left out of the output (must never happen)
#   timeout    over the time bound
#   memory     over the memory bound
#   crash      anything else: a panic, a signal, an error that is not one line
# then the files of every outcome but ok, and the slowest files.
# Usage: scripts/sweep.sh [-c] [-t SECONDS] [-m MB] [-j PARALLEL] [-o RESULTS.tsv] DIR...
#   -c  in compat mode (--compat hpcstruct): Dyninst's decoding, names and
#       parse, which the default mode never runs
set -euo pipefail
cd "$(dirname "$0")/.."
tmax=60 mmax=4096 par=$(nproc) results="" mode=""
while getopts ct:m:j:o: opt; do
  case $opt in
    c) mode="--compat hpcstruct" ;;
    t) tmax=$OPTARG ;;
    m) mmax=$OPTARG ;;
    j) par=$OPTARG ;;
    o) results=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: scripts/sweep.sh [-c] [-t SECONDS] [-m MB] [-j PARALLEL] [-o RESULTS.tsv] DIR..." >&2; exit 2; }
export SWEEP_MODE=$mode
work=$(mktemp -d)
# A stopped sweep stops its workers too, and two sweeps do not share a
# binary.
trap 'rm -rf "$work"' EXIT
trap 'trap - INT TERM; kill 0' INT TERM
CGO_ENABLED=0 go build -o "$work/bloop" ./cmd/bloop
[ -n "$results" ] || results=$work/results.tsv

# One file: prints "outcome<TAB>seconds<TAB>MB<TAB>path<TAB>detail".
one() {
  local f=$1 tmax=$2 mmax=$3 work=$4
  local err out rc secs kb detail outcome
  err=$(mktemp -p "$work") out=$(mktemp -p "$work")
  # The address-space limit is a safety net well above the bound: Go
  # reserves more address space than it touches. The bound is checked on
  # the peak resident size that time(1) reports.
  set +e
  ( ulimit -v $((mmax * 1024 * 4)); exec /usr/bin/time -f "%e %M" -o "$out" \
      timeout -k 5 "$tmax" "$work/bloop" struct $SWEEP_MODE --nocache -j1 -v -o /dev/null "$f" ) 2>"$err" >/dev/null
  rc=$?
  set -e
  read -r secs kb < <(tail -1 "$out" 2>/dev/null || echo "0 0") || true
  secs=${secs:-0} kb=${kb:-0}
  [[ $secs =~ ^[0-9.]+$ ]] || secs=0
  [[ $kb =~ ^[0-9]+$ ]] || kb=0
  detail=""
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    outcome=timeout
  elif [ $rc -eq 0 ]; then
    skipped=$(grep -o ', [0-9]* skipped' "$err" | grep -o '[0-9]*' | tail -1 || true)
    probs=$(grep -E 'procedures with ' "$err" | sed 's/^bloop: [^:]*: //' | paste -sd ';' - || true)
    corrupt=$(grep -E ': corrupt data: ' "$err" | sed 's/^.*: corrupt data: //; s/, first at.*//' | paste -sd ';' - || true)
    if [ -n "$skipped" ] && [ "$skipped" != 0 ]; then
      outcome=skipped detail="$skipped skipped"
    elif [ -n "$corrupt" ]; then
      outcome=corrupt detail="$corrupt${probs:+;$probs}"
    elif [ -n "$probs" ]; then
      outcome=problems detail=$probs
    else
      outcome=ok
    fi
  elif [ $rc -eq 1 ] && [ "$(grep -vc '^bloop: warning' "$err")" -eq 1 ] && grep -q '^bloop: ' "$err"; then
    outcome=refused
    detail=$(grep -v '^bloop: warning' "$err" | sed "s|^bloop: ||; s|$f: ||")
  else
    outcome=crash
    detail="exit $rc: $(grep -m1 -E 'panic|fatal|signal|bloop:' "$err" | cut -c1-200)"
  fi
  if [ "$outcome" = ok ] || [ "$outcome" = problems ] || [ "$outcome" = corrupt ]; then
    if [ $((kb / 1024)) -gt "$mmax" ]; then
      outcome=memory detail="$((kb / 1024)) MB"
    fi
  fi
  printf '%s\t%s\t%d\t%s\t%s\n' "$outcome" "$secs" $((kb / 1024)) "$f" "$detail"
  rm -f "$err" "$out"
}
export -f one

# Every regular ELF file (not symlinks: each file once), by its magic
# number, read by one process for all files.
find "$@" -type f -size +63c -print0 2>/dev/null |
  perl -0 -ne 'chomp; open(my $f, "<", $_) or next; read($f, my $m, 4); print "$_\0" if $m eq "\x7fELF"' \
  > "$work/files"
total=$(tr -cd '\0' < "$work/files" | wc -c)
echo "sweep: $total ELF files below $*; bounds ${tmax}s and ${mmax} MB per file, $par at a time" >&2
# In the background, so that the trap runs as soon as a signal comes.
xargs -0 -P "$par" -I{} bash -c 'one "$@"' _ {} "$tmax" "$mmax" "$work" < "$work/files" > "$results" &
wait $!

printf '\n%-10s %6s\n' outcome files
for o in ok problems corrupt refused skipped timeout memory crash; do
  printf '%-10s %6d\n' "$o" "$(awk -F'\t' -v o="$o" '$1 == o' "$results" | wc -l)"
done
for o in crash timeout memory skipped corrupt refused problems; do
  n=$(awk -F'\t' -v o="$o" '$1 == o' "$results" | wc -l)
  [ "$n" -gt 0 ] || continue
  printf '\n%s:\n' "$o"
  if [ "$o" = refused ]; then
    # Reasons, most common first, with one example file each.
    awk -F'\t' '$1 == "refused" { sub(/ \(.*$/, "", $5); n[$5]++; ex[$5] = $4 } END { for (r in n) printf "%6d  %s  (e.g. %s)\n", n[r], r, ex[r] }' "$results" | sort -rn | head -20
  else
    awk -F'\t' -v o="$o" '$1 == o { printf "  %7.1fs %6d MB  %s  %s\n", $2, $3, $4, $5 }' "$results" | sort -k1 -rn | head -50
  fi
done
printf '\nslowest:\n'
sort -t$'\t' -k2 -rn "$results" | head -10 | awk -F'\t' '{ printf "  %7.1fs %6d MB  %-8s %s\n", $2, $3, $1, $4 }'
