#!/usr/bin/env python3
"""The design of Diep, Elbaum, Cohen (seed 000) on a recorded full-trace corpus: perfhat-plan
variants + simulate over techniques x h_bound (1.8, 3.6, 12.5, 35.8 % of |U|) x 10 seeds at
n = 36 (RQ1a), RB with n in {1, 6, 12, 18, 24, 30, 36} (RQ1b), GRB vs RB (RQ2). Prints Markdown
tables of means, the paper's values beside. Not in CI.
  bench/plan/paper_design.py BUILD CORPUS.tsv"""
import collections, json, os, subprocess, sys, tempfile

build, corpus = sys.argv[1], sys.argv[2]
plan = os.path.join(build, "plan", "perfhat-plan")
tmp = tempfile.mkdtemp(prefix="perfhat-paper-")
counts = collections.Counter(line.split("\t", 1)[1].rstrip("\n")
                             for line in open(corpus) if "\t" in line)
units = sorted(counts)
open(f"{tmp}/units.txt", "w").write("".join(u + "\n" for u in units))
json.dump(dict(counts), open(f"{tmp}/groups.json", "w"))
U = len(units)
FRACTIONS = [1.8, 3.6, 12.5, 35.8]
bounds = [max(1, round(f / 100 * U)) for f in FRACTIONS]
SEEDS = range(1, 11)


def run(strategy, h, n, seed):
    args = [plan, "variants", "--units", f"{tmp}/units.txt", "--h-bound", str(h), "--variants",
            str(n), "--replicas", "36", "--strategy", strategy, "--seed", str(seed)]
    if strategy == "grb":
        args += ["--groups", f"{tmp}/groups.json"]
    m = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    open(f"{tmp}/m.json", "w").write(m)
    s = subprocess.run([plan, "simulate", "--manifest", f"{tmp}/m.json", "--trace", corpus,
                        "--seed", str(seed)], check=True, capture_output=True, text=True).stdout
    v = json.loads(s)["techniques"][0]
    return v["coverage"], v["top_hotspots"], v["overhead"]


def mean(strategy, h, n):
    r = [run(strategy, h, n, s) for s in SEEDS]
    return [sum(x[i] for x in r) / len(r) for i in range(3)]


print(f"Corpus: {sum(counts.values())} records, |U| = {U} functions, 36 sites; bounds "
      + ", ".join(f"{f} % -> h = {h}" for f, h in zip(FRACTIONS, bounds)) + "; means of 10 seeds.\n")
PAPER_COV = {"r": [25, 40, 68, 85], "p": [31, 51, 69, 84], "rb": [32, 52, 70, 86]}
PAPER_TOP = {"r": [40, 56, 76, 86], "p": [49, 63, 78, 82], "rb": [49, 65, 79, 86]}
PAPER_OVH = [2, 4, 13, 35]
res = {t: [mean(t, h, 36) for h in bounds] for t in ("r", "p", "rb", "grb")}
print("RQ1a, n = 36: coverage / top-5 % / overhead (% of Full), ours (paper)\n")
print("| h (% of U) | R | P | RB | overhead R · P · RB (paper) |")
print("|---|---|---|---|---|")
for i, f in enumerate(FRACTIONS):
    cells = [f"{res[t][i][0]:.0f} / {res[t][i][1]:.0f} ({PAPER_COV[t][i]} / {PAPER_TOP[t][i]})"
             for t in ("r", "p", "rb")]
    ovh = " · ".join(f"{res[t][i][2]:.1f}" for t in ("r", "p", "rb"))
    print(f"| {f} (h = {bounds[i]}) | " + " | ".join(cells) + f" | {ovh} ({PAPER_OVH[i]}) |")
print("\nRQ1b, RB: coverage / top-5 % by n\n")
print("| n | " + " | ".join(f"h = {h} ({f} %)" for f, h in zip(FRACTIONS, bounds)) + " |")
print("|---|" + "---|" * len(bounds))
for n in (1, 6, 12, 18, 24, 30, 36):
    row = [mean("rb", h, n) for h in bounds]
    print(f"| {n} | " + " | ".join(f"{c:.0f} / {t:.0f} (ovh {o:.1f})" for c, t, o in row) + " |")
print("\nRQ2, n = 36: GRB vs RB coverage / top-5 % / overhead\n")
print("| h | RB | GRB |")
print("|---|---|---|")
for i, f in enumerate(FRACTIONS):
    print(f"| {f} % (h = {bounds[i]}) | " + " | ".join(
        f"{res[t][i][0]:.0f} / {res[t][i][1]:.0f} / {res[t][i][2]:.1f}" for t in ("rb", "grb")) + " |")
