#!/usr/bin/env python3
"""Checks the one-way arrows of docs/architecture.md on #include lines.

    scripts/layers_check.py        prints each include that points the wrong way; exit 1 if any

Each rule names a folder and the folders its files must not include. Only project includes
("server/...", "feedback-handler/...", "common/...") are read; system headers are not.
"""
import os
import re
import sys

# folder → folders it must not include (see docs/architecture.md, "One-way arrows").
RULES = {
    # The protocol layer knows no feature: rendering lives in server/presentation.
    "server/lsp": ["server/features", "server/analysis", "server/presentation", "server/server",
                   "server/feedback"],
    "server/features": ["server/lsp", "server/presentation", "server/server", "server/feedback"],
    "server/analysis": ["server/lsp", "server/presentation", "server/server", "server/features",
                        "server/feedback"],
    "server/presentation": ["server/server", "server/analysis/ast_", "server/feedback"],
    # The workspace index computes; features word its answers (callers_report.h → callers_text).
    "server/index": ["server/lsp", "server/presentation", "server/server", "server/features",
                     "server/feedback"],
    "feedback-handler/store": ["feedback-handler/ingest", "feedback-handler/http",
                               "feedback-handler/sync"],
    "common": ["server/", "feedback-handler/", "instrumentation/"],
    "instrumentation": ["server/", "feedback-handler/", "common/"],
}
# Files allowed across an arrow, each with its reason.
EXCEPTIONS = {
    # libperfhat installs on its own and links nothing of the tree, yet its variant masks must
    # name functions exactly as the handler does: it compiles the one key normalizer's sources
    # under a namespace of its own (no link-time or installed dependency on common/).
    "instrumentation/src/function_key_copy.cc",
    # The tree's one hash (header-only, inline; compiled into libperfhat, nothing installed or
    # linked): the carried selection's file names its configuration with it.
    "instrumentation/src/selection_store.cc",
    # Checked locking is one header, libperfhat's (it includes only the standard library, and
    # libperfhat may include nothing of the tree); common/ gives it the tree's names.
    "common/thread_annotations.h",
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    bad = 0
    for folder, forbidden in RULES.items():
        for dirpath, _, filenames in os.walk(os.path.join(root, folder)):
            for f in sorted(filenames):
                if not f.endswith((".cc", ".h", ".hpp")):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                if rel in EXCEPTIONS:
                    continue
                for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                    m = INCLUDE.match(line)
                    if m and any(m.group(1).startswith(x) for x in forbidden):
                        print(f"{rel}:{n}: includes {m.group(1)} ({folder} must not)")
                        bad += 1
    if bad:
        print(f"{bad} include(s) against the one-way arrows (docs/architecture.md)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
