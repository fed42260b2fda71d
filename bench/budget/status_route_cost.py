#!/usr/bin/env python3
"""CPU cost of libperfhat's collection-budget status in the handler (issue #22): a real
perfhat-handler (SQLite, loopback) takes N statuses of a large service (20 classes, 200 sampled
functions, 2000 function rows; as budget_publish.cc sends them every 5 s) over POST /v1/budget, then
answers N reads (GET /v1/budget?service=). Prints the handler's own CPU time (utime + stime from
/proc) per request and the body size. Usage: status_route_cost.py BUILD_DIR [N]"""
import http.client, json, os, socket, subprocess, sys, tempfile, time

build, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 300
tmp = tempfile.mkdtemp(prefix="perfhat-budget-bench-")
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
h = subprocess.Popen([f"{build}/feedback-handler/perfhat-handler", "--mode", "deployed",
                      "--allow-unauthenticated", "--store", f"{tmp}/h.sqlite",
                      "--listen", f"127.0.0.1:{port}"], stderr=subprocess.DEVNULL)
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", port)).close(); break
    except OSError:
        time.sleep(0.1)
classes = [{"name": f"shop::C{i}", "frequency_hz": 100.0 * i, "duty_ratio": 0.01 * i, "weight": 1,
            "pinned": False, "traced": i % 2 == 0, "fraction": 1 if i % 2 == 0 else 0.1,
            "overhead": 1e-4 * i} for i in range(20)]
sampled = [{"function": f"shop::C{i % 20}::f{i}(int) const", "samples": 1000 - i, "self": 10,
            "estimated_cpu_s": 0.01 * i, "estimated_self_cpu_s": 0.001 * i} for i in range(200)]
functions = [{"function": f"shop::C{i % 20}::f{i}", "class": f"shop::C{i % 20}"} for i in range(2000)]
body = json.dumps({"service": "shop", "version": "1", "instance": "h/1", "budget_share": 0.01,
                   "mode": "probing", "predicted_overhead": 0.008, "measured_overhead": 0.009,
                   "window_s": 10, "classes": classes, "sampled_functions": sampled,
                   "functions": functions}).encode()

def cpu():
    f = open(f"/proc/{h.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

c = http.client.HTTPConnection("127.0.0.1", port)
def run(method, path, payload=None):
    t0 = cpu()
    for _ in range(n):
        c.request(method, path, payload, {"Content-Type": "application/json"})
        r = c.getresponse(); r.read()
        assert r.status == 200, r.status
    return (cpu() - t0) / n * 1e3
post_ms = run("POST", "/v1/budget", body)
get_ms = run("GET", "/v1/budget?service=shop")
print(f"body {len(body)} bytes; handler CPU per POST {post_ms:.3f} ms, per GET {get_ms:.3f} ms "
      f"({n} each); load {os.getloadavg()[0]:.1f}")
h.terminate(); h.wait()
