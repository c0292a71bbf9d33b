#!/bin/sh
# Builds testdata/bin-cc/: src/decide.c by every compiler version Debian 12
# has (gcc 11 and 12, clang 13 to 16) at -O2 -g, and by gcc 12 with
# -fno-inline, for bloop diff's compiler-version pairs (diff/compilers_test.go).
# Reproducible as the main corpus is (see Makefile): run in src/ on the
# relative name, the directory mapped to /src, the build id a content hash.
#
#   sh testdata/cc.sh [OUTDIR]     (default testdata/bin-cc)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/bin-cc}
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$here/src
repro="-ffile-prefix-map=$src=/src -fdebug-prefix-map=$src=/src -Wl,--build-id=sha1"
cd "$src"
for cc in gcc-11 gcc-12 clang-13 clang-14 clang-15 clang-16; do
  name=$(echo "$cc" | tr -d -)
  extra=""
  case $cc in gcc-*) extra="-frandom-seed=bloop" ;; esac
  $cc -O2 -g $repro $extra -o "$out/decide-$name-O2" decide.c
done
gcc-12 -O2 -g -fno-inline $repro -frandom-seed=bloop -o "$out/decide-gcc12-O2noinline" decide.c
cd "$out" && LC_ALL=C sha256sum decide-* > SHA256SUMS
