#!/usr/bin/env bash
# bloop report against perf report on one perf.data file, in the same
# runs (A B A B ...): wall time and peak memory of
#   perf report --stdio --no-children --sort dso,sym
#   bloop report --nocache        (cold: every sampled module analysed)
#   bloop report                  (warm: the structure cache filled once)
# medians and the median of the run-by-run ratios, and a check that each
# module's self share is perf report's within 0.5 points. With BEFORE set
# (a git revision, e.g. main) the bloop of that revision is timed too,
# built from its tree in a temporary directory. With MEAS set (an hpcrun measurement
# directory) bloop report of it is timed, now and at BEFORE.
#
#   scripts/report-bench.sh [PERF.DATA]
#   RUNS=3 BEFORE=main MEAS=dir MODULE_DIR=dir scripts/report-bench.sh py.data
#
# Without PERF.DATA it records one (about 200 MB, 25 s):
#   perf record -F 999 --call-graph dwarf python3.11 testdata/prof/work.py 240000
# or, with FP=1, the frame-pointer (perf record -g) one of a C++ program:
# g++ -O2 (Debian's cc1plus) compiling testdata/src's stl.cpp and
# tmpl.cpp FP_ROUNDS times (default 40: about 190 MB, 2.5 million samples)
# at 20 kHz. cc1plus keeps no frame pointers, so its stacks are short and
# most are distinct (1.7 million nodes): the worst case. With FP=prog,
# that of a C++ program built with frame pointers, as perf record -g
# needs: testdata/prof/fpwork.cpp (g++ -O2 -fno-omit-frame-pointer),
# two runs of FP_ROUNDS (default 5400) rounds side by side at 20 kHz
# (about 235 MiB, 2.2 million samples of stacks 5 to 40 deep).
# MEAS256=1 makes two real measurement directories and times bloop report
# of each (now and at BEFORE): a small C program (a loop nest, built here)
# run 256 times under one `bloop record`, and one run of it with 64
# threads, each written by `bloop report --hpcrun` (one .hpcrun profile
# per thread, their own calling-context trees), as hpcrun would have.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/bloop" ./cmd/bloop
data=${1:-}
if [ -z "$data" ] && [ "${FP:-}" = prog ]; then
  data=$tmp/perf.data
  g++ -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -o "$tmp/fpwork" testdata/prof/fpwork.cpp
  perf record -q -F 20000 -g -o "$data" -- sh -c "$tmp/fpwork ${FP_ROUNDS:-5400} & $tmp/fpwork ${FP_ROUNDS:-5400}; wait" >/dev/null
elif [ -z "$data" ] && [ -n "${FP:-}" ]; then
  data=$tmp/perf.data
  perf record -q -F 20000 -g -o "$data" -- sh -c "for i in \$(seq ${FP_ROUNDS:-40}); do for f in testdata/src/stl.cpp testdata/src/tmpl.cpp; do g++ -O2 -c \$f -o $tmp/o.o; done; done" >/dev/null
elif [ -z "$data" ]; then
  data=$tmp/perf.data
  perf record -q -F 999 --call-graph dwarf -o "$data" python3.11 testdata/prof/work.py 240000 >/dev/null
fi
[ -f "$data" ] || { echo "report-bench: $data missing" >&2; exit 1; }
if [ -n "${BEFORE:-}" ]; then
  mkdir "$tmp/before"
  git archive "$BEFORE" | tar -x -C "$tmp/before"
  (cd "$tmp/before" && CGO_ENABLED=0 go build -o "$tmp/bloop-before" ./cmd/bloop)
fi
measdirs=() # "NAME DIR": the measurement directories timed
[ -n "${MEAS:-}" ] && measdirs+=("meas $MEAS")
if [ -n "${MEAS256:-}" ]; then
  cat >"$tmp/prog.c" <<'CEOF'
#include <pthread.h>
#include <stdlib.h>
static double grid[64][256];
static inline double relax(double *row, int n, int k) {
  double s = 0;
  for (int j = 1; j < n - 1; j++) {
    row[j] = (row[j - 1] + row[j] + row[j + 1]) / 3.0 + k * 1e-9;
    s += row[j];
  }
  return s;
}
__attribute__((noinline)) static double sweep(int t, int iters) {
  double s = 0;
  for (int k = 0; k < iters; k++)
    s += relax(grid[t % 64], 256, k);
  return s;
}
__attribute__((noinline)) static double norm(int t, int iters) {
  double s = 0;
  for (int k = 0; k < iters; k++)
    for (int j = 0; j < 256; j++)
      s += grid[t % 64][j] * grid[t % 64][j];
  return s;
}
static int iters;
static void *work(void *arg) {
  int t = (int)(long)arg;
  volatile double s = sweep(t, iters) + norm(t, iters / 2);
  (void)s;
  return NULL;
}
int main(int argc, char **argv) { /* prog THREADS ITERATIONS */
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  iters = argc > 2 ? atoi(argv[2]) : 20000;
  pthread_t th[64];
  if (threads < 1 || threads > 64)
    return 2;
  for (int t = 1; t < threads; t++)
    pthread_create(&th[t], NULL, work, (void *)(long)t);
  work(0);
  for (int t = 1; t < threads; t++)
    pthread_join(th[t], NULL);
  return 0;
}
CEOF
  gcc -O2 -g -pthread -o "$tmp/prog" "$tmp/prog.c"
  # 256 runs of about 0.1 s (some 100 samples each), then 64 threads.
  "$tmp/bloop" record -o "$tmp/runs.rec" -- sh -c "for i in \$(seq 256); do $tmp/prog 1 60000; done" 2>/dev/null
  "$tmp/bloop" report -c "$tmp/cache" --no-debuginfod --hpcrun "$tmp/dir-meas256" "$tmp/runs.rec" >/dev/null
  "$tmp/bloop" record -o "$tmp/threads.rec" -- "$tmp/prog" 64 20000 2>/dev/null
  "$tmp/bloop" report -c "$tmp/cache" --no-debuginfod --hpcrun "$tmp/dir-meas64t" "$tmp/threads.rec" >/dev/null
  echo "measurement directories: $(ls "$tmp/dir-meas256" | grep -c hpcrun) profiles of 256 runs, $(ls "$tmp/dir-meas64t" | grep -c hpcrun) of 64 threads" >&2
  measdirs+=("meas256 $tmp/dir-meas256" "meas64t $tmp/dir-meas64t")
fi

# timed NAME CMD...: one run; appends "wall_s peak_kib cpu_s" to $tmp/NAME.
# timed runs a command: its wall time from the clock in nanoseconds
# (time's %e has centiseconds: a 0.17 s report against 1.70 s read as
# 0.10x whether it was 0.096x or 0.104x), its peak and CPU from time.
timed() {
  local name=$1 t0 t1; shift
  t0=$(date +%s%N)
  /usr/bin/time -f '%M %U %S' -o "$tmp/t" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" \
    || { echo "report-bench: $name failed:" >&2; cat "$tmp/$name.err" >&2; exit 1; }
  t1=$(date +%s%N)
  echo "$(((t1 - t0) / 1000))e-6 $(cat "$tmp/t")" >>"$tmp/$name"
}
perfcmd=(perf report -i "$data" --stdio --no-children --sort dso,sym)
cold=("$tmp/bloop" report --nocache --no-debuginfod "$data")
warm=("$tmp/bloop" report -c "$tmp/cache" --no-debuginfod "$data")
"${warm[@]}" >/dev/null 2>&1 # fills the cache
if [ -n "${BEFORE:-}" ]; then
  bcold=("$tmp/bloop-before" report --nocache --no-debuginfod "$data")
  bwarm=("$tmp/bloop-before" report -c "$tmp/cache-before" --no-debuginfod "$data")
  "${bwarm[@]}" >/dev/null 2>&1
fi
md=()
[ -n "${MODULE_DIR:-}" ] && md=(--module-dir "$MODULE_DIR")
for nd in "${measdirs[@]}"; do
  d=${nd#* }
  "$tmp/bloop" struct -q "$d" >/dev/null 2>&1 || true # its structs/, as hpcprof reads them
  "$tmp/bloop" report -c "$tmp/cache" --no-debuginfod "${md[@]}" "$d" >/dev/null 2>&1
  if [ -n "${BEFORE:-}" ]; then
    "$tmp/bloop-before" report -c "$tmp/cache-before" --no-debuginfod "${md[@]}" "$d" >/dev/null 2>&1
  fi
done
for i in $(seq "$RUNS"); do
  timed perf "${perfcmd[@]}"
  # Now and before take turns right after perf report: on this VM the
  # first command after a large one ran up to a quarter slower (with
  # three times the system time), which took sides when now always came
  # first.
  order=(now before)
  [ $((i % 2)) = 0 ] && order=(before now)
  for who in "${order[@]}"; do
    if [ "$who" = now ]; then
      timed cold "${cold[@]}"
      timed warm "${warm[@]}"
    elif [ -n "${BEFORE:-}" ]; then
      timed bcold "${bcold[@]}"
      timed bwarm "${bwarm[@]}"
    fi
  done
  for nd in "${measdirs[@]}"; do
    n=${nd%% *} d=${nd#* }
    timed "$n" "$tmp/bloop" report -c "$tmp/cache" --no-debuginfod "${md[@]}" "$d"
    if [ -n "${BEFORE:-}" ]; then
      timed "b$n" "$tmp/bloop-before" report -c "$tmp/cache-before" --no-debuginfod "${md[@]}" "$d"
    fi
  done
  echo "run $i done" >&2
done

# The figures: medians, and the median of the ratios of the same run.
python3 - "$tmp" "$RUNS" "$(basename "$data")" "$(stat -c %s "$data")" <<'EOF'
import os, statistics, sys
tmp, runs, name, size = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
def rows(n):
    p = os.path.join(tmp, n)
    if not os.path.exists(p):
        return None
    out = []
    for l in open(p):
        if l.strip():
            w, m, u, s = map(float, l.split()[:4])
            out.append((w, m, u + s))
    return out
perf = rows("perf")
print(f"{name}, {size/2**20:.0f} MiB, {runs} runs each, in turns; wall s, peak MiB, cpu s (user+sys) medians; ratio: median of the runs' own")
print(f"{'':34} {'wall':>7} {'peak':>7} {'cpu':>7} {'x perf wall':>12} {'x perf peak':>12} {'x perf cpu':>11}")
def line(label, r, base=perf):
    w = statistics.median(x[0] for x in r)
    m = statistics.median(x[1] for x in r) / 1024
    c = statistics.median(x[2] for x in r)
    if base is None:
        print(f"{label:34} {w:7.3f} {m:7.0f} {c:7.2f}")
        return
    rw = statistics.median(a[0] / b[0] for a, b in zip(r, base))
    rm = statistics.median(a[1] / b[1] for a, b in zip(r, base))
    rc = statistics.median(a[2] / max(b[2], 0.01) for a, b in zip(r, base))
    print(f"{label:34} {w:7.3f} {m:7.0f} {c:7.2f} {rw:12.3f} {rm:12.2f} {rc:11.2f}")
line("perf report --no-children", perf)
for key, label in [("cold", "bloop report --nocache"), ("warm", "bloop report (cache warm)"),
                   ("bcold", "before: bloop report --nocache"), ("bwarm", "before: bloop report (warm)")]:
    r = rows(key)
    if r:
        line(label, r)
for key, label in [("meas", "MEAS"), ("meas256", "256 runs"), ("meas64t", "64 threads")]:
    m, bm = rows(key), rows("b" + key)
    if not m:
        continue
    line(f"bloop report {label}", m, None)
    if bm:
        line(f"before: bloop report {label}", bm, None)
        r = [statistics.median(a[i] / max(b[i], 0.01) for a, b in zip(m, bm)) for i in range(3)]
        print(f"{label}: now / before: wall {r[0]:.2f}, peak {r[1]:.2f}, cpu {r[2]:.2f}")
EOF

# Self shares per module: perf report --sort dso against the sum of
# bloop's flat view's excl per module (every scope, --min 0).
perf report -i "$data" --stdio --no-children --sort dso -g none >"$tmp/dso.txt" 2>/dev/null
"$tmp/bloop" report -c "$tmp/cache" --no-debuginfod --view flat --min 0 "$data" >"$tmp/flat.txt" 2>/dev/null
python3 - "$tmp/dso.txt" "$tmp/flat.txt" <<'EOF'
import re, sys
perf = {}
for l in open(sys.argv[1]):
    m = re.match(r"\s+([\d.]+)%\s+(\S+)\s*$", l)
    if m:
        dso = "[kernel]" if m.group(2) == "[kernel.kallsyms]" else m.group(2)
        perf[dso] = perf.get(dso, 0) + float(m.group(1))
bloop, total = {}, 0
# Values are counts, or time with its unit (cpu-clock: "1.23s", "45.6ms";
# three significant digits a row, whose rounding the many rows of a
# module average out well within the 0.5 points).
val = r"(\d+(?:\.\d+)?(?:ns|µs|ms|s)?)"
row = re.compile(r"^\s*" + val + r"\s+[\d.]+%\s+" + val + r"\s+[\d.]+%\s+(proc|inlined|loop|line)\s+(.*)$")
units = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}
def number(v):
    u = re.search(r"(ns|µs|ms|s)$", v)
    return float(v[:u.start()]) * units[u.group(1)] if u else float(v)
rows = [m for m in map(row.match, open(sys.argv[2])) if m]
# A row names its module, or the procedure it is in ("... in NAME"),
# whose own row names the module.
procmod = {}
for m in rows:
    p = re.match(r"(.*?)\s+\[([^\]]+)\]\s*$", m.group(4))
    if m.group(3) == "proc" and p:
        procmod[p.group(1).strip()] = p.group(2)
for m in rows:
    excl = number(m.group(2))
    mods = re.findall(r"\[([^\]]+)\]\s*$", m.group(4))
    inproc = re.search(r"  in (.+?)\s*$", m.group(4))
    at = re.search(r" at \[([^\]]+)\]:", m.group(4)) # code without lines: "loop at [MODULE]:0"
    # "in PROC" first: a procedure's name can end in brackets of its
    # own ("f(int) [clone .constprop.0]").
    mod = procmod.get(inproc.group(1)) if inproc else None
    mod = mod or (mods[-1] if mods else None)
    mod = mod or (at.group(1) if at else "?")
    if mod.startswith("kernel"):
        mod = "[kernel]"
    if mod.startswith("vdso"):
        mod = "[vdso]" # the flat view's brackets hold the name's own
    bloop[mod] = bloop.get(mod, 0) + excl
    total += excl
bad = 0
print(f"{'module':40} {'perf %':>8} {'bloop %':>8}")
for mod in sorted(set(perf) | set(bloop), key=lambda k: -perf.get(k, 0)):
    p, b = perf.get(mod, 0), 100 * bloop.get(mod, 0) / max(total, 1)
    flag = ""
    if abs(p - b) > 0.5:
        flag, bad = "  <- differs by more than 0.5 points", bad + 1
    if p >= 0.05 or b >= 0.05:
        print(f"{mod:40} {p:8.2f} {b:8.2f}{flag}")
sys.exit(1 if bad else 0)
EOF
