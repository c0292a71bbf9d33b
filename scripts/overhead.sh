#!/usr/bin/env bash
# Overhead of `bloop record`: runs each program RUNS times (default 5)
# alone and under recording, in rotation, and prints every run, then per
# program the slowdown of the median recorded run against the median plain
# one: of the program's own wall time (the sampling cost) and, for bloop,
# of the whole command (its start and exit too), and how much of the last
# recording unwinds.
#
#   scripts/overhead.sh                     the two programs below
#   scripts/overhead.sh PROGRAM [ARGS...]   one program of your own
#
# Default programs, each about 2.5 s:
#   flat  testdata/bin/hot-gcc12-O2 1500000000   one loop, a shallow stack
#   deep  testdata/prof/bin/deep-gcc12-O2 12000  recursion to 599 frames,
#         qsort callbacks, libm: stack copies of up to 25 KiB
#
# Environment: RUNS (5), FREQ (1000 Hz), RECORD_FLAGS (more record flags:
# "--stack 65528" for the full stack copy, "--stack 8" for sampling with
# no stack copy), PEERS (1, the default when perf works: also time Linux
# perf in the same rotation, `perf record -e cpu-clock` without call
# chains, the machine's floor for sampling at FREQ, and with
# `--call-graph dwarf,32768`, which copies stacks as bloop does; 0: not).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
FREQ=${FREQ:-1000}
read -ra record_flags <<<"${RECORD_FLAGS:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/bloop" ./cmd/bloop

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

if [ -z "${PEERS:-}" ]; then
  PEERS=0
  if command -v perf >/dev/null && perf record -q -e cpu-clock -o "$tmp/p.data" -- true >/dev/null 2>&1; then
    PEERS=1
  fi
fi

# The ways a program is run, in turn: alone, under bloop record, and
# (PEERS=1) under perf record without and with stacks. Each runs the
# program through $tmp/clock, which notes the program's own start and end:
# perf 6.1 waits up to a second at exit for its reader thread's poll, so
# only the program's own time compares the tools' sampling fairly.
cat >"$tmp/clock" <<'CLOCK'
#!/usr/bin/env bash
s=$EPOCHREALTIME
"$@" >/dev/null
e=$EPOCHREALTIME
echo "$s $e" >"$CLOCK_OUT"
CLOCK
chmod +x "$tmp/clock"
export CLOCK_OUT=$tmp/clock.out
run_plain() { "$tmp/clock" "$@"; }
run_bloop() {
  "$tmp/bloop" record -F "$FREQ" "${record_flags[@]}" -o "$tmp/r.rec" -- "$tmp/clock" "$@" 2>"$tmp/rec.err"
}
run_perf() { perf record -q -e cpu-clock -F "$FREQ" -o "$tmp/p.data" -- "$tmp/clock" "$@" 2>/dev/null; }
run_perf_dwarf() {
  perf record -q -e cpu-clock -F "$FREQ" --call-graph dwarf,32768 -o "$tmp/p.data" -- "$tmp/clock" "$@" 2>/dev/null
}
ways=(plain bloop)
if [ "$PEERS" = 1 ]; then
  ways+=(perf perf_dwarf)
fi

summary=()
# measure NAME PROGRAM [ARGS...]: RUNS rounds of one run each way, then
# a summary line: each way's median and its slowdown against the plain
# median, for the whole command (bloop's start and exit included) and
# for the program's own time.
measure() {
  local name=$1 i w t0 t1 line mp mpi m mi inner
  local -A whole=() own=()
  shift
  for i in $(seq "$RUNS"); do
    line="$name run $i:"
    for w in "${ways[@]}"; do
      t0=$EPOCHREALTIME
      "run_$w" "$@"
      t1=$EPOCHREALTIME
      inner=$(awk '{ printf "%.6f", $2 - $1 }' "$CLOCK_OUT")
      whole[$w]+="$(echo "$t1 - $t0" | bc -l) "
      own[$w]+="$inner "
      line+=$(printf ' %s %.3fs (own %.3fs),' "${w/_/ }" "$(echo "$t1 - $t0" | bc -l)" "$inner")
    done
    printf '%s\n  bloop: %s\n' "${line%,}" "$(sed 's/^bloop: //' "$tmp/rec.err" | tr '\n' ' ' | sed 's/ *$//')"
  done
  # shellcheck disable=SC2086 # the times are word lists
  mp=$(median ${whole[plain]}) mpi=$(median ${own[plain]})
  line=$(printf '%s (%s) at %d Hz, medians of %d: plain %.3fs' "$name" "$*" "$FREQ" "$RUNS" "$mp")
  for w in "${ways[@]:1}"; do
    # shellcheck disable=SC2086
    m=$(median ${whole[$w]}) mi=$(median ${own[$w]})
    line+=$(printf '; %s: program %.2f%%' "${w/_/ }" "$(echo "($mi / $mpi - 1) * 100" | bc -l)")
    if [ "$w" = bloop ]; then
      line+=$(printf ', whole command %.2f%%' "$(echo "($m / $mp - 1) * 100" | bc -l)")
    fi
  done
  summary+=("$line")
  # The last recording, unwound: the share of samples that reach the
  # thread's entry must not drop with the recording's settings.
  summary+=("  $name, last recording: $("$tmp/bloop" report -c "$tmp/cache" --depth 1 "$tmp/r.rec" | grep '^unwind:' | cut -d'(' -f1 | sed 's/ *$//')")
}

if [ $# -eq 0 ]; then
  measure flat testdata/bin/hot-gcc12-O2 1500000000
  measure deep testdata/prof/bin/deep-gcc12-O2 12000
else
  measure "$(basename "$1")" "$@"
fi
printf '%s\n' "${summary[@]}"
