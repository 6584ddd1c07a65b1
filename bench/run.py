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

# Targets as ratios tvmnode / peer (lower is better), from the issues.
TARGETS = {
    "core": {
        "string_alloc_free_36B": 1.0,
        "list_append_int": 0.2,
        "map_insert_int": 0.2,
        "map_lookup_int": 0.8,
    },
}

# Each suite: our program (in the build tree), and the peer source file.
SUITES = {
    "core": ("bench/bench_core", "bench/peers/tvmffi_core.cc"),
}


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
            "-ltvm_ffi", "-Wl,-rpath," + lib])
    return exe


def run_program(cmd, env=None):
    out = subprocess.run(cmd, check=True, text=True, capture_output=True,
                         env=env).stdout
    return {(d["group"], d["name"]): d for d in map(json.loads, out.splitlines())
            if d}


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
    ap.add_argument("--rounds", type=int, default=5)
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
        for r in range(args.rounds):
            for name, cmd in programs.items():
                for key, d in run_program(cmd).items():
                    samples[name].setdefault(key, []).append(d["ns_per_op"])
            print(f"[{suite}] round {r + 1}/{args.rounds} done", file=sys.stderr)
        results[suite] = samples

    # Table.
    report = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine(),
              "rounds": args.rounds, "peers": TVM_FFI_VERSIONS, "suites": {}}
    for suite, samples in results.items():
        names = list(samples)
        keys = list(samples["tvmnode"])
        head = f"{'benchmark (ns/op, median)':30s}" + "".join(
            f"{n:>22s}" for n in names) + "   ratio(s)        target"
        print(f"\n== {suite}\n{head}\n" + "-" * len(head))
        rows = {}
        for key in keys:
            med = {n: statistics.median(samples[n][key]) for n in names if key in samples[n]}
            ours = med["tvmnode"]
            ratios = {n: ours / med[n] for n in med if n != "tvmnode" and med[n] > 0}
            target = TARGETS.get(suite, {}).get(key[1])
            line = f"{key[1]:30s}" + "".join(
                f"{med[n]:22.2f}" if n in med else f"{'-':>22s}" for n in names)
            line += "   " + " ".join(f"{ratios[n]:5.2f}x" for n in ratios)
            if target is not None and ratios:
                first = next(iter(ratios.values()))
                line += f"   <= {target:.2f}x {'met' if first <= target else 'MISSED'}"
            print(line)
            rows[key[1]] = {"median_ns": med, "ratio": ratios, "target": target,
                            "samples": {n: samples[n].get(key) for n in names}}
        report["suites"][suite] = rows
    path = os.path.join(args.out, "results.json")
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
