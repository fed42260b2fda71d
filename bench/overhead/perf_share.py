#!/usr/bin/env python3
"""Share of a process's CPU samples spent in libperfhat, from `perf script -F comm,tid,ip,sym`.

    perf record -e cpu-clock --call-graph dwarf,16384 -F 1000 -p PID -o perf.data -- sleep S
    perf script -i perf.data -F comm,tid,ip,sym | bench/overhead/perf_share.py

Prints one line: the percentage of samples with a perfhat:: frame anywhere on the stack (probe
code on application threads, the background thread's folding and export), then the sample
count. One run's share is steadier than CPU time compared across runs on a shared VM
(bench/README.md, "Aggregate export"), but it undercounts work whose stack does not unwind to a
libperfhat frame (for spans: the exporter's time in the kernel's socket code).
"""
import sys

samples = hits = 0
in_sample = seen = False
for line in sys.stdin:
    if not line.strip():
        if in_sample:
            samples += 1
            hits += seen
        in_sample = seen = False
    elif not line[0].isspace():
        in_sample, seen = True, False
    elif "perfhat::" in line:
        seen = True
if in_sample:
    samples += 1
    hits += seen
print(f"{100.0 * hits / samples:.1f}" if samples else "nan", samples)
