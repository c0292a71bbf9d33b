# A small interpreter workload for the unwinder tests: JSON encoding and
# decoding and regular expressions, as a script of a new user's would do.
# Argument: rounds (default 12000, about a second of CPU).
import json
import re
import sys

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 12000
doc = {"items": [{"id": i, "name": "item-%d" % i, "tags": ["a", "b", "c"], "price": i * 1.25} for i in range(40)]}
word = re.compile(r"item-(\d+)")
total = 0
for _ in range(rounds):
    text = json.dumps(doc)
    back = json.loads(text)
    total += sum(int(m.group(1)) for m in word.finditer(text)) + len(back["items"])
print(total)
