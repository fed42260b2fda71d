#!/usr/bin/python3
"""Checks every statistic of `perfhat-experiment stats` against SciPy, to 1e-6.

Usage: scipy_compare_test.py PATH/TO/perfhat-experiment
Run with Debian's /usr/bin/python3 (python3-scipy). The expected values are computed here, by
SciPy, at test time, from fixed data sets (seeded generators): small and large samples, equal
and unequal sizes, with and without ties, on both sides of SciPy's exact/asymptotic switch and
of every Shapiro-Wilk branch (n = 3, 4-5, 6-11, > 11). Bad input must exit 2 naming the line.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy import stats

TOL = 1e-6
BIN = sys.argv[1]


def datasets():
    rng = np.random.default_rng(20261125)
    lognorm = lambda n, mu, s: rng.lognormal(mu, s, n)
    yield "T1", "total", lognorm(10, 6.0, 0.4), lognorm(10, 6.1, 0.4)          # paper-sized
    yield "T2", "total", lognorm(5, 5.5, 0.5), lognorm(4, 6.3, 0.5)            # exact, tiny
    yield "T2", "fe", np.round(lognorm(6, 4, 0.6)), np.round(lognorm(5, 4.2, 0.6))
    yield "T2", "rca", np.array([30., 30, 45, 60, 60, 90]), np.array([60., 90, 90, 120, 45])
    yield "T3", "total", lognorm(3, 6, 0.3), lognorm(12, 6, 0.3)               # n = 3, unequal
    yield "T4", "total", lognorm(8, 6, 0.5), lognorm(9, 6.4, 0.5)              # exact at 8
    yield "T4", "fe", lognorm(9, 4, 0.5), lognorm(9, 4.5, 0.5)                 # asymptotic
    yield "T4", "rca", np.round(lognorm(25, 5, 0.8), -1), np.round(lognorm(19, 5.6, 0.8), -1)
    yield "T5", "total", lognorm(7, 6, 0.2), lognorm(40, 6, 0.9)               # exact, long tail
    yield "T6", "total", np.array([10., 20, 30, 40]), np.array([50., 60, 70])   # full separation
    yield "T6", "fe", np.array([5., 5, 5, 6]), np.array([5., 5, 6, 6, 7])     # heavy ties
    yield "T7", "total", lognorm(15, 6, 0.5), lognorm(11, 6, 0.5)              # shapiro n > 11


def expected(t, c):
    t, c = np.asarray(t, float), np.asarray(c, float)
    mw = stats.mannwhitneyu(t, c)  # defaults: two-sided, continuity, method="auto"
    gt = sum((a > b) for a in t for b in c)
    lt = sum((a < b) for a in t for b in c)
    pairs = len(t) * len(c)
    st, sc = stats.shapiro(t), stats.shapiro(c)
    return {
        "n.treatment": len(t), "n.control": len(c),
        "mean.treatment": t.mean(), "mean.control": c.mean(),
        "sd.treatment": t.std(ddof=1), "sd.control": c.std(ddof=1),
        "shapiro.treatment.W": st.statistic, "shapiro.treatment.p": st.pvalue,
        "shapiro.control.W": sc.statistic, "shapiro.control.p": sc.pvalue,
        "mann_whitney.U": mw.statistic, "mann_whitney.p": mw.pvalue,
        "cliffs_delta.value": (gt - lt) / pairs,
        "a12": (gt + 0.5 * (pairs - gt - lt)) / pairs,
    }


def flatten(d, prefix=""):
    out = {}
    for k, v in d.items():
        key = prefix + k
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


def romano(d):
    d = abs(d)
    return "negligible" if d < 0.147 else "small" if d < 0.33 else "medium" if d < 0.474 else "large"


def run(args):
    return subprocess.run([BIN] + args, capture_output=True, text=True)


def check_statistics(tmp):
    path = os.path.join(tmp, "measurements.csv")
    want = {}
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["participant", "group", "task", "measure", "seconds"])
        for task, measure, t, c in datasets():
            want[(task, measure)] = expected(t, c)
            for i, v in enumerate(t):
                w.writerow([f"t{i}", "treatment", task, measure, repr(float(v))])
            for i, v in enumerate(c):
                w.writerow([f"c{i}", "control", task, measure, repr(float(v))])
    res = run(["stats", "--csv", path])
    if res.returncode != 0:
        return [f"stats exited {res.returncode}: {res.stderr}"]
    got = json.loads(res.stdout)["results"]
    failures = []
    if len(got) != len(want):
        failures.append(f"{len(got)} results, expected {len(want)}")
    for r in got:
        exp = want.get((r["task"], r["measure"]))
        if exp is None:
            failures.append(f"unexpected result {r['task']} {r['measure']}")
            continue
        flat = flatten(r)
        for key, value in exp.items():
            if key not in flat or abs(flat[key] - float(value)) > TOL:
                failures.append(f"{r['task']} {r['measure']} {key}: got {flat.get(key)}, "
                                f"SciPy {float(value)!r}")
        if flat["cliffs_delta.magnitude"] != romano(exp["cliffs_delta.value"]):
            failures.append(f"{r['task']} {r['measure']}: magnitude {flat['cliffs_delta.magnitude']}")
    import scipy
    print(f"compared {len(got)} task x measure results with SciPy {scipy.__version__}")
    return failures


BAD_INPUTS = [
    ("missing column", "participant,group,task,seconds\np1,treatment,T1,3\n", ":1:", "measure"),
    ("unknown group", "participant,group,task,measure,seconds\np1,treatment,T1,total,3\n"
     "p2,placebo,T1,total,4\n", ":3:", "placebo"),
    ("non-numeric seconds", "participant,group,task,measure,seconds\np1,treatment,T1,total,3\n"
     "p2,control,T1,total,4s\n", ":3:", "4s"),
    ("too few values", "participant,group,task,measure,seconds\n" +
     "".join(f"t{i},treatment,T1,total,{i + 1}\n" for i in range(3)) +
     "c1,control,T1,total,5\nc2,control,T1,total,6\n", ":5:", "at least 3"),
]


def check_bad_input(tmp):
    failures = []
    for name, text, line, word in BAD_INPUTS:
        path = os.path.join(tmp, "bad.csv")
        with open(path, "w") as f:
            f.write(text)
        res = run(["stats", "--csv", path])
        if res.returncode != 2 or line not in res.stderr or word not in res.stderr:
            failures.append(f"{name}: exit {res.returncode}, stderr {res.stderr!r}")
    huge = os.path.join(tmp, "huge.csv")
    with open(huge, "w") as f:
        f.write("participant,group,task,measure,seconds\n")
        f.truncate(64 << 20)  # sparse: 64 MiB without writing them
    res = run(["stats", "--csv", huge])
    if res.returncode != 2 or "limit" not in res.stderr:
        failures.append(f"huge file: exit {res.returncode}, stderr {res.stderr!r}")
    return failures


def main():
    with tempfile.TemporaryDirectory() as tmp:
        failures = check_statistics(tmp) + check_bad_input(tmp)
    for f in failures:
        print("FAIL", f)
    if failures:
        sys.exit(1)
    print("all statistics agree with SciPy to", TOL)


if __name__ == "__main__":
    main()
