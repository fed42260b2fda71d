#!/usr/bin/python3
"""paper_stats.py's statistics: the two-way ANOVA's F values against sums of squares from
least-squares model comparisons (numpy), p against SciPy's F distribution, and the Bonferroni
letters on hand-made cells whose grouping is known. CTest bench_plan_paper_stats."""
import os
import sys

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import paper_stats  # noqa: E402


def rss(X, y):
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    r = y - X @ beta
    return float(r @ r)


def check_anova():
    rng = np.random.default_rng(7)
    A, B, r = ["p", "r", "rb"], [1, 2, 6, 16], 10
    data = {(a, b): list(rng.normal(i * 0.4 + j * 1.5 + (i * j) * 0.2, 1.0, r))
            for i, a in enumerate(A) for j, b in enumerate(B)}
    rows = [(i, j, v) for i, a in enumerate(A) for j, b in enumerate(B) for v in data[(a, b)]]
    y = np.array([v for *_, v in rows])
    one = np.ones((len(rows), 1))
    da = np.array([[1.0 if i == k else 0.0 for k in range(1, len(A))] for i, _, _ in rows])
    db = np.array([[1.0 if j == k else 0.0 for k in range(1, len(B))] for _, j, _ in rows])
    dab = np.array([[x * z for x in a for z in b] for a, b in zip(da, db)])
    full = rss(np.hstack([one, da, db, dab]), y)
    df_e = len(rows) - len(A) * len(B)
    mse = full / df_e
    # Balanced design: each effect's sum of squares is the RSS it removes from the additive model.
    ss_a = rss(np.hstack([one, db]), y) - rss(np.hstack([one, da, db]), y)
    ss_b = rss(np.hstack([one, da]), y) - rss(np.hstack([one, da, db]), y)
    ss_ab = rss(np.hstack([one, da, db]), y) - full
    want = {"technique": (ss_a / (len(A) - 1)) / mse, "h_bound": (ss_b / (len(B) - 1)) / mse,
            "technique x h_bound": (ss_ab / ((len(A) - 1) * (len(B) - 1))) / mse}
    table, got_mse, got_df, got_r = paper_stats.anova2(data)
    assert got_df == df_e == 108 and got_r == r, (got_df, got_r)
    assert abs(got_mse - mse) < 1e-9 * mse, (got_mse, mse)
    dfs = {"technique": 2, "h_bound": 3, "technique x h_bound": 6}
    for name, f in want.items():
        assert abs(table[name][0] - f) < 1e-7 * f, (name, table[name][0], f)
        assert abs(table[name][1] - stats.f.sf(f, dfs[name], df_e)) < 1e-12, name


def check_letters():
    # Two tight clusters far apart: two groups.
    means = {"a": 0.0, "b": 0.1, "c": 10.0}
    assert paper_stats.letters(means, 1.0, 27, 10) == {"a": "A", "b": "A", "c": "B"}
    # A chain: neighbours alike, the ends different (SE of a difference 0.447, 3 pairs; t for a
    # difference of 1.0 is 2.2, Bonferroni p > 0.05; of 2.0 is 4.5, p < 0.05).
    means = {"lo": 0.0, "mid": 1.0, "hi": 2.0}
    assert paper_stats.letters(means, 1.0, 27, 10) == {"lo": "A", "mid": "AB", "hi": "B"}
    # No variance at all (a deterministic cell): any difference separates, equal means share.
    means = {"x": 100.0, "y": 100.0, "z": 99.0}
    assert paper_stats.letters(means, 0.0, 27, 10) == {"z": "A", "x": "B", "y": "B"}


check_anova()
check_letters()
print("ok")
