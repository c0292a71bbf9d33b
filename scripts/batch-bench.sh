#!/usr/bin/env bash
# Batch runs over every ELF file below DIR (default /usr/lib/x86_64-linux-gnu),
# all at -j J (default 2), each figure from /usr/bin/time -v:
#   cold batch    one `bloop struct DIR`, empty cache
#   per file      the same files, one `bloop struct -j1 FILE` process each under
#                 xargs -P J, empty cache (what a pipeline did before batches)
#   warm local    the cold batch again, its cache full
#   warm remote   a fresh local cache and --cache-url of an nginx (WebDAV PUT)
#                 on 127.0.0.1 that a cold batch filled
# Prints files/s, wall seconds, peak RSS (the largest process) and the
# ratios, and checks that every run wrote the same bytes as the cold batch.
#   scripts/batch-bench.sh [-j J] [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=2
while getopts j: opt; do
  case $opt in
    j) jobs=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
dir=${1:-/usr/lib/x86_64-linux-gnu}
tmp=$(mktemp -d)
nginx_pid=""
trap '[ -z "$nginx_pid" ] || kill "$nginx_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/bloop" ./cmd/bloop
b=$tmp/bloop

# timed NAME CMD...: runs CMD under /usr/bin/time -v; sets wall_NAME, rss_NAME (MB).
timed() {
  local name=$1; shift
  /usr/bin/time -v -o "$tmp/$name.time" "$@" || true
  local w r
  w=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$tmp/$name.time")
  r=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$tmp/$name.time")
  printf -v "wall_$name" '%s' "$w"
  printf -v "rss_$name" '%s' "$r"
}

# Cold batch; its manifest lists the inputs the others are given.
timed cold "$b" struct -q -j "$jobs" -c "$tmp/c-cold" -o "$tmp/o-cold" --manifest "$tmp/m-cold.jsonl" "$dir"
n=$(wc -l < "$tmp/m-cold.jsonl")
written=$(grep -c '"outcome":"written"' "$tmp/m-cold.jsonl" || true)
# Per file: the same inputs (with their output names) under xargs; each
# process's peak RSS goes to a file, since time -v of xargs sees only the
# largest child.
python3 - "$tmp/m-cold.jsonl" > "$tmp/pairs" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["path"] + "\t" + r.get("output", "/dev/null"))
PY
sed -i "s#\t$tmp/o-cold/#\t$tmp/o-each/#" "$tmp/pairs"
cat > "$tmp/one.sh" <<SH
#!/bin/sh
mkdir -p "\$(dirname "\$2")"
exec "$b" struct -q -j1 -c "$tmp/c-each" -o "\$2" "\$1" 2>/dev/null
SH
chmod +x "$tmp/one.sh"
timed each sh -c "tr '\t' '\n' < '$tmp/pairs' | xargs -d '\n' -n2 -P '$jobs' '$tmp/one.sh'"
# Warm local.
timed warm "$b" struct -q -j "$jobs" -c "$tmp/c-cold" -o "$tmp/o-warm" "$dir"

same() { diff -rq "$tmp/o-cold" "$1" >/dev/null && echo "same bytes" || echo "OUTPUTS DIFFER"; }
same_each=$(same "$tmp/o-each")
same_warm=$(same "$tmp/o-warm")

# Warm remote, when nginx is installed.
remote=""
if command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; then
  ng=$(command -v nginx || echo /usr/sbin/nginx)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  mkdir -p "$tmp/ng/root" "$tmp/ng/tmp"
  cat > "$tmp/ng/nginx.conf" <<NG
daemon off; master_process off; worker_processes 1; pid $tmp/ng/nginx.pid;
error_log $tmp/ng/error.log;
events { worker_connections 256; }
http {
  access_log off; client_body_temp_path $tmp/ng/tmp; proxy_temp_path $tmp/ng/tmp;
  fastcgi_temp_path $tmp/ng/tmp; uwsgi_temp_path $tmp/ng/tmp; scgi_temp_path $tmp/ng/tmp;
  server { listen 127.0.0.1:$port; root $tmp/ng/root; client_max_body_size 0;
    location / { dav_methods PUT; create_full_put_path on; } }
}
NG
  "$ng" -c "$tmp/ng/nginx.conf" -p "$tmp/ng" & nginx_pid=$!
  sleep 0.5
  url=http://127.0.0.1:$port/bloop
  timed fill "$b" struct -q -j "$jobs" -c "$tmp/c-fill" --cache-url "$url" -o "$tmp/o-fill" "$dir"
  timed remote "$b" struct -q -j "$jobs" -c "$tmp/c-remote" --cache-url "$url" -o "$tmp/o-remote" "$dir"
  same_remote=$(same "$tmp/o-remote")
  held=$(du -sm "$tmp/ng/root" | cut -f1)
  remote=1
fi

ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }
fps() { python3 -c "print(f'{$n/$1:.1f}')"; }
echo "inputs: $n below $dir ($written written by the cold batch), -j $jobs, $(nproc) cores"
printf '%-12s %9s %8s %9s  %s\n' run wall_s files/s peak_MB note
printf '%-12s %9s %8s %9s  %s\n' "cold batch" "$wall_cold" "$(fps "$wall_cold")" "$rss_cold" ""
printf '%-12s %9s %8s %9s  %s\n' "per file" "$wall_each" "$(fps "$wall_each")" "$rss_each" "$same_each; batch/per-file wall $(ratio "$wall_cold" "$wall_each")"
printf '%-12s %9s %8s %9s  %s\n' "warm local" "$wall_warm" "$(fps "$wall_warm")" "$rss_warm" "$same_warm; cold/warm $(ratio "$wall_cold" "$wall_warm")x"
if [ -n "$remote" ]; then
  printf '%-12s %9s %8s %9s  %s\n' "fill remote" "$wall_fill" "$(fps "$wall_fill")" "$rss_fill" "cold, uploading"
  printf '%-12s %9s %8s %9s  %s\n' "warm remote" "$wall_remote" "$(fps "$wall_remote")" "$rss_remote" "$same_remote; cold/warm $(ratio "$wall_cold" "$wall_remote")x; server holds ${held} MB"
fi
echo "local cache after the cold batch: $(du -sm "$tmp/c-cold" | cut -f1) MB"
