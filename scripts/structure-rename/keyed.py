#!/usr/bin/env python3
"""keyed.py PKG...: give the Range literals go vet reports unkeyed their
field names (structure.Range{a, b} -> structure.Range{Lo: a, Hi: b})."""
import re, subprocess, sys, collections
for _ in range(20):
    out = subprocess.run(['go', 'vet'] + ['./' + p for p in sys.argv[1:]], capture_output=True, text=True)
    out = out.stdout + out.stderr
    fixes = collections.defaultdict(set)
    for m in re.finditer(r'^(\S+\.go):(\d+):(\d+): bloop/structure\.Range struct literal uses unkeyed fields$', out, re.M):
        fixes[m.group(1)].add((int(m.group(2)), int(m.group(3))))
    if not fixes:
        break
    for f, fx in fixes.items():
        lines = open(f).read().split('\n')
        for l, c in sorted(fx, reverse=True):
            b = lines[l - 1].encode()
            i = b.index(b'{', c - 1)
            depth, j, comma = 0, i, None
            while True:
                ch = b[j:j+1]
                if ch in (b'{', b'(', b'['): depth += 1
                elif ch in (b'}', b')', b']'):
                    depth -= 1
                    if depth == 0: break
                elif ch == b',' and depth == 1 and comma is None: comma = j
                j += 1
            x, y = b[i+1:comma].strip(), b[comma+1:j].strip()
            lines[l - 1] = (b[:i+1] + b'Lo: ' + x + b', Hi: ' + y + b[j:]).decode()
        open(f, 'w').write('\n'.join(lines))
