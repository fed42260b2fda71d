#!/usr/bin/env python3
"""clangd's background index for the same compile database, for bench/index/run.sh.

Starts `clangd --background-index` on DB_DIR, opens FILE (which starts the background index of
the whole database), waits for the index's $/progress to end, and prints the time it took,
clangd's own account of its index memory ($/memoryUsage: the "background_index" subtree) and the
process's RSS and CPU time. Usage: clangd_memory.py CLANGD DB_DIR FILE [TIMEOUT_S]
"""
import json
import os
import subprocess
import sys
import time


def send(p, msg):
    body = json.dumps(msg).encode()
    p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    p.stdin.flush()


def read(p):
    length = None
    while True:
        line = p.stdout.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(p.stdout.read(length))


def total(tree):
    return tree.get("_total", 0) if isinstance(tree, dict) else 0


def main():
    clangd, db_dir, path = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    timeout = float(sys.argv[4]) if len(sys.argv) > 4 else 3600
    p = subprocess.Popen([clangd, "--background-index", "--compile-commands-dir=" + db_dir,
                          "--log=error", "-j=1"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    t0 = time.monotonic()
    send(p, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"processId": os.getpid(), "rootUri": "file://" + db_dir,
                        "capabilities": {"window": {"workDoneProgress": True}}}})
    send(p, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    send(p, {"jsonrpc": "2.0", "method": "textDocument/didOpen",
             "params": {"textDocument": {"uri": "file://" + path, "languageId": "cpp",
                                         "version": 1, "text": text}}})
    index_token = None
    done = None
    last_boost = 0.0
    while time.monotonic() - t0 < timeout:
        # clangd 14 runs its background index in the idle scheduling class and has no flag to
        # change it; on a loaded machine it would never run. Put its threads back in the normal
        # class (as index_bench's own passes run), once a second.
        if time.monotonic() - last_boost > 1:
            last_boost = time.monotonic()
            for tid in os.listdir("/proc/%d/task" % p.pid):
                try:
                    os.sched_setscheduler(int(tid), os.SCHED_OTHER, os.sched_param(0))
                except OSError:
                    pass
        m = read(p)
        if m is None:
            break
        if m.get("method") == "window/workDoneProgress/create":
            send(p, {"jsonrpc": "2.0", "id": m["id"], "result": None})
        elif m.get("method") == "$/progress":
            v = m["params"]["value"]
            if v.get("kind") == "begin" and "index" in v.get("title", "").lower():
                index_token = m["params"]["token"]
            elif v.get("kind") == "end" and m["params"]["token"] == index_token:
                done = time.monotonic() - t0
                break
    send(p, {"jsonrpc": "2.0", "id": 2, "method": "$/memoryUsage", "params": None})
    usage = None
    while True:
        m = read(p)
        if m is None or m.get("id") == 2:
            usage = m.get("result") if m else None
            break
    with open("/proc/%d/stat" % p.pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu_s = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    rss = 0
    with open("/proc/%d/status" % p.pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    bg = total(usage.get("clangd_server", {}).get("background_index", {})) if usage else 0
    if not bg and usage:  # older layouts: search the tree
        stack = [usage]
        while stack:
            t = stack.pop()
            for k, v in t.items():
                if k == "background_index":
                    bg = total(v)
                elif isinstance(v, dict):
                    stack.append(v)
    print("clangd background index: %s s wall, %.1f s CPU (whole process), index memory %.2f MB "
          "($/memoryUsage background_index), process RSS %.1f MB, whole process by "
          "$/memoryUsage %.1f MB"
          % ("%.1f" % done if done else "not finished", cpu_s, bg / 1e6, rss / 1e3,
             total(usage) / 1e6 if usage else 0))
    send(p, {"jsonrpc": "2.0", "id": 3, "method": "shutdown", "params": None})
    send(p, {"jsonrpc": "2.0", "method": "exit", "params": None})
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()


if __name__ == "__main__":
    main()
