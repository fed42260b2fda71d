#!/usr/bin/env python3
"""Scores the accuracy study's rows (written by accuracy.sh) and prints Markdown tables.

    bench/prediction/report.py ROWS.tsv

ROWS.tsv, one change per line, tab-separated: change, function, before p50, before mean,
predicted p50, predicted mean, measured p50, measured mean, calls, flagged (regression /
improvement / both / no), set, category, predicted interval low, high (ms; nan when the hint
shows none; high 'inf' when the range is open above: a part without data). Older rows without
the last four columns are read as set '-', no interval.

Per change: the absolute percentage error (APE) of the predicted p50 and mean against the
measured ones; the expected flag from the measured change of the p50 (regression or improvement
when it moved by more than 1 ms and 10 %, none when it moved by less than 0.5 ms, either in
between: not scored); whether the predicted interval contains the measured p50. Then one table
per set (dev, eval, heldout, heldout2, heldout3, heldout4, heldout5, and '-' for changes given on the command line) and a summary with a
row per set and one over all.
"""
import math
import statistics
import sys

MOVED_MS, MOVED_REL, STILL_MS = 1.0, 0.10, 0.5


def num(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return float("nan")


def ape(predicted, measured):
    if measured > 0 and not math.isnan(predicted) and not math.isnan(measured):
        return abs(predicted - measured) / measured * 100
    return float("nan")


def score(fields):
    fields = fields + [""] * (14 - len(fields))
    r = {
        "change": fields[0], "function": fields[1], "before_p50": num(fields[2]),
        "before_mean": num(fields[3]), "pred_p50": num(fields[4]), "pred_mean": num(fields[5]),
        "meas_p50": num(fields[6]), "meas_mean": num(fields[7]), "count": fields[8] or "0",
        "flagged": fields[9] or "no", "set": fields[10] or "-", "category": fields[11] or "-",
        "lo": num(fields[12]), "hi": num(fields[13]),
    }
    r["ape_p50"] = ape(r["pred_p50"], r["meas_p50"])
    r["ape_mean"] = ape(r["pred_mean"], r["meas_mean"])
    delta = r["meas_p50"] - r["before_p50"]
    r["delta"] = delta
    rel = abs(delta) / r["before_p50"] if r["before_p50"] > 0 else float("inf")
    if math.isnan(delta):
        r["expected"] = "?"
    elif abs(delta) > MOVED_MS and rel > MOVED_REL:
        r["expected"] = "regression" if delta > 0 else "improvement"
    elif abs(delta) < STILL_MS:
        r["expected"] = "none"
    else:
        r["expected"] = "either"
    flagged = r["flagged"]
    if r["expected"] in ("regression", "improvement"):
        r["flag_ok"] = flagged == r["expected"]
    elif r["expected"] == "none":
        r["flag_ok"] = flagged == "no"
    else:
        r["flag_ok"] = None
    if math.isnan(r["lo"]) or math.isnan(r["hi"]) or math.isnan(r["meas_p50"]):
        r["inside"] = None
    else:
        r["inside"] = r["lo"] <= r["meas_p50"] <= r["hi"]
    return r


def f2(v):
    return "n/a" if math.isnan(v) else "%.2f" % v


def pct(v):
    return "n/a" if math.isnan(v) else "%.0f %%" % v


def yes_no(v):
    return "n/a" if v is None else ("yes" if v else "no")


def table(rows):
    print("| change | category | function | before p50 / mean (ms) | predicted p50 / mean (ms) "
          "| predicted interval (ms) | measured p50 / mean (calls) | measured change (ms) "
          "| APE p50 / mean | flagged | expected | flag right | interval contains |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        interval = "n/a" if math.isnan(r["lo"]) or math.isnan(r["hi"]) else \
            "%s–%s" % (f2(r["lo"]), "?" if math.isinf(r["hi"]) else f2(r["hi"]))
        delta = "n/a" if math.isnan(r["delta"]) else "%+.2f" % r["delta"]
        right = "—" if r["flag_ok"] is None else yes_no(r["flag_ok"])
        print(f"| {r['change']} | {r['category']} | {r['function']} "
              f"| {f2(r['before_p50'])} / {f2(r['before_mean'])} "
              f"| {f2(r['pred_p50'])} / {f2(r['pred_mean'])} | {interval} "
              f"| {f2(r['meas_p50'])} / {f2(r['meas_mean'])} ({r['count']}) | {delta} "
              f"| {pct(r['ape_p50'])} / {pct(r['ape_mean'])} | {r['flagged']} | {r['expected']} "
              f"| {right} | {yes_no(r['inside'])} |")


def summary_row(name, rows):
    def median(key):
        v = [r[key] for r in rows if not math.isnan(r[key])]
        return ("%.0f %%" % statistics.median(v)) if v else "n/a"
    moved = [r for r in rows if r["expected"] in ("regression", "improvement")]
    still = [r for r in rows if r["expected"] == "none"]
    with_interval = [r for r in rows if r["inside"] is not None]
    right = sum(r["flag_ok"] for r in moved)
    false = sum(not r["flag_ok"] for r in still)
    inside = sum(r["inside"] for r in with_interval)
    open_above = sum(math.isinf(r["hi"]) for r in with_interval)
    coverage = (f"{inside}/{len(with_interval)}" if with_interval else "n/a")
    if open_above:  # a part without data: the range claims no top
        coverage += f" ({open_above} open above)"
    print(f"| {name} | {len(rows)} | {median('ape_p50')} | {median('ape_mean')} "
          f"| {right}/{len(moved)} | {false}/{len(still)} | {coverage} |")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows = [score(l.split("\t")) for l in open(sys.argv[1], encoding="utf-8").read().splitlines()
            if l.strip()]
    sets = [s for s in ("dev", "eval", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "-") if any(r["set"] == s for r in rows)]
    for s in sets:
        print(f"\n### set: {'(command line)' if s == '-' else s}\n")
        table([r for r in rows if r["set"] == s])
    print("\n### summary\n")
    print("| set | changes | median APE p50 | median APE mean | moved > 1 ms and 10 %: flagged "
          "in the right direction | moved < 0.5 ms: flagged (false flags) "
          "| interval contains measured p50 |")
    print("|---|---|---|---|---|---|---|")
    for s in sets:
        summary_row(s if s != "-" else "(command line)", [r for r in rows if r["set"] == s])
    if len(sets) > 1:
        summary_row("all", rows)


if __name__ == "__main__":
    main()
