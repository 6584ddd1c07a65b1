#!/usr/bin/env python3
"""bench/run.py: run tvmnode's benchmarks beside the peers, in one run.

Peers are installed from PyPI into the build tree (pinned versions, so a
table can be reproduced): a C++ peer program is compiled here against each
pinned tvm-ffi, a Python one (a .py file) is run by this interpreter with
PYTHONPATH at its packages, pip-installed with --target. The programs are
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
    # Not from an issue: where we stand against TVM's own Relax passes on
    # the same graph, for the record (ns per node of our count on both).
    "ir": [
        (f"{op}_synth_10k", "apache-tvm", f"{op}_synth_10k", 1.0)
        for op in ("build", "fold_constant", "fuse_ops")
    ],
}

# Each suite: our program (in the build tree), and the peer source file.
SUITES = {
    "core": ("bench/bench_core", "bench/peers/tvmffi_core.cc"),
    "func": ("bench/bench_func", "bench/peers/tvmffi_func.cc"),
    "node": ("bench/bench_node", "bench/peers/tvmffi_node.cc"),
    "ir": ("bench/bench_ir", "bench/peers/tvm_relax_ir.py"),
    # The MLPerf Tiny models (the peer has ported only "ad").
    "models": ("bench/bench_ir", "bench/peers/tvm_relax_ir.py"),
    # The host executor on the models, and the kernels on their layers;
    # numpy runs the dense-chain model (the embedded peers come later).
    "exec": ("bench/bench_exec", "bench/peers/numpy_exec.py"),
}

# Arguments both programs of a suite are run with.
SUITE_ARGS = {"ir": ["synthetic"], "models": ["models"]}

# Python peers: the package (its rows go by its name and version), the
# module that must then import with that __version__, and the pip pins to
# install (the package, and any dependency whose version matters).
# apache-tvm 0.27.0.post1 accepts any apache-tvm-ffi >= 0.1.14.post0, but
# under 0.1.15 its JSON writer (so printing with metadata) crashes.
PY_PEERS = {
    "ir": ("apache-tvm", "0.27.0.post1", "tvm",
           ["apache-tvm==0.27.0.post1", "apache-tvm-ffi==0.1.14.post1"]),
}
PY_PEERS["models"] = PY_PEERS["ir"]
PY_PEERS["exec"] = ("numpy", "2.4.6", "numpy", ["numpy==2.4.6"])

# The node suite builds million-node graphs: three rounds are enough, and
# only the current tvm-ffi (whose JSON takes minutes at a million nodes).
DEFAULT_ROUNDS = {"node": 3, "ir": 3, "models": 3, "exec": 3}
PEER_VERSIONS = {"node": TVM_FFI_VERSIONS[:1]}


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


def install_py_peer(name, version, module, pins, root):
    """pip-install a Python peer and its dependencies into their own
    directory; return the environment to run its program in."""
    target = os.path.join(root, f"{name}-{version}")
    stamp = os.path.join(target, ".pins")  # what the directory holds
    have = open(stamp).read().split() if os.path.exists(stamp) else None
    if have != pins:
        print(f"installing {' '.join(pins)} into {target}", file=sys.stderr)
        sh([sys.executable, "-m", "pip", "install", "-q",
            "--disable-pip-version-check", "--upgrade", "--target", target]
           + pins)
        with open(stamp, "w") as f:
            f.write("\n".join(pins) + "\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [target] + [p for p in [env.get("PYTHONPATH")] if p])
    got = sh([sys.executable, "-c", f"import {module}; print({module}.__version__)"],
             env=env).stdout.strip()
    if got != version:
        raise subprocess.CalledProcessError(1, module, stderr=f"{module} is {got}")
    return env


def peer_programs(suite, source, root):
    """{label: (command, environment)} of a suite's peers."""
    src = os.path.join(os.path.dirname(HERE), source)
    args = SUITE_ARGS.get(suite, [])
    if source.endswith(".py"):
        name, version, module, pins = PY_PEERS[suite]
        try:
            env = install_py_peer(name, version, module, pins, root)
        except subprocess.CalledProcessError as e:
            print(f"peer {name} {version} unavailable: "
                  f"{(e.stderr or '').strip()[-300:]}", file=sys.stderr)
            return {}
        return {f"{name} {version}": ([sys.executable, src] + args, env)}
    programs = {}
    for v in PEER_VERSIONS.get(suite, TVM_FFI_VERSIONS):
        try:
            programs[f"tvm-ffi {v}"] = ([build_peer(source, v, root)] + args, None)
        except subprocess.CalledProcessError as e:
            print(f"peer tvm-ffi {v} unavailable: {e.stderr.strip()[:300]}",
                  file=sys.stderr)
    return programs


def run_program(cmd, env=None, strict=True):
    """Timings (ns/op) and derived figures (MB/s, bytes) a program prints.
    Its stderr (notes, skipped rows) goes to ours. A peer (not strict) that
    fails keeps the rows it printed."""
    p = subprocess.run(cmd, text=True, stdout=subprocess.PIPE, env=env)
    if p.returncode != 0:
        if strict:
            raise subprocess.CalledProcessError(p.returncode, cmd, p.stdout)
        print(f"{cmd[-1]}: exit status {p.returncode}; keeping the rows it "
              f"printed", file=sys.stderr)
    rows = {}
    for d in map(json.loads, p.stdout.splitlines()):
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
                    help="interleaved rounds (default 5; 3 for node, ir and models)")
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
        programs = {"tvmnode": ([libtool, "--mode=execute", os.path.join(args.build, ours)]
                                + SUITE_ARGS.get(suite, []), None)}
        if not args.no_peers:
            programs.update(peer_programs(suite, peer_src, peers_root))
        samples = {name: {} for name in programs}
        rounds = args.rounds or DEFAULT_ROUNDS.get(suite, 5)
        for r in range(rounds):
            for name, (cmd, env) in programs.items():
                for key, value in run_program(cmd, env, name == "tvmnode").items():
                    samples[name].setdefault(key, []).append(value)
            print(f"[{suite}] round {r + 1}/{rounds} done", file=sys.stderr)
        results[suite] = samples

    # Tables.
    report = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine(),
              "rounds": args.rounds, "peers": TVM_FFI_VERSIONS,
              "python_peers": {s: PY_PEERS[s][3] for s in results if s in PY_PEERS},
              "suites": {}}
    for suite, samples in results.items():
        names = list(samples)
        keys = []
        for n in names:
            keys += [k for k in samples[n] if k not in keys]
        med = {n: {k[1]: statistics.median(v) for k, v in samples[n].items()}
               for n in names}
        w = max([30] + [len(k[1]) + 1 for k in keys])
        cw = max([22] + [len(n) + 2 for n in names])
        head = f"{'benchmark (ns/op; MB/s, bytes)':{w}s}" + "".join(
            f"{n:>{cw}s}" for n in names)
        print(f"\n== {suite}\n{head}\n" + "-" * len(head))
        rows = {}
        for key in keys:
            name = key[1]
            print(f"{name:{w}s}" + "".join(
                f"{med[n][name]:{cw}.2f}" if name in med[n] else f"{'-':>{cw}s}"
                for n in names))
            rows[name] = {"median_ns": {n: med[n].get(name) for n in names},
                          "samples": {n: samples[n].get(key) for n in names}}
        checks = []
        for ours, other, theirs, target in TARGETS.get(suite, []):
            # "tvmnode", or the first program of the peer named `other`
            prog = next((n for n in names if n == other or
                         n.startswith(other + " ")), None)
            if prog is None:
                continue
            a, b = med["tvmnode"].get(ours), med[prog].get(theirs)
            if a is None or b is None:
                continue
            ratio = a / b
            checks.append({"ours": ours, "against": f"{prog} {theirs}",
                           "ratio": ratio, "target": target, "met": ratio <= target})
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
