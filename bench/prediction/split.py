#!/usr/bin/env python3
"""The accuracy study's fixed development / evaluation split, and a check of its manifest.

    bench/prediction/split.py            draw the `set` column of changes.tsv and rewrite it
    bench/prediction/split.py --check    verify changes.tsv: the sets are the draw's, every
                                         patch exists and is listed, every row is well formed

The draw is stratified by category: within each category (in name order) the changes, in
manifest order, are shuffled with random.Random(SEED) and the first half goes to `dev`, the
second to `eval`; a category with an odd count gives its extra change to whichever set is
smaller so far (a coin from the same generator on a tie). The split was drawn once, before the
analysis was tuned against any of these changes; rows added later change the draw, so the
check fails until the split is redrawn on purpose (and the README says so).

Rows of a held-out set take no part in the draw: `heldout` was written after dev and eval had
been looked at and before the analysis was tuned again, `heldout2` after that set had been
measured and before the next round of tuning, `heldout3`, `heldout4` and `heldout5` likewise after that (HELDOUT lists each set's changes, so a row cannot
move in or out of one silently).
"""
import json
import os
import random
import re
import sys

SEED = 20261125
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MANIFEST = os.path.join(HERE, "changes.tsv")
# Each held-out set's changes, written before any tuning on them (2026-11-26: c43-c61 in the
# morning, c62-c76 in the next stop, c77-c91 in the one after, c92-c102 in the one after that, c103-c111 in the next).
HELDOUT = {"heldout": ["c%d" % n for n in range(43, 62)],
           "heldout2": ["c%d" % n for n in range(62, 77)],
           "heldout3": ["c%d" % n for n in range(77, 92)],
           "heldout4": ["c%d" % n for n in range(92, 103)],
           "heldout5": ["c%d" % n for n in range(103, 112)]}
HELDOUT_OF = {c: s for s, changes in HELDOUT.items() for c in changes}
COLUMNS = ["change", "set", "patch", "file", "function", "key", "category", "description"]
CATEGORIES = {"added", "removed", "moved", "replaced", "producer-loop", "local-loop",
              "nested-loop", "callee-context", "branch", "non-perf"}


def read(path=MANIFEST):
    lines = open(path, encoding="utf-8").read().splitlines()
    if not lines or lines[0].split("\t") != COLUMNS:
        sys.exit(f"{path}: the header must be: {' '.join(COLUMNS)}")
    rows = []
    for n, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != len(COLUMNS):
            sys.exit(f"{path}:{n}: {len(fields)} columns, expected {len(COLUMNS)}")
        rows.append(dict(zip(COLUMNS, fields)))
    return rows


def draw(rows, seed=SEED):
    rows = [r for r in rows if r["set"] not in HELDOUT]
    rng = random.Random(seed)
    sets = {}
    counts = {"dev": 0, "eval": 0}
    for category in sorted({r["category"] for r in rows}):
        members = [r["change"] for r in rows if r["category"] == category]
        rng.shuffle(members)
        half = len(members) // 2
        dev, evaluation = members[:half], members[half:2 * half]
        if len(members) % 2:
            extra = members[-1]
            if counts["dev"] != counts["eval"]:
                side = "dev" if counts["dev"] < counts["eval"] else "eval"
            else:
                side = rng.choice(["dev", "eval"])
            (dev if side == "dev" else evaluation).append(extra)
        for c in dev:
            sets[c] = "dev"
        for c in evaluation:
            sets[c] = "eval"
        counts["dev"] += len(dev)
        counts["eval"] += len(evaluation)
    return sets


def check(rows):
    problems = []
    seen = set()
    keys = set()
    dataset = os.path.join(ROOT, "samples/datasets/agile.feedback.json")
    if os.path.exists(dataset):
        keys = {item.get("key") for item in json.load(open(dataset)).get("items", [])}
    for r in rows:
        c = r["change"]
        if c in seen:
            problems.append(f"{c}: listed twice")
        seen.add(c)
        if r["category"] not in CATEGORIES:
            problems.append(f"{c}: unknown category '{r['category']}'")
        patch = os.path.join(ROOT, r["patch"])
        if not os.path.isfile(patch):
            problems.append(f"{c}: no patch {r['patch']}")
            continue
        text = open(patch, encoding="utf-8").read()
        if f"+++ b/{r['file']}" not in text:
            problems.append(f"{c}: {r['patch']} does not change {r['file']}")
        source = os.path.join(ROOT, r["file"])
        if not os.path.isfile(source) or not re.search(
                r"::%s\(" % re.escape(r["function"]), open(source, encoding="utf-8").read()):
            problems.append(f"{c}: {r['file']} defines no ::{r['function']}(")
        if keys and r["key"] not in keys:
            problems.append(f"{c}: key '{r['key']}' is not in samples/datasets/agile.feedback.json")
    listed = {os.path.normpath(r["patch"]) for r in rows}
    changes_dir = os.path.join(HERE, "changes")
    for name in sorted(os.listdir(changes_dir)):
        rel = os.path.normpath(os.path.relpath(os.path.join(changes_dir, name), ROOT))
        if name.endswith(".patch") and rel not in listed:
            problems.append(f"{rel}: not in changes.tsv")
    expected = draw(rows)
    for r in rows:
        if HELDOUT_OF.get(r["change"]) != (r["set"] if r["set"] in HELDOUT else None):
            problems.append(f"{r['change']}: set '{r['set']}', the held-out lists say "
                            f"{HELDOUT_OF.get(r['change'], 'dev or eval')}")
            continue
        if r["set"] in HELDOUT:
            continue
        if r["set"] != expected[r["change"]]:
            problems.append(f"{r['change']}: set '{r['set']}', the seeded draw says "
                            f"'{expected[r['change']]}'")
    return problems


def main():
    rows = read()
    if sys.argv[1:] == ["--check"]:
        problems = check(rows)
        for p in problems:
            print("changes.tsv:", p, file=sys.stderr)
        n = {s: sum(r["set"] == s for r in rows) for s in ("dev", "eval", "heldout", "heldout2", "heldout3", "heldout4", "heldout5")}
        print(f"changes.tsv: {len(rows)} changes, dev {n['dev']}, eval {n['eval']}, "
              f"heldout {n['heldout']}, heldout2 {n['heldout2']}, heldout3 {n['heldout3']}, heldout4 {n['heldout4']}, heldout5 {n['heldout5']}, seed {SEED}: "
              + ("ok" if not problems else f"{len(problems)} problem(s)"))
        return 1 if problems else 0
    if sys.argv[1:]:
        sys.exit(__doc__)
    sets = draw(rows)
    sets.update({r["change"]: r["set"] for r in rows if r["set"] in HELDOUT})
    with open(MANIFEST, "w", encoding="utf-8") as out:
        out.write("\t".join(COLUMNS) + "\n")
        for r in rows:
            r["set"] = sets[r["change"]]
            out.write("\t".join(r[c] for c in COLUMNS) + "\n")
    for s in ("dev", "eval"):
        print(s, " ".join(r["change"] for r in rows if r["set"] == s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
