#!/usr/bin/python3
"""The paper's statistics (seed 000, Diep, Elbaum, Cohen) on our reproduction: two-way ANOVA
(technique x h_bound, with interaction) and Bonferroni multiple comparisons over every
technique x h_bound cell, reported as homogeneous-group letters (A = lowest mean; cells sharing a
letter are not significantly different at alpha = 0.05 after Bonferroni), for RQ1a (R, P, RB at
n = 36) and RQ2 (RB vs GRB at n = 36), each on coverage, top-5 % hot spots and overhead; 10 seeds
per cell as in the paper. Not in CI. Uses Debian's python3-scipy (/usr/bin/python3).
  bench/plan/paper_stats.py BUILD CORPUS.tsv"""
import collections
import itertools
import json
import os
import sys
import tempfile

import numpy as np
from scipy import stats

from plan_sim import simulate

FRACTIONS = [1.8, 3.6, 12.5, 35.8]
SEEDS = range(1, 11)
ALPHA = 0.05
METRICS = ("coverage", "top-5 %", "overhead")
# Tables 3 and 5 of the paper (means and letters), for RQ1a.
PAPER = {
    "coverage": {"r": ["25 A", "40 C", "68 E", "85 F"], "p": ["31 B", "51 D", "69 E", "84 F"],
                 "rb": ["32 B", "52 D", "70 E", "86 F"]},
    "top-5 %": {"r": ["40 A", "56 C", "76 E", "86 F"], "p": ["49 B", "63 D", "78 E", "82 EF"],
                "rb": ["49 B", "65 D", "79 E", "86 F"]},
}


def anova2(data):
    """data[(a, b)] = list of r values, balanced. F and p of A, B and A x B, MSE and error DF."""
    a_levels = sorted({k[0] for k in data})
    b_levels = sorted({k[1] for k in data})
    r = len(next(iter(data.values())))
    y = np.array([[data[(a, b)] for b in b_levels] for a in a_levels], dtype=float)  # a, b, r
    grand = y.mean()
    cell = y.mean(axis=2)
    ma, mb = y.mean(axis=(1, 2)), y.mean(axis=(0, 2))
    ss_a = len(b_levels) * r * ((ma - grand) ** 2).sum()
    ss_b = len(a_levels) * r * ((mb - grand) ** 2).sum()
    ss_ab = r * ((cell - ma[:, None] - mb[None, :] + grand) ** 2).sum()
    ss_e = ((y - cell[:, :, None]) ** 2).sum()
    df_a, df_b = len(a_levels) - 1, len(b_levels) - 1
    df_ab, df_e = df_a * df_b, y.size - cell.size
    mse = ss_e / df_e
    out = {}
    for name, ss, df in (("technique", ss_a, df_a), ("h_bound", ss_b, df_b),
                         ("technique x h_bound", ss_ab, df_ab)):
        f = (ss / df) / mse if mse > 0 else float("inf")
        out[name] = (f, stats.f.sf(f, df, df_e) if mse > 0 else 0.0)
    return out, mse, df_e, r


def letters(means, mse, df_e, r):
    """Bonferroni homogeneous groups over the cells (pooled MSE t tests, all pairs)."""
    keys = sorted(means, key=lambda k: means[k])
    m = len(keys)
    pairs = m * (m - 1) // 2
    se = np.sqrt(2 * mse / r) if mse > 0 else 0.0

    def differ(i, j):
        d = abs(means[keys[i]] - means[keys[j]])
        if se == 0:
            return d > 1e-9
        p = 2 * stats.t.sf(d / se, df_e)
        return p * pairs < ALPHA

    # Maximal runs of consecutive (sorted) means with no significant pair inside; one letter each.
    groups = []
    for i in range(m):
        j = i
        while j + 1 < m and not any(differ(x, j + 1) for x in range(i, j + 1)):
            j += 1
        if not groups or j > groups[-1][1]:
            groups.append((i, j))
    out = {k: "" for k in keys}
    for n, (i, j) in enumerate(groups):
        for x in range(i, j + 1):
            out[keys[x]] += chr(ord("A") + n) if n < 26 else "?"
    return out


def study(title, techniques, bounds, results, paper=None):
    print(f"\n**{title}** (means of {len(SEEDS)} seeds; letter = Bonferroni homogeneous group"
          + ("; the paper's in parentheses" if paper else "") + ")\n")
    for mi, metric in enumerate(METRICS):
        data = {(t, h): [x[mi] for x in results[(t, h)]] for t in techniques for h in bounds}
        table, mse, df_e, r = anova2(data)
        means = {k: float(np.mean(v)) for k, v in data.items()}
        group = letters(means, mse, df_e, r)
        print(f"{metric}: ANOVA " + "; ".join(f"{n} F = {f:.1f} (p = {p:.3g})"
                                              for n, (f, p) in table.items())
              + f"; error DF {df_e}\n")
        print("| h (% of U) | " + " | ".join(t.upper() for t in techniques) + " |")
        print("|---|" + "---|" * len(techniques))
        for i, (f, h) in enumerate(zip(FRACTIONS, bounds)):
            cells = []
            for t in techniques:
                c = f"{means[(t, h)]:.{1 if metric == 'overhead' else 0}f} {group[(t, h)]}"
                if paper and metric in paper:
                    c += f" ({paper[metric][t][i]})"
                cells.append(c)
            print(f"| {f} (h = {h}) | " + " | ".join(cells) + " |")
        print()


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    build, corpus = sys.argv[1], sys.argv[2]
    plan = os.path.join(build, "plan", "perfhat-plan")
    tmp = tempfile.mkdtemp(prefix="perfhat-stats-")
    counts = collections.Counter(line.split("\t", 1)[1].rstrip("\n")
                                 for line in open(corpus) if "\t" in line)
    open(f"{tmp}/units.txt", "w").write("".join(u + "\n" for u in sorted(counts)))
    json.dump(dict(counts), open(f"{tmp}/groups.json", "w"))
    bounds = [max(1, round(f / 100 * len(counts))) for f in FRACTIONS]
    print(f"Corpus: {sum(counts.values())} records, |U| = {len(counts)} functions; bounds "
          + ", ".join(f"{f} % -> h = {h}" for f, h in zip(FRACTIONS, bounds)) + "; n = 36.")
    results = {(t, h): [simulate(plan, tmp, corpus, t, h, 36, s) for s in SEEDS]
               for t, h in itertools.product(("r", "p", "rb", "grb"), bounds)}
    study("RQ1a: R, P, RB", ("r", "p", "rb"), bounds, results, PAPER)
    study("RQ2: RB vs GRB", ("rb", "grb"), bounds, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
