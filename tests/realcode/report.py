#!/usr/bin/env python3
"""Figures of the real-code suite from the handler's store and perfhat-lsp's --match-report.

Measured functions: every function key the handler stored, less the static initialisers the
compiler generates per file (`_GLOBAL__sub_I_…`, `__static_initialization_and_destruction_0`):
they have no definition in the source to match (counted and listed apart). Matched: a key that
some definition
in the checked sources took its production data from (exactly, by mangled name, by name, across
overloads / instantiations, or by file and line). Exit status 1 when the matched share is below
--min-share or any regression warning was given on the (unmodified) sources.
"""
import argparse
import json
import re
import sqlite3
import sys


def compiler_generated(key):
    return key.startswith("_GLOBAL__") or key.startswith("__static_initialization_and_destruction")


def why(key):
    """A first guess at why a key found no definition, for the list of unmatched functions."""
    if "lambda" in key:
        return "lambda"
    if re.search(r"::~?(\w+)(<[^()]*>)?::~?\1\(", key) or "::~" in key:
        return "constructor/destructor (implicit or defaulted?)"
    if "<" in key.split("(")[0]:
        return "template instantiation"
    if ")::" in key:
        return "local class"
    if "operator" in key:
        return "operator"
    return "other"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", required=True)
    ap.add_argument("--matches", required=True)
    ap.add_argument("--min-share", type=float, default=98.0)
    ap.add_argument("--out")
    a = ap.parse_args()
    db = sqlite3.connect(a.store)
    stored = {k for (k,) in db.execute("SELECT key FROM functions")}
    generated = {k for k in stored if compiler_generated(k)}
    measured = stored - generated
    matched, how, files, functions = set(), {}, 0, 0
    regressions = possibly_new = virtual_calls = virtual_resolved = 0
    indirect_calls = indirect_resolved = 0
    implicit_matched = set()
    with open(a.matches, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if "regressions" in r:
                files += 1
                regressions += r["regressions"]
                possibly_new += r["possibly_new"]
                virtual_calls += r.get("virtual_calls", 0)
                virtual_resolved += r.get("virtual_resolved", 0)
                indirect_calls += r.get("indirect_calls", 0)
                indirect_resolved += r.get("indirect_resolved", 0)
                continue
            functions += 1
            for k in r["items"]:
                matched.add(k)
                if r.get("implicit"):
                    implicit_matched.add(k)
                how.setdefault(r["match"], set()).add(k)
    hit = measured & matched
    share = 100.0 * len(hit) / len(measured) if measured else 0.0
    share_all = 100.0 * len(hit) / len(stored) if stored else 0.0
    lines = [
        f"files checked: {files}, definitions: {functions}",
        f"measured functions: {len(measured)}, matched to a definition: {len(hit)} ({share:.1f} %)",
        f"compiler-generated static initialisers (no source definition, not counted above): "
        f"{len(generated)}; with them the share is {share_all:.1f} %",
        "matched by: " + ", ".join(f"{m or 'none'} {len(ks & measured)}" for m, ks in sorted(how.items())),
        f"regression warnings: {regressions}, possibly-new notes: {possibly_new}",
        f"compiler-defined special members matched to their class: {len(implicit_matched & measured)}",
        f"virtual calls: {virtual_calls}, resolved from call-site data to the implementations "
        f"that ran: {virtual_resolved}",
        f"calls through function pointers / std::function: {indirect_calls}, resolved from "
        f"call-site data to the functions that ran: {indirect_resolved}",
    ]
    unmatched = sorted(measured - matched)
    by_reason = {}
    for k in unmatched:
        by_reason.setdefault(why(k), []).append(k)
    lines.append(f"unmatched: {len(unmatched)}")
    if generated:
        by_reason["compiler-generated static initialiser (not counted)"] = sorted(generated)
    for reason, keys in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"  {reason}: {len(keys)}")
        for k in keys:
            lines.append(f"    {k}")
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    ok = True
    if share < a.min_share:
        print(f"FAIL: matched share {share:.1f} % < {a.min_share} %")
        ok = False
    if regressions:
        print(f"FAIL: {regressions} regression warnings on unmodified sources")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
