#!/usr/bin/env python3
"""Share of a process's CPU samples spent in libperfhat, from `perf script -F comm,tid,ip,sym`.

    perf record -e cpu-clock --call-graph dwarf,16384 -F 1000 -p PID -o perf.data -- sleep S
    perf script -i perf.data -F comm,tid,ip,sym | bench/overhead/perf_share.py

Prints one line: the percentage of samples with a libperfhat frame anywhere on the stack (probe
code on application threads, the background thread's folding and export), then the sample
count, then the percentage with any `perfhat::` frame (this script's rule before 2026-11-26,
kept for comparison with earlier figures). One run's share is steadier than CPU time compared
across runs on a shared VM (bench/README.md, "Aggregate export"), but it undercounts work whose
stack does not unwind to a libperfhat frame (for spans: the exporter's time in the kernel's
socket code).

A libperfhat frame is one in the library's own namespaces (is_libperfhat): the project's shared
code is in namespace perfhat too, and a program that serves through common/stop_signals.h has
`perfhat::runUntilStopSignal` under its whole server loop.
"""
import re
import sys

# perfhat::detail, ::budget, ... are the library's alone; of the top-level perfhat:: functions
# only its public API (perfhat.hpp) is, the exporters and json_escape (json_text.h). The
# compiler's and XRay's entry points into the library (autoinstrument.cc, xray_hooks.cc) are C
# names outside any namespace. The server's accept loop (perfhat::runUntilStopSignal) is not.
_LIBRARY = re.compile(
    r"perfhat::(detail|budget|sampling|symbolize|tigris|autoinstrument|otlp|stats|plan)::"
    r"|perfhat::(init|shutdown|flush|last_error|set_sampling_rate|sampling_rate|"
    r"set_analysis_cycle|set_enabled|set_filter|analyze_now|counters|set_session|"
    r"json_escape|json_quoted|Config::|MemoryExporter::|Exporter::)"
    r"|\b__cyg_profile_func_(enter|exit)\b|\bperfhat_xray_\w+")


def is_libperfhat(frame):
    return _LIBRARY.search(frame) is not None


def main():
    samples = hits = any_ns = 0
    in_sample = seen = seen_ns = False
    for line in sys.stdin:
        if not line.strip():
            if in_sample:
                samples += 1
                hits += seen
                any_ns += seen_ns
            in_sample = seen = seen_ns = False
        elif not line[0].isspace():
            in_sample, seen, seen_ns = True, False, False
        else:
            seen_ns = seen_ns or "perfhat::" in line
            seen = seen or is_libperfhat(line)
    if in_sample:
        samples += 1
        hits += seen
        any_ns += seen_ns
    if not samples:
        print("nan", 0, "nan")
        return
    print(f"{100.0 * hits / samples:.1f}", samples, f"{100.0 * any_ns / samples:.1f}")


if __name__ == "__main__":
    main()
