"""The main job: a trained model from file to a C program that runs it.

    python examples/deploy.py [--model kws_ref_model.tflite] [--out DIR]

1. import the MLPerf Tiny keyword-spotting model (int8 TFLite);
2. run the pipeline: InferType, SimplifyExpr, a Python pass (LayerAudit:
   checks that every convolution and dense layer is int8 with per-channel
   weights and records the MACs of each layer), FoldConstant, FuseOps,
   under the timing instrument;
3. compile to C in the Model Library Format (OUT/kws/) with the static
   memory planner, and draw the plan (OUT/kws_plan.svg);
4. build the generated C with the system compiler beside a small host
   program (examples/deploy/main.c: static buffers, one call per
   inference, nothing allocated);
5. run it on the bundled sample inputs (examples/deploy/samples/*.npy) and
   print its outputs beside LiteRT's (and whether they equal TFLite Micro's,
   the int8 reference), then the RAM (pools, inputs and outputs, the
   stack the run used) and the flash (code, constants, runtime) it needs;
6. when the Arm toolchain and qemu are installed, compile the model again
   for a Cortex-M target (OUT/kws_m4/: the same program with the weights
   of its regular convolutions in the order the Cortex-M DSP kernels read,
   codegen.compile(target="cortex-m")), build it into Cortex-M4 firmware
   (firmware/common/, firmware/m4/), run it on the emulated mps2-an386 on
   the first sample and print its outputs (equal to the host's), RAM,
   flash and instructions per inference beside the host run,
   and an estimate of its Cortex-M4 cycles with the five costliest
   operators (firmware/common/run.py --cycles).
"""
from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional

import numpy as np

import tvmnode
from tvmnode import codegen, frontend, ir, transform
from tvmnode.instrument import PassTimingInstrument

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MODELS = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "models"))


LAYER_OPS = ("qnn.conv2d", "qnn.dense", "nn.conv2d", "nn.dense", "matmul")


def layer_macs(call: Any) -> int:
    """Multiply-accumulates of one convolution, dense or matmul call, as the
    executor counts them (`tvmnode info`): each output element takes one
    MAC per weight of its output channel. A conv2d weight holds kh, kw,
    cin / groups and cout in any order (TFLite's HWIO, ONNX's OIHW, OHWI,
    ...; depthwise is HWIO [kh, kw, 1, cout] with groups = cin), so the
    weights per output channel are its size over the length of its O axis.
    A dense weight is [units, in_features]."""
    name = str(call.op.name)
    out = [int(d) for d in call.checked_type.shape]
    if name == "matmul":
        x = [int(d) for d in call.args[0].checked_type.shape]
        return int(np.prod(out)) * (x[-2] if int(call.attrs.transpose_a) else x[-1])
    w = [int(d) for d in call.args[1].checked_type.shape]
    if name.endswith("dense"):
        return int(np.prod(out)) * w[-1]
    layout = str(call.attrs.kernel_layout or "") or "OIHW"
    if sorted(layout) != sorted("OIHW") or len(w) != 4:
        raise ValueError("LayerAudit: %s has kernel_layout %r and a weight of shape %s"
                         % (name, layout, w))
    return int(np.prod(out)) * int(np.prod(w)) // max(w[layout.index("O")], 1)


@transform.module_pass(opt_level=0, name="LayerAudit")
class LayerAudit:
    """A Python pass: records each convolution, dense and matmul layer's
    MACs and element type in the module attribute "layers" (a list of {op,
    macs, dtype}); a layer whose data and weights differ in type is an
    error."""

    def transform_module(self, mod: ir.IRModule, ctx: Any) -> ir.IRModule:
        layers: List[Dict[str, Any]] = []

        def visit(e: Any) -> None:
            if not (isinstance(e, ir.Call) and isinstance(e.op, ir.Op)):
                return
            name = str(e.op.name)
            if name not in LAYER_OPS:
                return
            data, weight = e.args[0].checked_type, e.args[1].checked_type
            if str(data.dtype) != str(weight.dtype):
                raise ValueError("LayerAudit: %s has %s data and %s weights"
                                 % (name, data.dtype, weight.dtype))
            layers.append({"op": name, "macs": layer_macs(e), "dtype": str(data.dtype)})

        ir.post_order_visit(mod["main"].body, visit)
        return mod.with_attr("layers", layers)


def sizes(objs: List[str]) -> Dict[str, int]:
    """text, rodata (constants), data and bss bytes of object files (size -A)."""
    out = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    for o in objs:
        lines = subprocess.run(["size", "-A", o], capture_output=True, text=True,
                               check=True).stdout.splitlines()
        for line in lines:
            parts = line.split()
            if len(parts) < 2 or not parts[1].isdigit():
                continue
            sec, n = parts[0], int(parts[1])
            if sec.startswith(".data.rel.ro"):  # pointers in constants: flash
                sec = ".rodata"
            for key in out:
                if sec == "." + key or sec.startswith("." + key + "."):
                    out[key] += n
    return out


def build(arch: codegen.Archive, d: str, cc: str) -> Dict[str, Any]:
    """Compile the archive's C to objects (for sizes) and link the host
    program. Returns the executable and the section sizes."""
    info = arch.info
    inp, outp = info["inputs"][0], info["outputs"][0]
    name = arch.name
    inc = ["-I" + os.path.join(d, "codegen", "host", "include"),
           "-I" + os.path.join(d, "runtime", "include")]
    objs: Dict[str, List[str]] = {"generated": [], "runtime": []}
    flags = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-ffunction-sections",
             "-fdata-sections"]
    for kind, root in (("generated", os.path.join(d, "codegen", "host", "src")),
                       ("runtime", os.path.join(d, "runtime", "src"))):
        for src in sorted(glob.glob(os.path.join(root, "*.c"))):
            obj = os.path.join(d, "obj", os.path.basename(src)[:-2] + ".o")
            os.makedirs(os.path.dirname(obj), exist_ok=True)
            subprocess.run([cc, *flags, *inc, "-c", src, "-o", obj], check=True)
            objs[kind].append(obj)
    pool = info["memory"]["functions"]["main"][0]["workspace_size_bytes"]
    exe = os.path.join(d, name)
    defs = ['-DMODEL_HEADER="tvmgen_%s.h"' % name, "-DNAME=%s" % name,
            "-DINPUT_SIZE=%d" % inp["size_bytes"], "-DOUTPUT_SIZE=%d" % outp["size_bytes"],
            "-DPOOL_SIZE=%d" % pool]
    subprocess.run([cc, "-O2", "-Wall", "-Wextra", *defs, *inc,
                    os.path.join(HERE, "deploy", "main.c"), *objs["generated"], *objs["runtime"],
                    "-Wl,--gc-sections", "-o", exe, "-lm"], check=True)
    return {"exe": exe, "generated": sizes(objs["generated"]), "runtime": sizes(objs["runtime"])}


def _one_line(e: BaseException) -> str:
    """An exception's message on one line (LiteRT's span several)."""
    return " ".join(str(e).split()) or type(e).__name__


def litert_outputs(model_path: str, xs: List[np.ndarray]) -> Optional[List[np.ndarray]]:
    """LiteRT's outputs (XNNPACK, one thread), or None when LiteRT is not
    installed, or refuses the model: LiteRT checks more than TFLite Micro
    and tvmnode do (operator versions its resolver has, the flatbuffer's
    verification), so a model both run, TFLite Micro's person_detect among
    them, can fail here. That is a line on stdout, not the end of the job."""
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        return None
    try:
        it = Interpreter(model_path=model_path, num_threads=1)
        it.allocate_tensors()
    except Exception as e:  # LiteRT raises ValueError/RuntimeError, and more
        print("LiteRT could not load this model: %s; skipping its column" % _one_line(e))
        return None
    i, o = it.get_input_details()[0]["index"], it.get_output_details()[0]["index"]
    outs = []
    try:
        for x in xs:
            it.set_tensor(i, x)
            it.invoke()
            outs.append(it.get_tensor(o).copy())
    except Exception as e:
        print("LiteRT could not run this model: %s; skipping its column" % _one_line(e))
        return None
    return outs


def tflm_outputs(model_path: str, xs: List[np.ndarray]) -> Optional[List[np.ndarray]]:
    """TFLite Micro's outputs, or None (with a line saying why when it
    refuses the model) when it is not installed."""
    try:
        from tflite_micro.python.tflite_micro import runtime as tflm
    except ImportError:
        return None
    try:
        interp = tflm.Interpreter.from_file(model_path)
        outs = []
        for x in xs:
            interp.set_input(x, 0)
            interp.invoke()
            outs.append(interp.get_output(0).copy())
    except Exception as e:
        print("TFLite Micro could not run this model: %s; skipping the comparison"
              % _one_line(e))
        return None
    return outs


def onnx_outputs(model_path: str, xs: List[np.ndarray]) -> Optional[List[np.ndarray]]:
    """The ONNX reference evaluator's outputs (onnx.reference), or None."""
    try:
        import onnx
        from onnx.reference import ReferenceEvaluator
    except ImportError:
        return None
    try:
        model = onnx.load(model_path)
        ev = ReferenceEvaluator(model)
        init = {t.name for t in model.graph.initializer}
        name = [i.name for i in model.graph.input if i.name not in init][0]
        outs: List[np.ndarray] = []
        for x in xs:
            got: Any = ev.run(None, {name: x})
            outs.append(np.asarray(got[0]))
        return outs
    except Exception as e:
        print("the ONNX reference could not run this model: %s; skipping its column"
              % _one_line(e))
        return None


def reference_outputs(model_path: str, xs: List[np.ndarray]) -> Dict[str, List[np.ndarray]]:
    """The peers' outputs on xs, by name, for those installed that take the
    model: LiteRT and TFLite Micro for .tflite files, the ONNX reference
    evaluator for .onnx ones."""
    refs: Dict[str, List[np.ndarray]] = {}
    if model_path.lower().endswith(".onnx"):
        got = onnx_outputs(model_path, xs)
        if got is not None:
            refs["ONNX reference"] = got
        return refs
    got = litert_outputs(model_path, xs)
    if got is not None:
        refs["LiteRT"] = got
    got = tflm_outputs(model_path, xs)
    if got is not None:
        refs["TFLite Micro"] = got
    return refs


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=os.path.join(
        os.environ.get("TVMNODE_MODELS", DEFAULT_MODELS), "kws_ref_model.tflite"))
    p.add_argument("--name", default="kws")
    p.add_argument("--out", default="deploy-out")
    p.add_argument("--samples", default=os.path.join(HERE, "deploy", "samples"))
    p.add_argument("--repeat", type=int, default=200)
    args = p.parse_args(argv)
    cc = os.environ.get("CC", "cc")
    os.makedirs(args.out, exist_ok=True)

    t0 = time.perf_counter()
    mod = frontend.load_model(args.model)
    imported = mod
    t_import = time.perf_counter() - t0
    print("model        %s (%d operator calls, imported in %.0f ms)"
          % (args.model, sum(1 for _ in _calls(mod)), 1e3 * t_import))

    timing = PassTimingInstrument()
    audit: Any = LayerAudit()  # (mypy sees the class, not the decorated pass)
    with transform.PassContext(opt_level=3, instruments=[timing]):
        mod = transform.Sequential([transform.InferType(), transform.SimplifyExpr(),
                                    audit, transform.FoldConstant(),
                                    transform.FuseOps(), transform.InferType()])(mod)
    assert mod.attrs is not None
    layers = mod.attrs["layers"]
    print("passes       InferType, SimplifyExpr, LayerAudit (Python), FoldConstant, FuseOps")
    kinds = sorted({str(x["dtype"]) for x in layers})
    print("LayerAudit   %d %s layers, %d MACs" % (len(layers), "/".join(kinds),
                                                 sum(int(x["macs"]) for x in layers)))
    print(timing.render().rstrip())

    t0 = time.perf_counter()
    arch = codegen.compile(mod, name=args.name, run_passes=False)
    d = os.path.join(args.out, args.name)
    shutil.rmtree(d, ignore_errors=True)
    arch.export(d)
    t_compile = time.perf_counter() - t0
    svg = os.path.join(args.out, "%s_plan.svg" % args.name)
    from tvmnode._plan_svg import render_svg

    with open(svg, "w", encoding="utf-8") as f:
        f.write(render_svg(arch.plan))
    print("compiled     %s/ (Model Library Format) in %.0f ms; plan drawn in %s"
          % (d, 1e3 * t_compile, svg))

    built = build(arch, d, cc)
    info = arch.info
    inp, outp = info["inputs"][0], info["outputs"][0]
    samples = sorted(glob.glob(os.path.join(args.samples, "*.npy")))
    xs = [np.load(s) for s in samples]
    if not xs or any(x.size != int(np.prod(inp["shape"])) for x in xs):
        # another model: three deterministic random inputs of its shape
        rng = np.random.default_rng(0)
        info_i = np.iinfo(inp["dtype"]) if inp["dtype"].startswith("int") else None
        samples = ["random%d" % k for k in range(3)]
        xs = [rng.integers(info_i.min, info_i.max + 1, inp["shape"]) if info_i
              else rng.standard_normal(inp["shape"]) for _ in samples]
    xs = [np.asarray(x).astype(inp["dtype"]).reshape(inp["shape"]) for x in xs]
    refs = reference_outputs(args.model, xs)
    side = next((k for k in ("LiteRT", "ONNX reference") if k in refs), None)
    print("\nsample          ours (generated C, %s)%s" % (
        os.path.basename(cc), "  |  %s" % side if side else ""))
    stack = 0
    ns: List[float] = []
    ys: List[np.ndarray] = []
    for k, (s, x) in enumerate(zip(samples, xs)):
        ib, ob = os.path.join(d, "in.bin"), os.path.join(d, "out.bin")
        x.tofile(ib)
        r = subprocess.run([built["exe"], ib, ob, str(args.repeat)], capture_output=True,
                           text=True)
        if r.returncode != 0:
            print("the generated program failed: %s%s" % (r.stdout, r.stderr), file=sys.stderr)
            return 1
        fields = r.stdout.split()
        stack = max(stack, int(fields[3]))
        ns.append(float(fields[5]))
        y = np.fromfile(ob, dtype=outp["dtype"]).reshape(outp["shape"])
        ys.append(y)
        line = "%-14s  %s" % (os.path.basename(s), np.array2string(y.reshape(-1)))
        if side:
            line += "  |  %s" % np.array2string(refs[side][k].reshape(-1))
        print(line)
        print("%-14s  class %d%s" % ("", int(np.argmax(y)),
                                     ("  |  class %d" % int(np.argmax(refs[side][k])))
                                     if side else ""))
    def largest(ref: List[np.ndarray]) -> float:
        return max(float(np.max(np.abs(y.astype(np.float64) - r.reshape(y.shape))))
                   for y, r in zip(ys, ref))

    if "TFLite Micro" in refs and outp["dtype"] == "int8":
        same = all(np.array_equal(y, r.reshape(y.shape)) for y, r in zip(ys, refs["TFLite Micro"]))
        print("outputs equal to TFLite Micro's (the int8 reference): %s"
              % ("yes, bit for bit" if same else "NO"))
    elif "TFLite Micro" in refs:
        print("largest difference from TFLite Micro: %.3g" % largest(refs["TFLite Micro"]))
    if side:
        print("largest difference from %s: %.3g%s" % (
            side, largest(refs[side]), " (int8 steps)" if outp["dtype"] == "int8" else ""))

    mem = info["memory"]
    ws = mem["functions"]["main"][0]["workspace_size_bytes"]
    io = inp["size_bytes"] + outp["size_bytes"]
    gen, rt = built["generated"], built["runtime"]
    print("\nRAM          %6d B workspace pool (lower bound %d B), %d B inputs + outputs,"
          % (ws, mem["workspace_lower_bound_bytes"], io))
    print("             %6d B stack used by one run (host, painted), %d B writable data"
          % (stack, gen["data"] + gen["bss"]))
    print("             %6d B in all" % (ws + io + stack + gen["data"] + gen["bss"]))
    print("flash        %6d B generated code, %d B constants, %d B runtime code "
          "(%d B runtime tables)" % (gen["text"], gen["rodata"], rt["text"], rt["rodata"]))
    print("latency      %.3f ms per inference (median of %d, -O2)"
          % (float(np.median(ns)) / 1e6, args.repeat))
    d_m4 = os.path.join(args.out, args.name + "_m4")
    shutil.rmtree(d_m4, ignore_errors=True)
    codegen.compile(imported, name=args.name, target="cortex-m").export(d_m4)
    m4 = run_on_m4(d_m4, args.name, xs[0], ys[0])
    if m4 is not None:
        host_ram = ws + io + stack
        print("\nCortex-M4 (qemu mps2-an386, -Os)            host (x86-64, -O2)")
        print("  outputs     %-32s %s" % ("equal to the host's" if m4["equal"] else "DIFFER",
                                          "(reference)"))
        print("  RAM         %-32s %d B" % ("%d B (bss %d + stack %d)" % (
            m4["bss"] + m4["stack"], m4["bss"], m4["stack"]), host_ram))
        print("  flash       %-32s %d B" % ("%d B (text %d + rodata %d)" % (
            m4["text"] + m4["rodata"], m4["text"], m4["rodata"]),
            gen["text"] + gen["rodata"] + rt["text"] + rt["rodata"]))
        print("  work        %-32s %.3f ms" % ("%d instructions" % m4["instructions"],
                                               float(np.median(ns)) / 1e6))
        print("  (instructions are counted by qemu, not cycles of a real core)")
        est = m4.get("cycles")
        if est:
            print("  estimated   %d Cortex-M4 cycles (%.1f ms at 120 MHz; the TRM's timings, "
                  "zero wait states: firmware/common/cycles.py)"
                  % (est["cycles"], est["cycles"] / 120e3))
            ops = sorted((r for r in est["operators"] if r["operator"].startswith("tvmgen_")),
                         key=lambda r: -r["cycles"])
            for r in ops[:5]:
                print("    %-40s %10d cycles %5.1f %%" % (
                    r["operator"].split("_", 2)[-1], r["cycles"],
                    100.0 * r["cycles"] / max(est["cycles"], 1)))
        elif m4.get("cycles_skipped"):
            print("  estimated   skipped: %s" % m4["cycles_skipped"])
        if not m4["equal"]:
            return 1
    print("deployed: %s ran %d samples from generated C" % (args.name, len(samples)))
    return 0


def run_on_m4(archive: str, name: str, x: np.ndarray, y: np.ndarray) -> Optional[Dict[str, Any]]:
    """The archive as Cortex-M4 firmware under qemu on input x: its report,
    or None (with a line saying why) when the toolchain is missing."""
    import importlib.util

    runner = os.path.join(HERE, "..", "..", "firmware", "common", "run.py")
    spec = importlib.util.spec_from_file_location("firmware_common_run", runner)
    if spec is None or spec.loader is None or not os.path.exists(runner):
        print("\nCortex-M4: firmware/common not found, skipped")
        return None
    m4run: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m4run)
    why = m4run.toolchain_missing()
    if why:
        print("\nCortex-M4: skipped, %s" % why)
        return None
    inp = os.path.join(archive, "m4_input.npy")
    np.save(inp, x)
    res = m4run.build_and_run(archive, name, [inp], os.path.join(archive, "..", "fw-" + name))
    if not res.get("ok"):
        print("\nCortex-M4: the firmware failed: %s" % res.get("fault", res.get("exit_code")))
        return {"equal": False, "bss": 0, "stack": 0, "text": 0, "rodata": 0,
                "instructions": 0}
    out = next(iter(res["outputs"].values()))
    size = res["size"]
    rep: Dict[str, Any] = {
        "equal": list(np.asarray(y).reshape(-1)) == list(out["values"]),
        "bss": int(size.get("bss", 0)) + int(size.get("data", 0)),
        "stack": int(res["run_stack_bytes"]), "text": int(size.get("text", 0)),
        "rodata": int(size.get("rodata", 0)), "instructions": int(res["instructions"])}
    # the cycle estimate and per-operator profile (run.py --cycles)
    try:
        rep["cycles"] = m4run.profile(res["elf"], os.path.join(archive, "..", "fw-" + name))
    except m4run.FirmwareError as e:
        rep["cycles_skipped"] = str(e).splitlines()[0]
    return rep


def _calls(mod: Any) -> List[Any]:
    out: List[Any] = []
    ir.post_order_visit(mod["main"].body,
                        lambda e: out.append(e) if isinstance(e, ir.Call) else None)
    return out


if __name__ == "__main__":
    sys.exit(main())
