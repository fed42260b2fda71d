"""One cell of the paper's design (seed 000): perfhat-plan variants, then simulate the manifest
over a recorded full-trace corpus. Shared by paper_design.py and paper_stats.py."""
import json
import os
import subprocess


def simulate(plan, tmp, corpus, strategy, h, n, seed):
    """(coverage, top-5 % hot spots, overhead) in % for one manifest. tmp holds units.txt (and
    groups.json for grb)."""
    args = [plan, "variants", "--units", f"{tmp}/units.txt", "--h-bound", str(h), "--variants",
            str(n), "--replicas", "36", "--strategy", strategy, "--seed", str(seed)]
    if strategy == "grb":
        args += ["--groups", f"{tmp}/groups.json"]
    m = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    path = os.path.join(tmp, "m.json")
    open(path, "w").write(m)
    s = subprocess.run([plan, "simulate", "--manifest", path, "--trace", corpus, "--seed",
                        str(seed)], check=True, capture_output=True, text=True).stdout
    v = json.loads(s)["techniques"][0]
    return v["coverage"], v["top_hotspots"], v["overhead"]
