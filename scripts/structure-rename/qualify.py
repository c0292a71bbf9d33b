#!/usr/bin/env python3
"""qualify.py PKGDIR QUAL NAME...: prefix "QUAL." to every use of NAME that
the compiler reports undefined in package PKGDIR (tests included), until none
is left; then goimports adds the import."""
import collections, os, re, subprocess, sys
pkg, qual, names = sys.argv[1], sys.argv[2], set(sys.argv[3:])
for _ in range(50):
    out = subprocess.run(['go', 'test', '-count=1', '-run', '^$', '-gcflags=-e', './' + pkg],
                         capture_output=True, text=True); out = out.stdout + out.stderr
    out += subprocess.run(['go', 'vet', './' + pkg], capture_output=True, text=True).stderr
    fixes = collections.defaultdict(set)
    for m in re.finditer(r'^(?:vet: )?(\S+\.go):(\d+):(\d+): undefined: (\w+)$', out, re.M):
        f, l, c, n = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
        if n in names:
            fixes[f].add((l, c, n))
    if not fixes:
        break
    for f, fx in fixes.items():
        if f.startswith('./'): f = f[2:]
        if not f.startswith(pkg + '/'): f = pkg + '/' + f.split('/')[-1]
        lines = open(f).read().split('\n')
        for l, c, n in sorted(fx, reverse=True):
            s = lines[l - 1]
            b = s.encode()
            assert b[c - 1:c - 1 + len(n)].decode() == n, (f, l, c, n, s)
            lines[l - 1] = (b[:c - 1] + (qual + '.').encode() + b[c - 1:]).decode()
        open(f, 'w').write('\n'.join(lines))
    subprocess.run([os.environ.get('GOIMPORTS', '/tmp/gi/goimports'), '-local', 'bloop', '-w', pkg])
