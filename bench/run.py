#!/usr/bin/env python3
"""bench/run.py: run tvmnode's benchmarks beside the peers, in one run.

Peers are installed from PyPI into the build tree (pinned versions, so a
table can be reproduced) and their programs compiled here. The programs are
run in interleaved rounds (ours, peer, ours, peer, ...) so that the machine's
slow and fast moments fall on both sides; each program reports per-benchmark
medians of 9 samples, and this script reports the median over rounds. It
prints a table and writes JSON with every sample.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# Pinned peers: the current release, and the one the targets were set on.
TVM_FFI_VERSIONS = ["0.1.15.post2", "0.1.0"]

# Targets from the issues: (our row, the program and row it is compared
# with, the ratio ours / theirs must not exceed). "tvm-ffi" means the first
# (current) pinned tvm-ffi version; "tvmnode" means a baseline row of our
# own program (raw libffi, a direct call).
TARGETS = {
    "core": [
        ("string_alloc_free_36B", "tvm-ffi", "string_alloc_free_36B", 1.0),
        ("list_append_int", "tvm-ffi", "list_append_int", 0.2),
        ("map_insert_int", "tvm-ffi", "map_insert_int", 0.2),
        ("map_lookup_int", "tvm-ffi", "map_lookup_int", 0.8),
    ],
    "node": [
        # "At least tvm-ffi's throughput": time per node no more than theirs.
        (f"{op}_{g}", "tvm-ffi", f"{op}_{g}", 1.0)
        for g in ("tree_1m", "dag_1m")
        for op in ("shash", "sequal", "json_save", "json_load")
    ],
    "func": [
        ("packed_call_add", "tvm-ffi", "packed_call_add", 0.7),
        ("global_lookup", "tvm-ffi", "global_lookup", 0.25),
        ("bridge_libffi_add", "tvmnode", "raw_ffi_call_add", 1.3),
        ("bridge_fast_add", "tvmnode", "direct_call_add", 2.0),
        ("closure_call_add", "tvmnode", "raw_ffi_closure_add", 1.5),
    ],
}

# Each suite: our program (in the build tree), and the peer source file.
SUITES = {
    "core": ("bench/bench_core", "bench/peers/tvmffi_core.cc"),
    "func": ("bench/bench_func", "bench/peers/tvmffi_func.cc"),
    "node": ("bench/bench_node", "bench/peers/tvmffi_node.cc"),
}

# The node suite builds million-node graphs: three rounds are enough.
DEFAULT_ROUNDS = {"node": 3}


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def install_tvm_ffi(version, root):
    """pip-install one tvm-ffi wheel into its own directory; return its path."""
    target = os.path.join(root, "tvm-ffi-" + version)
    if not os.path.isdir(os.path.join(target, "tvm_ffi", "include")):
        print(f"installing apache-tvm-ffi=={version} into {target}", file=sys.stderr)
        sh([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
            "--disable-pip-version-check", "--target", target,
            f"apache-tvm-ffi=={version}"])
    return os.path.join(target, "tvm_ffi")


def build_peer(source, version, root):
    pkg = install_tvm_ffi(version, root)
    inc, lib = os.path.join(pkg, "include"), os.path.join(pkg, "lib")
    exe = os.path.join(root, f"{os.path.basename(source)[:-3]}-{version}")
    src = os.path.join(os.path.dirname(HERE), source)
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        sh(["g++", "-O2", "-std=c++17", "-I", inc, src, "-o", exe, "-L", lib,
            "-ltvm_ffi", "-Wl,-rpath," + lib, "-pthread"])
    return exe


def run_program(cmd, env=None):
    """Timings (ns/op) and derived figures (MB/s, bytes) a program prints."""
    out = subprocess.run(cmd, check=True, text=True, capture_output=True,
                         env=env).stdout
    rows = {}
    for d in map(json.loads, out.splitlines()):
        rows[(d["group"], d["name"])] = d.get("ns_per_op", d.get("value"))
    return rows


def machine():
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    gcc = sh(["gcc", "--version"]).stdout.splitlines()[0]
    return {"cpu": model, "cores": os.cpu_count(), "system": platform.platform(),
            "compiler": gcc, "python": platform.python_version()}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", default="build-bench", help="configured build tree")
    ap.add_argument("--out", default="build-bench/bench", help="output directory")
    ap.add_argument("--rounds", type=int, default=None,
                    help="interleaved rounds (default 5; 3 for node)")
    ap.add_argument("--suite", action="append", help="only these suites")
    ap.add_argument("--no-peers", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    peers_root = os.path.join(args.out, "peers")
    os.makedirs(peers_root, exist_ok=True)
    libtool = os.path.join(args.build, "libtool")

    results = {}
    for suite, (ours, peer_src) in SUITES.items():
        if args.suite and suite not in args.suite:
            continue
        programs = {"tvmnode": [libtool, "--mode=execute", os.path.join(args.build, ours)]}
        if not args.no_peers:
            for v in TVM_FFI_VERSIONS:
                try:
                    programs[f"tvm-ffi {v}"] = [build_peer(peer_src, v, peers_root)]
                except subprocess.CalledProcessError as e:
                    print(f"peer tvm-ffi {v} unavailable: {e.stderr.strip()[:300]}",
                          file=sys.stderr)
        samples = {name: {} for name in programs}
        rounds = args.rounds or DEFAULT_ROUNDS.get(suite, 5)
        for r in range(rounds):
            for name, cmd in programs.items():
                for key, value in run_program(cmd).items():
                    samples[name].setdefault(key, []).append(value)
            print(f"[{suite}] round {r + 1}/{rounds} done", file=sys.stderr)
        results[suite] = samples

    # Tables.
    report = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine(),
              "rounds": args.rounds, "peers": TVM_FFI_VERSIONS, "suites": {}}
    for suite, samples in results.items():
        names = list(samples)
        keys = []
        for n in names:
            keys += [k for k in samples[n] if k not in keys]
        med = {n: {k[1]: statistics.median(v) for k, v in samples[n].items()}
               for n in names}
        head = f"{'benchmark (ns/op; MB/s, bytes)':30s}" + "".join(
            f"{n:>22s}" for n in names)
        print(f"\n== {suite}\n{head}\n" + "-" * len(head))
        rows = {}
        for key in keys:
            name = key[1]
            print(f"{name:30s}" + "".join(
                f"{med[n][name]:22.2f}" if name in med[n] else f"{'-':>22s}"
                for n in names))
            rows[name] = {"median_ns": {n: med[n].get(name) for n in names},
                          "samples": {n: samples[n].get(key) for n in names}}
        checks = []
        for ours, other, theirs, target in TARGETS.get(suite, []):
            prog = names[1] if other == "tvm-ffi" and len(names) > 1 else "tvmnode"
            if other == "tvm-ffi" and len(names) < 2:
                continue
            a, b = med["tvmnode"].get(ours), med[prog].get(theirs)
            if a is None or b is None:
                continue
            ratio = a / b
            checks.append({"ours": ours, "against": f"{prog} {theirs}",
                           "ratio": ratio, "target": target, "met": ratio <= target})
            # The same comparison against every other tvm-ffi version, for
            # the record.
        if checks:
            print(f"\n{'target':52s}{'ratio':>8s}{'limit':>8s}")
            for c in checks:
                label = f"{c['ours']} / {c['against']}"
                print(f"{label:52s}{c['ratio']:7.2f}x{c['target']:7.2f}x  "
                      f"{'met' if c['met'] else 'MISSED'}")
        report["suites"][suite] = {"rows": rows, "targets": checks}
    path = os.path.join(args.out, "results.json")
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
