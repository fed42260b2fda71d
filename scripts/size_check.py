#!/usr/bin/env python3
"""Lists C++ files over 600 lines and functions over 120 lines (issue #20's size rule).

    scripts/size_check.py [--max-file N] [--max-function N] [--strict] [DIR ...]

DIRs default to server, feedback-handler, instrumentation and common. Every offender is printed
as `file: N lines` or `file:LINE: function NAME: N lines`; offenders that docs/architecture.md
names under "Files and functions over the size rule" are marked `(explained)`. Exit status 0,
or 1 with --strict when any offender is not explained.

Functions are found by braces, not by a parser: comments, strings and character literals are
blanked first; a `{` opens a function when the text before it (back to the previous `;`, `{` or
`}`) has a parameter list and is no control statement, and it is not nested in another
function. A lambda counts as part of its enclosing function.
"""
import argparse
import os
import re
import sys

DEFAULT_DIRS = ["server", "feedback-handler", "instrumentation", "common"]
EXTENSIONS = (".cc", ".h", ".hpp", ".cpp")
CONTROL = re.compile(r"^\s*(if|for|while|switch|catch|do|else|return|case)\b")
TYPE_BLOCK = re.compile(r"\b(namespace|class|struct|union|enum)\b[^()]*$|extern\s+\"C\"")


def blank_comments_and_strings(text):
    """Replaces comments and literals by spaces, keeping every newline (line numbers stay)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """Yields (name, first line, line count) of each function body in the file."""
    code = blank_comments_and_strings(text)
    code = re.sub(r"^[ \t]*#.*$", lambda m: " " * len(m.group(0)), code, flags=re.M)
    stack = []  # (kind, start line, name)
    stmt_start = 0
    line = 1
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c in ";":
            stmt_start = i + 1
        elif c == "{":
            head = code[stmt_start:i]
            inside_function = any(k == "function" for k, _, _ in stack)
            kind = "block"
            name = ""
            if not inside_function:
                flat = " ".join(head.split())
                if TYPE_BLOCK.search(flat):
                    kind = "type"
                elif "(" in flat and not CONTROL.match(flat) and not flat.endswith("="):
                    kind = "function"
                    m = re.search(r"([~\w:<>,\s*&=!+\-\[\]]+?)\s*\(", flat)
                    name = (m.group(1).split()[-1] if m and m.group(1).split() else flat[:40])
            # The signature's first line: where the text before the brace begins.
            start_line = line - head.count("\n") + head[: len(head) - len(head.lstrip())].count("\n")
            stack.append((kind, start_line if kind == "function" else line, name))
            stmt_start = i + 1
        elif c == "}":
            if stack:
                kind, start, name = stack.pop()
                if kind == "function":
                    yield name, start, line - start + 1
            stmt_start = i + 1


def explained_paths(root):
    """Paths and `path:function` names listed in docs/architecture.md's size section."""
    path = os.path.join(root, "docs", "architecture.md")
    if not os.path.exists(path):
        return set()
    text = open(path, encoding="utf-8").read()
    m = re.search(r"^## Files and functions over the size rule\n(.*?)(?=^## |\Z)", text,
                  re.S | re.M)
    return set(re.findall(r"`([^`]+)`", m.group(1))) if m else set()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="*", default=DEFAULT_DIRS)
    ap.add_argument("--max-file", type=int, default=600)
    ap.add_argument("--max-function", type=int, default=120)
    ap.add_argument("--strict", action="store_true", help="exit 1 on an unexplained offender")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    explained = explained_paths(root)
    unexplained = 0
    for d in args.dirs:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, d)):
            dirnames[:] = sorted(x for x in dirnames if not x.startswith("."))
            for f in sorted(filenames):
                if not f.endswith(EXTENSIONS):
                    continue
                full = os.path.join(dirpath, f)
                rel = os.path.relpath(full, root)
                text = open(full, encoding="utf-8", errors="replace").read()
                n = text.count("\n")
                if n > args.max_file:
                    ok = rel in explained
                    unexplained += not ok
                    print(f"{rel}: {n} lines" + (" (explained)" if ok else ""))
                for name, start, length in functions(text):
                    if length > args.max_function:
                        ok = rel in explained or f"{rel}:{name}" in explained
                        unexplained += not ok
                        print(f"{rel}:{start}: function {name}: {length} lines" +
                              (" (explained)" if ok else ""))
    if unexplained:
        print(f"{unexplained} offender(s) not explained in docs/architecture.md")
    return 1 if args.strict and unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
