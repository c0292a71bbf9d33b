#!/bin/sh
# Builds Oniguruma (the regular-expression library of Ruby and PHP, about
# 60,000 lines of C) as a shared library with -O2 -g, once per compiler:
# the large real C library bloop diff's compiler-version check and
# benchmark use. Its sources come from Debian's librust-onig-sys-dev,
# which ships them (nothing is fetched).
#
#   scripts/onig-build.sh OUTDIR CC...    writes OUTDIR/libonig-CC.so
set -eu
[ $# -ge 2 ] || { echo "usage: $0 OUTDIR CC..." >&2; exit 2; }
out=$1
shift
src=$(ls -d /usr/share/cargo/registry/onig_sys-*/oniguruma/src 2>/dev/null | sort | tail -1)
[ -n "$src" ] || { echo "$0: no Oniguruma sources: apt-get install librust-onig-sys-dev" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
# What the crate's build script writes as config.h on Linux.
cat > "$out/config.h" <<'H'
#define HAVE_PROTOTYPES 1
#define STDC_HEADERS 1
#define HAVE_STRING_H 1
#define HAVE_STDARG_H 1
#define HAVE_STDLIB_H 1
#define HAVE_LIMITS_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_STDINT_H 1
#define HAVE_UNISTD_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_SYS_TIME_H 1
#define SIZEOF_INT 4
#define SIZEOF_SHORT 2
#define SIZEOF_LONG 8
#define SIZEOF_VOIDP 8
#define SIZEOF_LONG_LONG 8
H
# libonig_la_SOURCES of its Makefile.am.
files="regparse.c regcomp.c regexec.c regenc.c regerror.c regext.c regsyntax.c regtrav.c
regversion.c st.c reggnu.c unicode.c unicode_unfold_key.c unicode_fold1_key.c unicode_fold2_key.c
unicode_fold3_key.c ascii.c utf8.c utf16_be.c utf16_le.c utf32_be.c utf32_le.c euc_jp.c
euc_jp_prop.c sjis.c sjis_prop.c iso8859_1.c iso8859_2.c iso8859_3.c iso8859_4.c iso8859_5.c
iso8859_6.c iso8859_7.c iso8859_8.c iso8859_9.c iso8859_10.c iso8859_11.c iso8859_13.c
iso8859_14.c iso8859_15.c iso8859_16.c euc_tw.c euc_kr.c big5.c gb18030.c koi8_r.c cp1251.c
onig_init.c"
jobs=$(nproc 2>/dev/null || echo 2)
for cc in "$@"; do
  obj="$out/obj-$cc"
  mkdir -p "$obj"
  for f in $files; do echo "$f"; done |
    (cd "$src" && xargs -P "$jobs" -I{} sh -c "$cc -O2 -g -fPIC -w -I'$out' -I. -ffile-prefix-map='$src'=/onig -c {} -o '$obj'/\$(basename {} .c).o")
  $cc -shared -Wl,--build-id=sha1 -o "$out/libonig-$cc.so" "$obj"/*.o
  rm -rf "$obj"
done
