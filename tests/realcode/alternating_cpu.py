#!/usr/bin/env python3
"""Per-process CPU of prebuilt program sets, configurations alternating run by run (issue #18;
bench/README.md, s44). Each round runs every program once in every configuration, one after the
other, so a change in the machine's load falls on all configurations alike; each run's CPU is
user + system of the child from wait4 (every thread, exec to exit), with no tool around it. Per
configuration it prints the sum over programs of each program's median, against the first.
Nothing exports (PERFHAT_ENDPOINT is removed from the environment).

Usage: alternating_cpu.py --programs "a b" [--args=--gtest_repeat=200] [--rounds 101] \\
         "name|dir|VAR=value;VAR2=value" ...
"""
import argparse
import os
import shlex
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", required=True)
    ap.add_argument("--args", default="")
    ap.add_argument("--rounds", type=int, default=101)
    ap.add_argument("configs", nargs="+", help="name|dir|VAR=value;...")
    a = ap.parse_args()
    programs = a.programs.split()
    configs = []
    for c in a.configs:
        name, directory, envs = (c.split("|", 2) + [""])[:3]
        env = dict(os.environ)
        env.pop("PERFHAT_ENDPOINT", None)
        for assignment in filter(None, envs.split(";")):
            k, _, v = assignment.partition("=")
            env[k] = v
        configs.append((name, directory, env))
    extra = shlex.split(a.args)
    devnull = os.open(os.devnull, os.O_WRONLY)
    cpu = {name: {p: [] for p in programs} for name, _, _ in configs}
    for r in range(a.rounds):
        for p in programs:
            for name, directory, env in configs:
                exe = os.path.join(directory, p)
                pid = os.fork()
                if pid == 0:
                    os.dup2(devnull, 1)
                    os.dup2(devnull, 2)
                    try:
                        os.execve(exe, [exe] + extra, env)
                    finally:
                        os._exit(127)
                _, status, ru = os.wait4(pid, 0)
                if os.waitstatus_to_exitcode(status) != 0:
                    sys.exit(f"{exe} ({name}) failed: status {status}")
                cpu[name][p].append((ru.ru_utime + ru.ru_stime) * 1000)
        if (r + 1) % 10 == 0:
            print(f"round {r + 1} of {a.rounds}", file=sys.stderr)
    total = {n: sum(statistics.median(cpu[n][p]) for p in programs) for n in cpu}
    first = configs[0][0]
    print(f"| configuration | CPU ms, sum of per-program medians ({a.rounds} rounds) | vs {first} |")
    print("|---|---|---|")
    for name, _, _ in configs:
        print(f"| {name} | {total[name]:.1f} | {100 * (total[name] / total[first] - 1):+.1f} % |")


if __name__ == "__main__":
    main()
