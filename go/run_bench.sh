#!/usr/bin/env bash
# go/run_bench.sh BUILD_DIR OUT_DIR: the Go <-> C call benchmarks against
# the library in BUILD_DIR (configure it with CFLAGS="-O2 -g" for
# meaningful figures). Every benchmark is one call of an add of two ints;
# the C -> C row is a C loop in the same process, and the cgo floors are
# the same add through plain cgo without tvmnode. go test -bench runs each
# ROUNDS times (default 7) round robin; the table gives medians and
# ratios, and OUT_DIR/go_calls.json every sample.
set -euo pipefail
. "$(dirname "$0")/tools.sh"
mkdir -p "$2"
out="$(cd "$2" && pwd)"
rounds="${ROUNDS:-7}"
go test -run '^$' -bench . -count "$rounds" ./tvmnode/ | tee "$out/go_bench.txt"
python3 - "$out/go_bench.txt" "$out/go_calls.json" <<'PYEOF'
import json, re, statistics, sys
samples = {}
for line in open(sys.argv[1]):
    m = re.match(r"Benchmark(\w+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op", line)
    if m:
        samples.setdefault(m.group(1), []).append(float(m.group(3)))
med = {k: statistics.median(v) for k, v in samples.items()}
rows = [
    ("CToC", "C loop -> C add (tn_func_call)"),
    ("GoToC", "Go -> C add, Function.CallInt64"),
    ("GoToCAny", "Go -> C add, Function.Call (interface values)"),
    ("CToGo", "C loop -> Go func(int64, int64) int64"),
    ("CgoFloorGoToC", "plain cgo: Go -> C add (floor)"),
    ("CgoFloorCToGo", "plain cgo: C -> exported Go add (floor)"),
]
print("\n%-48s %10s" % ("benchmark (median ns/call)", "ns"))
for k, label in rows:
    if k in med:
        print("%-48s %10.1f" % (label, med[k]))
ratios = {}
for a, b, label in [("GoToC", "CToC", "Go -> C / C -> C"),
                    ("CToGo", "CToC", "C -> Go / C -> C"),
                    ("GoToC", "CgoFloorGoToC", "Go -> C / plain cgo call"),
                    ("CToGo", "CgoFloorCToGo", "C -> Go / plain cgo callback")]:
    if a in med and b in med:
        ratios[label] = med[a] / med[b]
        print("%-48s %9.2fx" % (label, ratios[label]))
json.dump({"median_ns": med, "samples": samples, "ratios": ratios},
          open(sys.argv[2], "w"), indent=1)
print("\nwrote", sys.argv[2])
PYEOF
