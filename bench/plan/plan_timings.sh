#!/usr/bin/env bash
# perfhat-plan solve times on generated instances (not a CI test: figures for bench/README.md).
# usage: bench/plan/plan_timings.sh [BUILD_DIR]   (needs perfhat-plan built, python3, GNU time)
# Baseline: `perfhat-plan --version` (process start) measured in the same run.
set -euo pipefail
BUILD=${1:-build}
PLAN="$BUILD/plan/perfhat-plan"
[ -x "$PLAN" ] || { echo "build perfhat-plan first: $PLAN" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/perfhat-plan-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

python3 - "$TMP" <<'PY'
import json, random, sys
d = sys.argv[1]
def classes(n, seed, max_ratio):
    r = random.Random(seed)
    return [{"name": "c%d" % i, "frequency_hz": r.uniform(1, 1000),
             "duty_ratio": r.random() * max_ratio, "weight": r.uniform(0, 5)} for i in range(n)]
json.dump(classes(20, 2, 0.05), open(d + "/c20.json", "w"))
json.dump(classes(10000, 1, 0.00002), open(d + "/c10k.json", "w"))
with open(d + "/units100k.txt", "w") as f:
    for i in range(100000):
        f.write("ns::Class%d::method(const std::string &, int) const\n" % i)
with open(d + "/trace.tsv", "w") as f:
    r = random.Random(3)
    for site in range(36):
        for _ in range(30000):
            f.write("%d\tns::Class%d::method(const std::string &, int) const\n"
                    % (site, int(100000 * r.random() ** 3)))
PY

echo "perfhat-plan timings (load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores)"
run() {  # label, args...
  local label=$1; shift
  /usr/bin/time -f "%e s wall, %M KB max RSS" -o "$TMP/time" "$PLAN" "$@" >"$TMP/out"
  printf '%-58s %s\n' "$label" "$(cat "$TMP/time")"
}
run "baseline: --version" --version
run "budget, 20 classes, exact (2^20 subsets)" budget --classes "$TMP/c20.json" --max-f 5000 --probing
run "budget, 10,000 classes, base case + 5 pinned alternatives" budget --classes "$TMP/c10k.json" --max-f 1000000
run "budget, 10,000 classes, 1/2-approximation" budget --classes "$TMP/c10k.json" --max-f 1000000 --probing
run "budget, 10,000 classes, 1/2-approximation + local search" budget --classes "$TMP/c10k.json" --max-f 1000000 --probing --local-search
run "variants, 100,000 units, h 1000, 36 variants, grb" variants --units "$TMP/units100k.txt" --h-bound 1000 --variants 36 --seed 1
run "variants, 100,000 units, h 1000, 36 variants, p" variants --units "$TMP/units100k.txt" --h-bound 1000 --variants 36 --seed 1 --strategy p
"$PLAN" variants --units "$TMP/units100k.txt" --h-bound 1000 --variants 36 --seed 1 --strategy rb >"$TMP/manifest.json"
run "simulate, 1.08 M records, 36 sites, through that manifest" simulate --manifest "$TMP/manifest.json" --trace "$TMP/trace.tsv" --seed 1
python3 - "$TMP/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("simulate scores (rb, h 1000 of 100,000 units, 36 variants; %d records, %d units executed, K %d):"
      % (d["records"], d["units_executed"], d["hot_k"]))
for t in d["techniques"]:
    print("  %-17s coverage %5.1f %%  top-hot %5.1f %%  (normalised %5.1f %%)  overhead %5.2f %%"
          % (t["name"], t["coverage"], t["top_hotspots"], t["top_hotspots_normalised"], t["overhead"]))
PY
