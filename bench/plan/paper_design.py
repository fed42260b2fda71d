#!/usr/bin/env python3
"""The design of Diep, Elbaum, Cohen (seed 000) on a recorded full-trace corpus: perfhat-plan
variants + simulate over techniques x h_bound (1.8, 3.6, 12.5, 35.8 % of |U|) x 10 seeds at
n = 36 (RQ1a), RB with n in {1, 6, 12, 18, 24, 30, 36} (RQ1b), GRB vs RB (RQ2), RBM vs RBML
with beta users (RQ3: beta users at a higher bound first, then field users at 1.8 %). Prints Markdown
tables of means, the paper's values beside. Not in CI.
  bench/plan/paper_design.py BUILD CORPUS.tsv"""
import collections, json, os, subprocess, sys, tempfile

from plan_sim import simulate

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
    return simulate(plan, tmp, corpus, strategy, h, n, seed)


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


# RQ3: beta users (3, 11 or 18 of the 36 sites) run release "b" at the beta bound, the others
# release "f" at the field bound (1.8 %); RBM allocates "f" continuing the per-unit counts of "b"
# (--history), RBML afresh. Both releases' masks are simulated together over the 36 sites.
def rq3(strategy, beta, hb, hf, seed):
    hist = tempfile.mkdtemp(prefix="perfhat-rq3-", dir=tmp)
    def variants(h, n, strat, release):
        args = [plan, "variants", "--units", f"{tmp}/units.txt", "--h-bound", str(h), "--variants",
                str(n), "--strategy", strat, "--seed", str(seed), "--history", hist, "--release",
                release]
        return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    b = variants(hb, beta, "rbml", "b")
    f = variants(hf, 36 - beta, strategy, "f")
    merged = {"release": "bf", "units": U,
              "variants": [{"id": i, "units": v["units"]} for i, v in enumerate(b["variants"] + f["variants"])],
              "assignment": list(range(36))}
    open(f"{tmp}/m.json", "w").write(json.dumps(merged))
    out = subprocess.run([plan, "simulate", "--manifest", f"{tmp}/m.json", "--trace", corpus,
                          "--seed", str(seed)], check=True, capture_output=True, text=True).stdout
    v = json.loads(out)["techniques"][0]
    return v["coverage"], v["top_hotspots"], v["overhead"]


PAPER_RQ3 = {(10, 1): (31, 34, 47, 54), (30, 1): (34, 41, 50, 58), (50, 1): (39, 47, 56, 62),
             (10, 2): (39, 48, 56, 65), (30, 2): (59, 59, 69, 69), (50, 2): (62, 62, 74, 73),
             (10, 3): (58, 59, 72, 71), (30, 3): (72, 72, 76, 77), (50, 3): (75, 76, 78, 78)}
print("\nRQ3, beta users then field users at h = %d: coverage / top-5 %%, RBML vs RBM, "
      "ours (paper Tables 19, 21)\n" % bounds[0])
print("| beta % (users) | beta h | RBML | RBM |")
print("|---|---|---|---|")
for bi, hb in enumerate(bounds[1:], start=1):
    for ratio, beta in ((10, 3), (30, 11), (50, 18)):
        cells = []
        for strat in ("rbml", "rbm"):
            r = [rq3(strat, beta, hb, bounds[0], sd) for sd in SEEDS]
            cells.append((sum(x[0] for x in r) / len(r), sum(x[1] for x in r) / len(r)))
        pc = PAPER_RQ3[(ratio, bi)]
        print(f"| {ratio} ({beta}) | {hb} ({FRACTIONS[bi]} %) | {cells[0][0]:.0f} / {cells[0][1]:.0f} "
              f"({pc[0]} / {pc[2]}) | {cells[1][0]:.0f} / {cells[1][1]:.0f} ({pc[1]} / {pc[3]}) |")
