#!/usr/bin/env bash
# go/run_bench.sh BUILD_DIR OUT_DIR: the Go binding's benchmarks against the
# library in BUILD_DIR (configure it with CFLAGS="-O2 -g" for meaningful
# figures). Two groups:
#   - calls: one call of an add of two ints each; the C -> C row is a C loop
#     in the same process, and the cgo floors are the same add through
#     plain cgo without tvmnode;
#   - Modules: one inference of the smallest bundled model (ad01, the int8
#     anomaly-detection autoencoder, compiled ahead of time by the Python
#     tooling; skipped without it) through Module.Run, beside the model's
#     own run function called through its descriptor with one plain cgo
#     call (internal/modelfloor).
# The test binary is built once and run ROUNDS times (default 7), each
# round running every benchmark once, so that the machine's slow spells
# fall on all rows alike; the tables give medians, ratios and allocations
# (Markdown, ready for BENCHMARKS.md), and OUT_DIR/go_calls.json every
# sample.
set -euo pipefail
. "$(dirname "$0")/tools.sh"
mkdir -p "$2"
out="$(cd "$2" && pwd)"
rounds="${ROUNDS:-7}"
go test -c -o "$out/tvmnode.test" ./tvmnode/
: >"$out/go_bench.txt"
for r in $(seq "$rounds"); do
  echo "== round $r of $rounds" >&2
  "$out/tvmnode.test" -test.run '^$' -test.bench . -test.benchmem -test.benchtime "${BENCHTIME:-1s}" |
    tee -a "$out/go_bench.txt" | grep '^Benchmark' >&2
done
python3 - "$out/go_bench.txt" "$out/go_calls.json" "$rounds" <<'PYEOF'
import json, re, statistics, sys
samples, allocs = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r"Benchmark(\w+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op(?:\s+[\d.]+ B/op\s+(\d+) allocs/op)?", line)
    if m:
        samples.setdefault(m.group(1), []).append(float(m.group(3)))
        if m.group(4) is not None:
            allocs[m.group(1)] = max(allocs.get(m.group(1), 0), int(m.group(4)))
med = {k: statistics.median(v) for k, v in samples.items()}
print("\n%s rounds, medians\n" % sys.argv[3])
print("| benchmark | ns per call | allocs/op |\n|---|---:|---:|")
rows = [
    ("CToC", "C loop → C add (`tn_func_call`)"),
    ("GoToC", "Go → C add, `Function.CallInt64`"),
    ("GoToCAny", "Go → C add, `Function.Call` (interface values)"),
    ("CToGo", "C loop → Go `func(int64, int64) int64`"),
    ("CgoFloorGoToC", "plain cgo: Go → C add (floor)"),
    ("CgoFloorCToGo", "plain cgo: C loop → exported Go add (floor)"),
    ("ModuleRun", "`Module.Run`, ad01 (int8)"),
    ("ModuleInference", "`SetInput` + `Run` + `CopyOutput`, ad01"),
    ("CgoFloorModelRun", "plain cgo: ad01's run through its descriptor (floor)"),
]
for k, label in rows:
    if k in med:
        print("| %s | %.1f | %s |" % (label, med[k], allocs.get(k, "")))
ratios = {}
print("\n| ratio | value |\n|---|---:|")
for a, b, label in [("GoToC", "CToC", "Go → C / C → C"),
                    ("CToGo", "CToC", "C → Go / C → C"),
                    ("GoToC", "CgoFloorGoToC", "Go → C / plain cgo call (target ≤ 1.3×)"),
                    ("CToGo", "CgoFloorCToGo", "C → Go / plain cgo callback"),
                    ("ModuleRun", "CgoFloorModelRun", "Module.Run / plain cgo run of the model")]:
    if a in med and b in med:
        ratios[label] = med[a] / med[b]
        print("| %s | %.2f× |" % (label, ratios[label]))
if all(k in med for k in ("ModuleRun", "CgoFloorModelRun", "CgoFloorGoToC")):
    budget = 1.2 * med["CgoFloorModelRun"] + med["CgoFloorGoToC"]
    print("\nModule.Run: %.0f ns, plain cgo run %.0f ns: %+.0f ns per run; target "
          "≤ 1.2 × plain run + one cgo call = %.0f ns: %s" % (
              med["ModuleRun"], med["CgoFloorModelRun"],
              med["ModuleRun"] - med["CgoFloorModelRun"], budget,
              "met" if med["ModuleRun"] <= budget else "NOT met"))
json.dump({"median_ns": med, "samples": samples, "allocs_per_op": allocs, "ratios": ratios},
          open(sys.argv[2], "w"), indent=1)
print("\nwrote", sys.argv[2])
PYEOF
