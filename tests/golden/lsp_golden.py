#!/usr/bin/env python3
"""What perfhat-lsp shows on the sample service, compared with committed golden files.

    tests/golden/lsp_golden.py BUILD_DIR [--update]

Runs the real perfhat-lsp on samples/agile/iteration_service.cc with the shipped dataset
(samples/datasets/agile.feedback.json, so the output does not depend on a live run), twice as
the demo does: the file as it is, and with task T4's patch applied in a temporary copy of the
tree. For each it records
  - `--check` output (timing lines dropped: they are measurements) and the `--match-report`,
  - over LSP (stdio): inlay hints, code lenses, diagnostics, and the hover at the start of every
    identifier (consecutive identical hovers once).
Paths are written relative to the tree. Any difference from tests/golden/*.golden fails, with a
unified diff; --update rewrites the golden files (after a change meant to alter the output).
"""
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = "samples/agile/iteration_service.cc"
DATASET = os.path.join(ROOT, "samples/datasets/agile.feedback.json")
GOLDEN_DIR = os.path.join(ROOT, "tests/golden")


class Lsp:
    """A JSON-RPC client over the server's stdin/stdout (Content-Length framing)."""

    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        self.next_id = 1
        self.notes = []

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def read(self):
        length = None
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("perfhat-lsp closed its output")
            line = line.strip()
            if not line:
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.p.stdout.read(length))

    def call(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            m = self.read()
            if m.get("id") == rid and "method" not in m:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result")
            if "method" in m and "id" in m:  # a request of the server's: answer it
                self.send({"jsonrpc": "2.0", "id": m["id"], "result": None})
            elif "method" in m:
                self.notes.append(m)

    def wait_note(self, match, probe, seconds=120):
        """The first notification for which match(note) holds, or None after `seconds`. The
        server publishes diagnostics from its worker after the build that answered the first
        request, so they may come after later responses; each probe() (a request) reads what
        the server sent before its answer."""
        deadline = time.monotonic() + seconds
        while True:
            for n in self.notes:
                if match(n):
                    return n
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)
            probe()

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self, root):
        """The handshake an editor opens with: UTF-8 positions, markdown hovers, workspace root."""
        self.call("initialize", {"processId": None, "rootUri": "file://" + root,
                                 "capabilities": {"general": {"positionEncodings": ["utf-8"]},
                                                  "textDocument": {"hover": {
                                                      "contentFormat": ["markdown"]}}}})
        self.notify("initialized", {})

    def close(self):
        try:
            self.call("shutdown", None)
            self.notify("exit", None)
            self.p.wait(timeout=20)
        except Exception:
            self.p.kill()


def relative(text, root):
    for r in (root, ROOT):  # the tree analysed (ROOT or the T4 copy), and the dataset's
        text = text.replace(r + "/", "").replace(r, ".")
    return text


def check_output(lsp_bin, root, compile_db):
    report = os.path.join(tempfile.mkdtemp(), "match.jsonl")
    out = subprocess.run([lsp_bin, "--check", os.path.join(root, TARGET), "--feedback-file",
                          DATASET, "--compile-commands", compile_db, "--no-color",
                          "--match-report", report],
                         capture_output=True, text=True, timeout=300, check=False).stdout
    lines = [l for l in out.splitlines() if not re.match(r"^(cold|warm): ", l)]
    text = "\n".join(lines) + "\n== match report\n" + open(report).read()
    return relative(text, root)


def lsp_output(lsp_bin, root, compile_db):
    path = os.path.join(root, TARGET)
    uri = "file://" + path
    text = open(path).read()
    lsp = Lsp([lsp_bin, "--feedback-file", DATASET, "--compile-commands", compile_db])
    out = []
    try:
        lsp.initialize(root)
        lsp.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "cpp", "version": 1, "text": text}})
        doc = {"textDocument": {"uri": uri}}
        lines = text.split("\n")
        whole = {"start": {"line": 0, "character": 0},
                 "end": {"line": len(lines), "character": 0}}
        out.append("== inlay hints")
        out.append(json.dumps(lsp.call("textDocument/inlayHint", dict(doc, range=whole)),
                              indent=1, sort_keys=True))
        out.append("== code lenses")
        out.append(json.dumps(lsp.call("textDocument/codeLens", doc), indent=1, sort_keys=True))
        out.append("== hovers")
        last = None
        for n, line in enumerate(lines):
            for m in re.finditer(r"[A-Za-z_]\w*", line):
                h = lsp.call("textDocument/hover", dict(doc, position={
                    "line": n, "character": m.start()}))
                value = h["contents"]["value"] if h else None
                if value is not None and value != last:
                    out.append(f"-- {n + 1}:{m.start() + 1}\n{value}")
                last = value
        lsp.wait_note(lambda m: m["method"] == "textDocument/publishDiagnostics"
                      and m["params"]["uri"] == uri,
                      lambda: lsp.call("textDocument/codeLens", doc))
        diags = [m["params"] for m in lsp.notes
                 if m["method"] == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri]
        out.append("== diagnostics")
        out.append(json.dumps(diags[-1]["diagnostics"] if diags else None, indent=1,
                              sort_keys=True))
    finally:
        lsp.close()
    return relative("\n".join(out) + "\n", root)


def t4_copy(work, build):
    """The demo's T4 tree: samples/ copied and patched, the rest linked, compile db rewritten."""
    for entry in os.listdir(ROOT):
        if entry in ("samples", ".git"):
            continue
        os.symlink(os.path.join(ROOT, entry), os.path.join(work, entry))
    shutil.copytree(os.path.join(ROOT, "samples"), os.path.join(work, "samples"))
    with open(os.path.join(ROOT, "samples/tasks/T4/reference.patch")) as patch:
        subprocess.run(["patch", "-s", "-p1"], stdin=patch, cwd=work, check=True)
    db_dir = os.path.join(work, "compile-db")
    os.mkdir(db_dir)
    db = open(os.path.join(build, "compile_commands.json")).read()
    db = re.sub(re.escape(ROOT) + r'(?=[/ "])', work, db)
    open(os.path.join(db_dir, "compile_commands.json"), "w").write(db)
    return db_dir


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    build = os.path.abspath(sys.argv[1])
    update = "--update" in sys.argv[2:]
    lsp_bin = os.path.join(build, "server/perfhat-lsp")
    work = tempfile.mkdtemp(prefix="perfhat-golden-")
    try:
        t4_db = t4_copy(work, build)
        results = {
            "check_sample.golden": check_output(lsp_bin, ROOT, build),
            "lsp_sample.golden": lsp_output(lsp_bin, ROOT, build),
            "check_t4.golden": check_output(lsp_bin, work, t4_db),
            "lsp_t4.golden": lsp_output(lsp_bin, work, t4_db),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    failed = 0
    for name, got in results.items():
        path = os.path.join(GOLDEN_DIR, name)
        if update:
            open(path, "w").write(got)
            print(f"wrote {path}")
            continue
        want = open(path).read() if os.path.exists(path) else ""
        if got != want:
            failed += 1
            sys.stdout.writelines(difflib.unified_diff(
                want.splitlines(True), got.splitlines(True), f"{name} (golden)", f"{name} (now)"))
    if failed:
        print(f"{failed} output(s) differ from tests/golden (rerun with --update only when the "
              "change is meant to alter what the editor shows)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
