#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""journal_audit_bytes.py STATE_DIR/state.journal - journal bytes per audit line.

The measurement behind docs/mncd.md ("One sync per iteration"): how many bytes of a state
journal carry its audit lines, per line, in either form of the audit change - raw after the
record's array ({"k":"audit","seq":N,"bytes":L}) or the older escaped string ("lines":"...").
Copy a state dir while mncd runs (compaction at start drops the audit changes), e.g. during
`build/bench/bench_mncd --quick`: cp -r /tmp/bench_mncd.*/state /tmp/st."""
import json
import re
import sys

OLD = re.compile(rb',?\{"k":"audit","seq":\d+,"lines":"((?:[^"\\]|\\.)*)"\}')


def main(path):
    data = open(path, "rb").read()
    off = audit = lines = other = records = 0
    while off + 20 <= len(data) and data[off:off + 4] == b"MNCJ":
        n = int.from_bytes(data[off + 4:off + 8], "little")
        p = data[off + 20:off + 20 + n]
        off += 20 + n
        records += 1
        _, end = json.JSONDecoder().raw_decode(p.decode("latin-1"))
        if end < len(p):  # raw form: the lines follow the array
            audit += len(p) - end
            lines += p[end:].count(b"\n")
            other += end
            continue
        m = OLD.search(p)
        if m:
            audit += len(m.group(0))
            lines += json.loads(b'"' + m.group(1) + b'"').count("\n")
        other += len(p) - (len(m.group(0)) if m else 0)
    if not lines:
        sys.exit("%s: no audit lines in %d records" % (path, records))
    print("%d records, %d audit lines: %.0f journal bytes per audit line; %d other payload bytes"
          % (records, lines, audit / lines, other))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: journal_audit_bytes.py STATE_DIR/state.journal")
    main(sys.argv[1])
