#!/usr/bin/env python3
"""Where libperfhat's share of a process's CPU samples goes, from `perf script -F comm,tid,ip,sym`:
each sample with a libperfhat frame (perf_share.is_libperfhat) is filed under its outermost one
(the entry into the library: the inline probe, Probe::begin, the background thread's loop, the stack sampler's
signal handler), and the top rows are printed as a share of all samples.

    perf script -i perf.data -F comm,tid,ip,sym | bench/budget/perf_top.py [ROWS=10] [--inner]
--inner adds the top (outermost frame, the frame it called) pairs.
"""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "overhead"))
from perf_share import is_libperfhat  # noqa: E402  (one rule for what a libperfhat frame is)

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 10
inner = len(sys.argv) > 2 and sys.argv[2] == "--inner"  # also the frame inside the outermost
samples = 0
by = collections.Counter()
by_inner = collections.Counter()
frames = []


def close():
    global samples, frames
    if not frames:
        return
    samples += 1
    hits = [f for f in frames if is_libperfhat(f)]
    if hits:
        name = re.sub(r"\(.*", "", hits[-1])  # outermost: the call stack is printed leaf first
        by[name] += 1
        k = frames.index(hits[-1])
        if inner and k > 0:
            by_inner[(name, re.sub(r"\(.*", "", frames[k - 1]))] += 1
    frames = []


for line in sys.stdin:
    if not line.strip():
        close()
    elif line[0].isspace():
        parts = line.split(None, 1)
        frames.append(parts[1].strip() if len(parts) > 1 else "")
    else:
        close()
        frames = []
close()
for name, n in by.most_common(rows):
    print(f"{100.0 * n / samples:5.2f} %  {name}")
for (outer, callee), n in by_inner.most_common(rows):
    print(f"{100.0 * n / samples:5.2f} %  {outer} > {callee}")
