"""The compiled models on emulated Cortex-M boards, one per row of the
target table (firmware/targets.txt: the M4 on qemu's mps2-an386, the M33 on
mps2-an505, the M7 on mps2-an500, the M55 on mps3-an547), through
firmware/common: each archive is built into bare-metal
firmware with arm-none-eabi-gcc, run under qemu, and its outputs compared
with the host executor's. Also: the crt's int8 kernels against a reference
on each board, the SysTick counter's readings, and, on the M4, no allocator
in the link, the generated run's error codes on the device and the report's
instructions, stack and sizes.

Every int8 model and the float autoencoder (bit for bit) run once on
every target; the float KWS and ResNet-8, whose float kernels are the
same portable C on every core, run on the M4 and the M33 only, and the
checks of the harness itself (bad calls, wraps, input files) on the
default target only, to keep the suite's time down (SUBSET_TARGETS). Skipped when arm-none-eabi-gcc, its newlib or
qemu-system-arm is missing (Debian: gcc-arm-none-eabi libnewlib-arm-none-eabi
qemu-system-arm). Compiled objects are shared between the tests through a
cache folder keyed by their sources and flags, and each model is compiled
and run by the host executor once for the whole module.
"""
from __future__ import annotations

import base64
import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
import types
from typing import Any, Callable, Dict, Iterator, List, Tuple

import numpy as np
import pytest

from tvmnode import codegen, frontend, runtime

from exec_util import isa

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNNER = os.path.join(ROOT, "firmware", "common", "run.py")
KERNELS_CHECK = os.path.join(ROOT, "firmware", "common", "kernels_check.py")
MODELS = os.environ.get("TVMNODE_MODELS",
                        os.path.join(os.path.dirname(ROOT), "shared", "models"))


def _load_runner() -> Any:
    """firmware/common/run.py, a script outside any package."""
    mod = types.ModuleType("firmware_common_run")
    mod.__file__ = RUNNER
    importlib.machinery.SourceFileLoader(mod.__name__, RUNNER).exec_module(mod)
    return mod


fw = _load_runner()
_missing = fw.toolchain_missing()
if _missing is None and not os.path.exists(subprocess.run(
        ["arm-none-eabi-gcc"] + fw.ARCH_FLAGS + ["-print-file-name=libc.a"],
        capture_output=True, text=True).stdout.strip()):
    _missing = "newlib for arm-none-eabi is not installed (libnewlib-arm-none-eabi)"
if _missing:
    pytest.skip("Cortex-M firmware: " + _missing, allow_module_level=True)

TARGETS = list(fw.targets())
DEFAULT = fw.DEFAULT_TARGET
# The cores that run a representative subset: the int8 models (the DSP
# forms as their compiler schedules them), the float model that must be
# bit for bit, half the kernel check's cases. Each such target adds about
# 40 s of CPU time to the suite; all the bundled models were seen to
# match the host on them.
SUBSET_TARGETS = ("m7", "m55")

TN_CRT_POOL_MISALIGNED = 8
TN_CRT_NULL_POINTER = 9

# file, model name (the benchmark's short name)
INT8 = [("kws_ref_model.tflite", "kws"), ("ad01_int8.tflite", "ad"),
        ("str_ww_ref_model.tflite", "ww"), ("pretrainedResnet_quant.tflite", "ic")]


def _model(fname: str) -> str:
    path = os.path.join(MODELS, fname)
    if not os.path.exists(path):
        pytest.skip("no %s" % path)
    return path


@pytest.fixture(scope="module")
def objects(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield str(tmp_path_factory.mktemp("fw-objects"))


Prepared = Tuple[str, Dict[str, Any], List[str], List[np.ndarray]]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str, str],
                                                                               Prepared]]:
    """_prepare, once per model for the module: every target builds the
    same archive and compares with the same host outputs."""
    done: Dict[Tuple[str, str], Prepared] = {}

    def get(fname: str, name: str) -> Prepared:
        if (fname, name) not in done:
            done[(fname, name)] = _prepare(fname, name,
                                           str(tmp_path_factory.mktemp("model-" + name)))
        return done[(fname, name)]
    yield get


def _inputs(info: Dict[str, Any], workdir: str) -> Tuple[List[np.ndarray], List[str]]:
    """Seeded random inputs, and their .npy files."""
    rng = np.random.default_rng(7)
    arrays, paths = [], []
    for spec in info["inputs"]:
        dtype = np.dtype(spec["dtype"])
        if dtype.kind in "iu":
            lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
            x = rng.integers(lo, hi, spec["shape"], endpoint=True).astype(dtype)
        else:
            x = rng.standard_normal(spec["shape"]).astype(dtype)
        path = os.path.join(workdir, "%s.npy" % spec["name"])
        np.save(path, x)
        arrays.append(x)
        paths.append(path)
    return arrays, paths


def _prepare(fname: str, name: str, workdir: str) -> Tuple[str, Dict[str, Any], List[str],
                                                            List[np.ndarray]]:
    """Compile the model for a Cortex-M target and export it, write its
    inputs and compute the host executor's outputs on the model as compiled
    for the host (the weights in the importer's layouts, so that the device
    checks ConvertKernelLayout too), from the portable kernels for a float
    model (the x86 float forms fuse multiply-adds; the weights unpacked).
    Returns (archive dir, metadata, input
    files, host outputs as plain numpy copies); no tvmnode object outlives
    the call."""
    mod = frontend.load_model(_model(fname))
    arch = codegen.compile(mod, name=name, target="cortex-m")
    archive = arch.export(os.path.join(workdir, "mlf"))
    info = arch.info
    arrays, paths = _inputs(info, workdir)
    # a float model's reference: the host's portable kernels (exec_util.isa)
    # on the weights as imported: compiled for wasm32, since "host" packs
    # the float dense layers (N16K1), whose portable chains round unlike
    # the [N, K] ones (within 1e-6 of the range, not bit for bit)
    floats = any(np.dtype(o["dtype"]).kind == "f" for o in info["outputs"])
    with isa("portable" if floats else runtime.isa()):
        ref_arch = codegen.compile(mod, name=name, target="wasm32" if floats else "host")
        outs = runtime.Executor(ref_arch.module)(*arrays)
        del ref_arch
    outs = outs if isinstance(outs, tuple) else (outs,)
    ref = [np.array(o, copy=True) for o in outs]
    del arch, outs
    return archive, info, paths, ref


def _device_outputs(res: Dict[str, Any], info: Dict[str, Any]) -> List[np.ndarray]:
    out = []
    for spec in info["outputs"]:
        got = res["outputs"][spec["name"]]
        out.append(np.array(got["values"], dtype=spec["dtype"]).reshape(spec["shape"]))
    return out


def _check_report(res: Dict[str, Any], info: Dict[str, Any], target: str) -> None:
    """The numbers are there and plausible (not exact: they move with the
    compiler and the kernels)."""
    assert res["status"] == 0 and res["warmup_status"] == 0 and res["exit_code"] == 0
    macs = int(info["macs"])
    assert res["systick_ticks"] > 0
    assert res["instructions"] == fw.instructions(target, res["systick_ticks"])
    # at least an instruction a multiply-accumulate (sixteen where MVE's
    # VMLADAVA does sixteen: the M55 runs KWS in fewer instructions than
    # it has multiply-accumulates), and not absurdly more
    lanes = 16 if fw.get_target(target).cpu == "cortex-m55" else 1
    assert macs // lanes <= res["instructions"] <= 100 * macs + 10 ** 6, (
        res["instructions"], macs)
    assert 0 < res["run_stack_bytes"] < res["stack_bytes"] < res["stack_size"]
    assert res["stack_bytes"] < 16 * 1024, "a kernel keeps large arrays on the stack"
    size, crt = res["size"], res["crt_size"]
    mem = info["memory"]
    assert size["text"] > 1000 and size["data"] < 4096
    assert size["rodata"] >= mem["constants_in_flash_bytes"]
    assert size["bss"] >= mem["functions"]["main"][0]["workspace_size_bytes"]
    assert size["stack"] == res["stack_size"]
    assert crt["text"] > 0 and crt["data"] == 0 and crt["bss"] == 0


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fname,name", INT8, ids=[n for _, n in INT8])
def test_int8_model_matches_host(tmp_path: Any, objects: str, prepared: Any, fname: str,
                                 name: str, target: str) -> None:
    archive, info, inputs, ref = prepared(fname, name)
    res = fw.build_and_run(archive, name, inputs, str(tmp_path / "fw"), cache=objects,
                           target=target)
    for got, want in zip(_device_outputs(res, info), ref):
        np.testing.assert_array_equal(got, want)
    _check_report(res, info, target)
    assert res["allocators"] == []
    # the DSP convolutions' buffers are planned in the pool, not on the stack
    mem = res["memory"]
    assert mem["scratch_isa"] == "arm_dsp"
    assert mem["scratch_bytes"] > 0 or name == "ad"  # AD: dense layers alone
    assert res["run_stack_bytes"] < 1024, mem
    assert mem["pool_bytes"] == info["memory"]["functions"]["main"][0]["workspace_size_bytes"]
    # the report's RAM is the model's: the rest of .data + .bss is the
    # harness's few statics
    assert 0 <= mem["harness_bytes"] < 1024, mem
    print("\n%s on %s: %s" % (name, target, json.dumps({k: res[k] for k in (
        "instructions", "stack_bytes", "run_stack_bytes", "size", "crt_size", "memory")})))


# file, name, the largest difference allowed in units in the last place:
# the float models that end in a softmax call expf, which newlib (on the
# device) and glibc (on the host) may round differently; their outputs
# were seen 1-2 ULPs apart. ad01 calls no libm function and is bit for bit.
FLOAT = [("ad01_fp32.tflite", "adf", 0), ("kws_ref_model_float32.tflite", "kwsf", 4),
         ("pretrainedResnet.tflite", "icf", 4)]


@pytest.mark.parametrize("target,fname,name,ulps", [
    (t, f, n, u) for f, n, u in FLOAT for t in TARGETS if u == 0 or t not in SUBSET_TARGETS])
def test_float_model_matches_host_bit_for_bit(tmp_path: Any, objects: str, prepared: Any,
                                              target: str, fname: str, name: str,
                                              ulps: int) -> None:
    # -ffp-contract=off: fused multiply-adds would round differently from
    # the host's separate multiply and add (ad01 then differs in ~60% of
    # its outputs).
    archive, info, inputs, ref = prepared(fname, name)
    res = fw.build_and_run(archive, name, inputs, str(tmp_path / "fw"), cache=objects,
                           target=target)
    for got, want in zip(_device_outputs(res, info), ref):
        assert got.dtype == np.float32
        if ulps == 0:
            np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
        else:  # same signs, so the bit patterns order like the values
            assert np.all(np.signbit(got) == np.signbit(want))
            diff = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32))
            assert diff.max() <= ulps, "%d ULPs apart" % diff.max()
    _check_report(res, info, target)


def test_link_has_no_allocator(tmp_path: Any, objects: str, prepared: Any) -> None:
    archive, _, inputs, _ = prepared("kws_ref_model.tflite", "kws")
    b = fw.build(archive, "kws", inputs, str(tmp_path / "fw"), cache=objects)
    assert fw.allocators_in(b["elf"]) == []
    syms = subprocess.run(["arm-none-eabi-nm", b["elf"]], capture_output=True, text=True,
                          check=True).stdout.split()
    assert "tvmgen_kws_run" in syms
    assert not {"malloc", "free", "calloc", "realloc"} & set(syms)
    # The check sees an allocator when there is one (here, undefined).
    src = tmp_path / "alloc.c"
    src.write_text("#include <stdlib.h>\nvoid *f(void) { return malloc(4); }\n")
    obj = str(tmp_path / "alloc.o")
    subprocess.run(["arm-none-eabi-gcc"] + fw.ARCH_FLAGS + ["-c", str(src), "-o", obj],
                   check=True)
    assert fw.allocators_in(obj) == ["malloc"]


def test_bad_calls_return_error_codes_on_device(tmp_path: Any, objects: str,
                                               prepared: Any) -> None:
    """Through the command line: run.py --bad-calls prints the JSON report."""
    archive, info, inputs, ref = prepared("kws_ref_model.tflite", "kws")
    p = subprocess.run([sys.executable, RUNNER, archive, "kws"] + inputs
                       + ["--bad-calls", "--cache", objects,
                          "--workdir", str(tmp_path / "fw")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    res = json.loads(p.stdout)
    assert res["ok"] is True
    assert res["bad_calls"] == {
        "null_input": {"status": TN_CRT_NULL_POINTER, "expected": TN_CRT_NULL_POINTER},
        "null_inputs_struct": {"status": TN_CRT_NULL_POINTER,
                               "expected": TN_CRT_NULL_POINTER},
        "misaligned_pool": {"status": TN_CRT_POOL_MISALIGNED,
                            "expected": TN_CRT_POOL_MISALIGNED},
        # through the firmware API (tvmnode/crt/model.h)
        "pool_too_small": {"status": 6, "expected": 6},
        "foreign_descriptor": {"status": 10, "expected": 10},
        # instances changed behind the API's back (issue 32): refused
        # before a pointer in them is followed
        "garbage_instance": {"status": 10, "expected": 10},
        "good_instance": {"status": 0, "expected": 0},
        "swapped_descriptor": {"status": 10, "expected": 10},
        "copied_instance": {"status": 10, "expected": 10},
        "torn_instance": {"status": 10, "expected": 10},
    }
    # and the good call after them still computes the host's bits
    np.testing.assert_array_equal(_device_outputs(res, info)[0], ref[0])


def test_systick_wraps_are_counted(tmp_path: Any, objects: str, prepared: Any) -> None:
    """With a reload of 1024 ticks the timed run wraps a few hundred times;
    the count must agree with the free-running one up to the wrap handler's
    own few instructions a wrap."""
    archive, info, inputs, _ = prepared("kws_ref_model.tflite", "kws")
    plain = fw.build_and_run(archive, "kws", inputs, str(tmp_path / "a"), cache=objects)
    wrapped = fw.build_and_run(archive, "kws", inputs, str(tmp_path / "b"), cache=objects,
                               harness_flags=["-DFW_SYST_RELOAD=0x3FF"])
    wraps = plain["systick_ticks"] // 1024
    assert wraps > 100
    extra = wrapped["instructions"] - plain["instructions"]
    assert 0 <= extra <= 20 * wraps + 80, (extra, wraps)
    assert wrapped["outputs"] == plain["outputs"]


@pytest.mark.parametrize("target", TARGETS)
def test_stack_overflow_is_reported(tmp_path: Any, objects: str, prepared: Any,
                                    target: str) -> None:
    """Below each board's RAM nothing is mapped (its linker script)."""
    archive, _, inputs, _ = prepared("kws_ref_model.tflite", "kws")
    with pytest.raises(fw.FirmwareError, match="stack overflow"):
        fw.build_and_run(archive, "kws", inputs, str(tmp_path / "fw"), cache=objects,
                         stack_size=256, timeout=30, target=target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("reload", ["0x3F", "0xFFFFFF"])
def test_ticks_right_after_start_and_at_wraps(tmp_path: Any, target: str,
                                              reload: str) -> None:
    """firmware/common/ticks_check.c: the counter reads 0 (or 1) right after
    it is started, never goes backwards and never jumps across back-to-back
    reads, wraps or not. SysTick's CURRENT reads 0 for the tick after a
    start and after each wrap; counting that as RELOAD - 0 ticks once put
    the first reading 2^24 ticks ahead and made every wrap jump."""
    elf = fw.build_program(["ticks_check.c"], str(tmp_path), target=target,
                           flags=["-DFW_SYST_RELOAD=%s" % reload])
    code, text = fw.run_program(elf, target, timeout=60)
    line = next(ln for ln in text.splitlines() if ln.startswith("ticks "))
    fields = dict(w.split("=") for w in line.split()[1:])
    assert int(fields["first"]) <= 1, line
    # a step is at most the ticks of one read loop and a wrap's handler:
    # 1 where a tick is longer than both (M4, M33, M7), 2 on the M55
    assert int(fields["backwards"]) == 0, line
    assert int(fields["maxstep"]) <= int(fields["allowed"]) <= 2, line
    # 200,000 reads of about 30 instructions each
    assert 10 ** 5 < int(fields["last"]) < 10 ** 6, line
    assert code == 0, text


def test_target_table_ipt_may_be_a_fraction(tmp_path: Any, monkeypatch: Any) -> None:
    """The M55's SysTick runs at 32 MHz: 31.25 instructions a tick, the
    row's 125/4, which the harness gets as a numerator and a denominator
    and the instruction counts round down; a row whose ipt is neither a
    whole number nor a fraction is refused, naming the row."""
    m55 = fw.get_target("m55")
    assert m55.instructions_per_tick == fw.Fraction(125, 4)
    assert fw.harness_defines(m55)[:2] == ["-DFW_INSTRUCTIONS_PER_TICK=125u",
                                           "-DFW_INSTRUCTIONS_PER_TICK_DEN=4u"]
    assert fw.harness_defines(fw.get_target())[:2] == ["-DFW_INSTRUCTIONS_PER_TICK=40u",
                                                       "-DFW_INSTRUCTIONS_PER_TICK_DEN=1u"]
    assert [fw.instructions("m55", n) for n in (1, 4, 201252)] == [31, 125, 6289125]
    assert fw.instructions("m4", 3) == 120
    for bad in ("31.25", "0", "40/0", "x"):
        table = tmp_path / "targets.txt"
        table.write_text("m4 mps2-an386 cortex-m4 %s mps2_an386.ld -mcpu=cortex-m4\n" % bad)
        monkeypatch.setattr(fw, "TARGETS_FILE", str(table))
        with pytest.raises(ValueError, match="row m4: ipt .*%s" % bad.replace(".", r"\.")):
            fw.targets()


@pytest.mark.parametrize("target", [t for t in TARGETS if t in SUBSET_TARGETS])
def test_cycle_estimate_refuses_cores_its_table_does_not_describe(tmp_path: Any,
                                                                  target: str) -> None:
    """cycles.py's timings are the Cortex-M4's: run.py --cycles refuses the
    M7 and the M55 before it builds anything, and says the instruction
    count stands."""
    with pytest.raises(fw.FirmwareError, match="timing table is the Cortex-M4's"):
        fw.profile(str(tmp_path / "none.elf"), str(tmp_path), target)
    p = subprocess.run([sys.executable, RUNNER, str(tmp_path), "m", "--cycles",
                        "--target", target], capture_output=True, text=True, timeout=60)
    assert p.returncode != 0
    # refused before the archive (an empty folder) is read
    assert "cortex-m4" in p.stdout.lower() and "metadata.json" not in p.stdout + p.stderr


def test_input_must_match_the_model(tmp_path: Any, prepared: Any) -> None:
    archive, info, _, _ = prepared("kws_ref_model.tflite", "kws")
    bad = str(tmp_path / "bad.npy")
    np.save(bad, np.zeros(info["inputs"][0]["shape"], np.float32))
    with pytest.raises(fw.FirmwareError, match="dtype"):
        fw.build(archive, "kws", [bad], str(tmp_path / "fw"))
    short = tmp_path / "short.bin"
    short.write_bytes(b"\0" * 10)
    with pytest.raises(fw.FirmwareError, match="10 bytes"):
        fw.build(archive, "kws", [str(short)], str(tmp_path / "fw"))
    with pytest.raises(fw.FirmwareError, match="no model"):
        fw.build(archive, "other", [str(short)], str(tmp_path / "fw"))


def test_interfaces_the_harness_refuses(tmp_path: Any, prepared: Any) -> None:
    """Devices and state are refused with a message naming why, before
    anything is compiled; io_in_pool is not (the test above runs it)."""
    archive, _, _, _ = prepared("ad01_int8.tflite", "ad")
    with open(os.path.join(archive, "metadata.json")) as f:
        meta = json.load(f)
    assert fw.read_metadata(archive, "ad")["interface"]["io_in_pool"] is False
    cases = [("devices", ["npu"], [], "no device hooks"),
             ("io_in_pool", True, [{"name": "state", "kind": "state", "size_bytes": 64,
                                    "limit_bytes": 0, "alignment": 16}], "state pool")]
    for i, (key, value, extra_pools, message) in enumerate(cases):
        m = json.loads(json.dumps(meta))
        m["modules"]["ad"]["interface"][key] = value
        m["modules"]["ad"]["memory"]["pools"] += extra_pools
        folder = tmp_path / str(i)
        folder.mkdir()
        (folder / "metadata.json").write_text(json.dumps(m))
        with pytest.raises(fw.FirmwareError, match=message):
            fw.read_metadata(str(folder), "ad")
    m = json.loads(json.dumps(meta))
    m["modules"]["ad"]["interface"]["io_in_pool"] = True
    (tmp_path / "metadata.json").write_text(json.dumps(m))
    assert fw.read_metadata(str(tmp_path), "ad")["interface"]["io_in_pool"] is True


def test_object_cache_keys_each_source_by_the_headers_it_includes(tmp_path: Any) -> None:
    """run.py's object cache: a source compiles again when a header it
    includes (directly or through another) changes, and only then; a
    changed flag or source text compiles it again too."""
    src = tmp_path / "src"
    (src / "inc").mkdir(parents=True)
    (src / "inc" / "x.h").write_text("#include \"deep.h\"\n#define X (DEEP + 1)\n")
    (src / "inc" / "deep.h").write_text("#define DEEP 1\n")
    (src / "inc" / "y.h").write_text("#define Y 2\n")
    (src / "a.c").write_text("#include \"x.h\"\nint a(void) { return X; }\n")
    (src / "b.c").write_text("#include \"y.h\"\nint b(void) { return Y; }\n")
    cache = tmp_path / "cache"
    flags = fw.target_flags(fw.get_target(DEFAULT), "-O2")

    def build(extra: Tuple[str, ...] = ()) -> List[str]:
        fw._compile_all([str(src / "a.c"), str(src / "b.c")], flags + list(extra),
                        [str(src / "inc")], str(tmp_path / "obj"), str(cache))
        return sorted(os.listdir(cache))

    first = build()
    assert len(first) == 2 and build() == first
    (src / "inc" / "y.h").write_text("#define Y 3\n")
    second = build()
    assert len(second) == 3 and set(first) < set(second)
    assert [n for n in second if n not in first][0].startswith("b-")
    (src / "inc" / "deep.h").write_text("#define DEEP 5\n")
    third = build()
    assert len(third) == 4 and [n for n in third if n not in second][0].startswith("a-")
    assert len(build(("-DZ=1",))) == 6
    (src / "a.c").write_text("#include \"x.h\"\nint a(void) { return X + 1; }\n")
    assert len(build()) == 7
    sizes = fw.section_sizes(str(tmp_path / "obj" / "a.o"))
    assert sizes["text"] > 0


def _load_kernels_check() -> Any:
    """firmware/common/kernels_check.py, beside run.py."""
    mod = types.ModuleType("firmware_common_kernels_check")
    mod.__file__ = KERNELS_CHECK
    importlib.machinery.SourceFileLoader(mod.__name__, KERNELS_CHECK).exec_module(mod)
    return mod


# Both optimisation levels on the default target; one seed and half the
# cases on the others (the same C for another core), a quarter on the
# SUBSET_TARGETS.
KERNEL_CHECKS = [(DEFAULT, "-O2", 1, 800), (DEFAULT, "-Os", 2, 800)] + [
    (t, "-O2", 3, 200 if t in SUBSET_TARGETS else 400) for t in TARGETS if t != DEFAULT]


@pytest.mark.parametrize("target,opt,seed,cases", KERNEL_CHECKS)
def test_int8_kernels_match_reference_on_device(tmp_path: Any, objects: str, target: str,
                                                opt: str, seed: int, cases: int) -> None:
    """firmware/common/kernels_check.c: random convolution and dense
    geometries (depthwise, 1x1, 3x3, strides, pads, dilations, per-channel
    quantization, biases or none, odd channel counts, requantization
    corners) through the kernels as the core compiles them (their Cortex-M
    DSP forms) and through a plain C reference in the same firmware; every
    output byte must be equal."""
    kc = _load_kernels_check()
    res = kc.check(str(tmp_path), opt=opt, cases=cases, seed=seed, cache=objects,
                   target=target)
    assert res["failures"] == 0, "\n".join(res["mismatches"][:20])
    assert res["ok"] and res["exit_code"] == 0
    ran = res["cases"]
    mve = fw.get_target(target).cpu == "cortex-m55"
    for kind in ("conv", "conv_scratch", "conv_less", "inplace", "conv_s32", "requant",
                 "dense", "dense_s32", "dw3", "dw3_inplace", "pw", "pw_fast",
                 "pw_wide", "dense_folded", "dense_p4", "dense_p4_dsp",
                 "qadd_mve_checked") + (
                     ("dw_mve",) if mve else ("dw3_wide",)):
        assert ran[kind] > 0, (kind, ran)
    # the matrix product's columns of one pixel, and its gathered windows:
    # in builds for speed only
    assert (ran["pw_unit"] > 0) == (opt != "-Os"), ran
    assert (ran["pw_gather"] > 0) == (opt != "-Os"), ran
    assert (ran["pw_gather_cut"] > 0) == (opt != "-Os"), ran
    # a last partial quad taken whole, and windows inside copied by rows:
    # in builds for speed only, on the cores that run the DSP form (the
    # latter in about one case in a hundred: at 800 cases, and none where
    # the build cannot take it)
    assert (ran["pw_tail"] > 0) == (opt != "-Os" and not mve), ran
    if cases >= 800 or opt == "-Os" or mve:
        assert (ran["pw_inside"] > 0) == (opt != "-Os" and not mve), ran
    # the fused assembly's fourteen-register form (six loads a quad): in
    # builds for speed only, on the cores that run the DSP form
    assert (ran["pw_quad6"] > 0) == (opt != "-Os" and not mve), ran
    # and there its turns of 64 taps entered at each of their eight
    # blocks (at 600 cases or more; runs of fewer miss one or two), and
    # windows of more than one turn
    if ran["pw_quad6"]:
        entries = bin(ran["pw_quad6_entries"]).count("1")
        assert (entries == 8) if cases >= 600 else (entries >= 5), ran
        assert 0 < ran["pw_quad6_turns"] < ran["pw_quad6"], ran
    # the depthwise 3x3 DSP form's two pixels a pass: in builds for speed
    # only (on the M55 its MVE form takes most of those cases); at 400
    # cases or more, since its two rows a pass take the SAME layers at
    # stride 1 and 200 cases may leave no pair side by side, cut or not
    if not mve and (cases >= 400 or opt == "-Os"):
        assert (ran["dw3_pair"] > 0) == (opt != "-Os"), ran
        # and its pair whose second window is cut, in builds for speed only
        assert (ran["dw3_pair_cut"] > 0) == (opt != "-Os"), ran
        # and its two rows a pass, in builds for speed only
        assert (ran["dw3_vrows"] > 0) == (opt != "-Os"), ran
    if not mve:
        # and its border windows unrolled, in builds for speed only
        assert (ran["dw3_cut"] > 0) == (opt != "-Os"), ran
    # the M55 runs the matrix product's cases in its MVE form, and the
    # depthwise 3x3 ones whose shifts are right shifts; the others all in
    # the DSP ones
    if mve:
        assert ran["pw_mve"] == ran["pw"], ran
        # and its windows inside the input gathered by whole rows
        assert 0 < ran["pw_mve_inside"] <= ran["pw_mve"], ran
        assert ran["dw_mve"] <= ran["dw3"], ran
        # of those, windows of four channels in the depthwise assembly,
        # and of those, rows of SAME layers run by their known forms
        assert 0 < ran["dw_mve_asm"] <= ran["dw_mve"], ran
        assert 0 < ran["dw_mve_same"] <= ran["dw_mve_asm"], ran

        # and windows with their top or bottom row cut there too
        assert 0 < ran["dw_mve_edge"] <= ran["dw_mve"], ran
        # and two with one row cut a pass
        assert 0 < ran["dw_mve_edge_pair"] <= ran["dw_mve_edge"], ran
        # and the packed dense layers and the other depthwise ones whose
        # shifts are right shifts
        assert 0 < ran["dense_p4_mve"] <= ran["dense_p4_dsp"], ran
        assert 0 < ran["dw_any_mve"] < ran["conv"], ran
        # and the int8 ADD's contiguous runs whose parameters it takes
        assert 0 < ran["qadd_mve"] < ran["qadd_mve_checked"], ran
    else:
        assert ran["pw_mve"] == 0 and ran["dw_mve"] == 0, ran
        assert ran["pw_mve_inside"] == 0 and ran["dw_mve_asm"] == 0, ran
        assert ran["dw_mve_same"] == 0, ran

        assert ran["dw_mve_edge"] == 0, ran
        assert ran["dw_mve_edge_pair"] == 0, ran
        assert ran["dense_p4_mve"] == 0 and ran["dw_any_mve"] == 0, ran
        assert ran["qadd_mve"] == 0, ran
    # the depthwise column layers' sixteen channels a pass in assembly
    # (the wake word's): on the M55 only
    if mve:
        assert 0 < ran["dw_mve_col"] <= ran["dw_any_mve"], ran
    else:
        assert ran["dw_mve_col"] == 0, ran
    # the ADD's cases, and on the cores without MVE its table loop's (on
    # the M55 the MVE form takes the runs whose parameters it takes)
    assert ran["qadd"] > 0, ran
    if not mve:
        assert ran["qadd_dsp"] > 0, ran
    # given the scratch sized for them, the convolutions take the packed DSP
    # forms (pairs, matrix product), which the calls without scratch cannot
    conv = res["conv_instructions"]
    assert conv["scratch"] < 0.95 * conv["no_scratch"], conv
    print("\nkernels_check %s %s: %s" % (target, opt, json.dumps(
        {k: res[k] for k in ("cases", "instructions", "conv_instructions")})))


def test_kernels_check_reports_a_mismatch(tmp_path: Any) -> None:
    """The check fails when a kernel is wrong: the same firmware built with
    a reference that is off by one in its requantization."""
    kc = _load_kernels_check()
    elf = kc.build(str(tmp_path), opt="-O2", cases=30, seed=1,
                   extra_flags=["-DKC_BREAK_REFERENCE=1"])
    res = kc.run_elf(elf, timeout=120)
    assert res["exit_code"] == 1 and res["failures"] > 0 and not res["ok"]
    assert any(m.startswith("mismatch case") for m in res["mismatches"])


def _copies_cache(tmp_path: Any) -> str:
    """The object cache of the checks on copies of the crt with one header
    changed, shared by the tests of a worker: a source's object is keyed by
    the headers it includes, so only the sources that include the changed
    one compile again."""
    return str(tmp_path.parent / "fw-copies-objects")


def _check_broken_form(tmp_path: Any, header_name: str, old: str, new: str,
                       tag: str, kind: bool = False, marked: str = "",
                       cases: int = 120, folder: str = "arm_dsp",
                       target: str = DEFAULT) -> Dict[str, Any]:
    """kernels_check on target, on a copy of the crt whose
    folder/header_name has its one occurrence of old replaced by new: it
    must fail, and every case it describes must end in tag (the cases it
    counts as that form's), or with kind name tag as its kind ("case 7
    dense ..."), and hold the word marked where one is given. Returns the
    check's report."""
    kc = _load_kernels_check()
    crt = tmp_path / "crt"
    shutil.copytree(kc.CRT, str(crt))
    header = crt / "src" / "kernels" / folder / header_name
    text = header.read_text()
    assert text.count(old) == 1
    header.write_text(text.replace(old, new))
    elf = kc.build(str(tmp_path / "fw"), opt="-O2", cases=cases, seed=1, crt=str(crt),
                   target=target, cache=_copies_cache(tmp_path))
    res = kc.run_elf(elf, timeout=300, target=target)
    assert res["exit_code"] == 1 and res["failures"] > 0 and not res["ok"]
    described = [m for m in res["mismatches"] if m.startswith("case ")]
    assert described and all(m.split()[2] == tag if kind else m.endswith(" " + tag)
                             for m in described), described
    assert not marked or all(marked in m.split() for m in described), described
    return res


def test_kernels_check_catches_a_broken_depthwise_3x3_form(tmp_path: Any) -> None:
    """The check reaches the depthwise 3x3 DSP form (arm_dsp/dw3x3_s8_dsp.h)
    and fails when it is wrong: a copy of the crt whose form drops the last
    row of a whole window's taps gives mismatches, and only in the cases
    the check counts as that form's."""
    last_row = "  dw3_row4(s, x + 2 * is1, is2, g->w + 12, 3, io2);\n"
    _check_broken_form(tmp_path, "dw3x3_s8_dsp.h", last_row, "", "dw3")


def test_kernels_check_catches_a_broken_depthwise_3x3_pair(tmp_path: Any) -> None:
    """The same for the form's two pixels a pass at stride 1
    (dw3_whole4x2): a copy whose pair leaves out the second pixel's last
    tap of each row fails, and only in the cases the check counts as
    running pairs ("dw3-pair"; about one case in fifty, so 400 of them)."""
    last = '  "smlatt %[b2], %[v], %[wv], %[b2]\\n\\t"\n'
    _check_broken_form(tmp_path, "dw3x3_s8_dsp.h", last, '  ""\n', "dw3",
                       marked="dw3-pair", cases=400)


def test_kernels_check_catches_a_broken_depthwise_3x3_cut_pair(tmp_path: Any) -> None:
    """The same for the pair whose second window is cut by the padding
    (dw3_whole4x2 with cut, in builds for speed): a copy whose pair leaves
    out the first pixel's third tap of channels 2 and 3 fails, and only in
    the cases the check counts as running such a pair ("dw3-pair-cut")."""
    last = '  "smlatt %[a2], %[t], %[wv], %[a2]\\n\\t"\n\n'
    _check_broken_form(tmp_path, "dw3x3_s8_dsp.h", last, '  ""\n\n', "dw3",
                       marked="dw3-pair-cut", cases=400)


def test_kernels_check_catches_a_broken_depthwise_3x3_row_pair(tmp_path: Any) -> None:
    """The same for the form's two output rows a pass (dw3_vrows, in
    builds for speed): a copy whose column of two windows leaves out the
    lower one's last tap of channels 2 and 3 fails, and only in the cases
    the check counts as running two rows a pass ("dw3-vrows")."""
    last = '  "smlatt %[d2], %[f], %[q], %[d2]\\n\\t"\n'
    _check_broken_form(tmp_path, "dw3x3_s8_dsp.h", last, '  ""\n', "dw3",
                       marked="dw3-vrows", cases=400)


def test_kernels_check_catches_a_broken_depthwise_3x3_row_pair_cut(
        tmp_path: Any) -> None:
    """And for its last pass of an odd count of rows, the lower window cut
    by the padding: a copy that leaves out the upper one's last tap of
    channels 2 and 3 there fails, in the "dw3-vrows" cases alone."""
    last = '  "smlatt %[u2], %[e], %[q], %[u2]\\n\\t"\n#define DW3_COL2('
    _check_broken_form(tmp_path, "dw3x3_s8_dsp.h", last, '  ""\n#define DW3_COL2(',
                       "dw3", marked="dw3-vrows", cases=400)


def test_kernels_check_catches_a_broken_depthwise_3x3_row_pair_ring(
        tmp_path: Any) -> None:
    """And for its ring in place, three rows of a group: a copy that lets
    the pass's lower row be overwritten before it goes out fails, only in
    the "dw3-vrows" cases, and only in their calls in place."""
    res = _check_broken_form(tmp_path, "dw3x3_s8_dsp.h", "      wait = s2;\n",
                             "      wait = s1;\n", "dw3", marked="dw3-vrows", cases=400)
    bad = [m for m in res["mismatches"] if m.startswith("mismatch case")]
    assert bad and all(m.split()[3] == "conv-inplace" for m in bad), bad


def test_kernels_check_catches_a_broken_depthwise_3x3_border(tmp_path: Any) -> None:
    """The same for the form's border windows unrolled (dw3_cut4, in
    builds for speed): a copy whose windows of two rows and three columns
    (a top or bottom row's) leave out their third column fails, and only in
    the cases the check counts as unrolling border windows ("dw3-cut")."""
    cut = "      dw3_cut4(s, x, is1, is2, w, 2, 3, io2);\n"
    _check_broken_form(tmp_path, "dw3x3_s8_dsp.h", cut,
                       "      dw3_cut4(s, x, is1, is2, w, 2, 2, io2);\n", "dw3",
                       marked="dw3-cut", cases=200)


def test_kernels_check_catches_a_broken_depthwise_3x3_ring_flush(tmp_path: Any) -> None:
    """The same for the form's flush of a group of four's ring rows in
    place (dw3_flush4): a copy that moves three bytes of each pixel's four
    fails, only in the form's cases, and only in their calls in place."""
    res = _check_broken_form(tmp_path, "dw3x3_s8_dsp.h",
                             "__builtin_memcpy(out, src, 4);\n}",
                             "__builtin_memcpy(out, src, 3);\n}", "dw3", cases=400)
    bad = [m for m in res["mismatches"] if m.startswith("mismatch case")]
    assert bad and all(m.split()[3] == "conv-inplace" for m in bad), bad


@pytest.mark.parametrize("opt", ["-O2", "-Os"])
def test_depthwise_3x3_undoubled_sums_kernels_match_reference_on_device(
        tmp_path: Any, objects: str, opt: str) -> None:
    """The depthwise 3x3 DSP form doubles a dw3_q group's weights and
    biases so that its requantization needs no QADD (dw3_doubled), but
    keeps a channel's sums as they are where its bias lies beyond the
    bound that doubling needs: kernels_check's cases with such a group
    (biases near +-2^30 and anywhere in the int32s, "dw3-undoubled") are
    reached at both optimisation levels and every output byte equals the
    reference's."""
    kc = _load_kernels_check()
    res = kc.check(str(tmp_path), opt=opt, cases=400, seed=4, cache=objects)
    assert res["failures"] == 0, "\n".join(res["mismatches"][:20])
    assert res["ok"] and res["exit_code"] == 0
    assert res["cases"]["dw3_undoubled"] > 0, res["cases"]


def test_kernels_check_catches_a_broken_depthwise_3x3_doubling(tmp_path: Any) -> None:
    """The same for the form's doubled sums (dw3_doubled): a copy whose
    group leaves the weights of channels 1 and 3 undoubled fails, and
    only in the form's cases."""
    _check_broken_form(tmp_path, "dw3x3_s8_dsp.h",
                       "__sadd16(w13, (int32_t)((uint32_t)w13 & dbl13))", "w13", "dw3")


def test_kernels_check_catches_a_broken_depthwise_3x3_undoubled_channel(
        tmp_path: Any) -> None:
    """And for the channels it keeps undoubled: a copy that doubles every
    channel's sums, a bias beyond the bound too, fails, and only in the
    cases the check marks as having such a channel ("dw3-undoubled")."""
    _check_broken_form(tmp_path, "dw3x3_s8_dsp.h", "  return b >= -lim && b < lim;\n",
                       "  return b >= -lim || b < lim;\n", "dw3", marked="dw3-undoubled",
                       cases=400)


def _kernels_check_without_dw3_any(tmp_path: Any, broken: bool = False) -> Dict[str, Any]:
    """kernels_check (-Os, 300 cases) on a copy of the crt built with every
    convolution form but the depthwise 3x3 form's other rows (isa.h's
    default TN_CRT_CONV_S8_FORMS without TN_CRT_CONV_FORM_DW3_ANY), and,
    broken, with dw3_fast_only asking neither the activation's clamp nor
    the channels' requantization."""
    kc = _load_kernels_check()
    crt = tmp_path / "crt"
    shutil.copytree(kc.CRT, str(crt))
    isa = crt / "src" / "kernels" / "isa.h"
    old = "#define TN_CRT_CONV_S8_FORMS TN_CRT_CONV_FORM_ALL\n"
    text = isa.read_text()
    assert text.count(old) == 1
    isa.write_text(text.replace(old, "#define TN_CRT_CONV_S8_FORMS "
                                "(TN_CRT_CONV_FORM_ALL & ~TN_CRT_CONV_FORM_DW3_ANY)\n"))
    if broken:
        dw3 = crt / "src" / "kernels" / "arm_dsp" / "dw3x3_s8_dsp.h"
        text = dw3.read_text()
        for test, none in (("lo > -128 || hi < 127 ||", "((void)lo, (void)hi, 0) ||"),
                           ("    if (!pw_quant_ok(q, ch)) return 0;\n", "    (void)q;\n")):
            assert text.count(test) == 1
            text = text.replace(test, none)
        dw3.write_text(text)
    elf = kc.build(str(tmp_path / "fw"), opt="-Os", cases=300, seed=4, crt=str(crt),
                   cache=_copies_cache(tmp_path))
    res: Dict[str, Any] = kc.run_elf(elf, timeout=300)
    return res


def test_kernels_match_reference_without_the_other_depthwise_3x3_rows(
        tmp_path: Any) -> None:
    """A crt without TN_CRT_CONV_FORM_DW3_ANY (what a model whose depthwise
    3x3 layers all take the fast rows is built with: KWS) keeps only
    dw3_rows' fast loop; its layers whose groups need the others (a clamp,
    shifts beyond the fast rule's, channels not a multiple of 4: the check's
    dw3_wide cases among them) run in the blocks, and every output byte
    still equals the reference's on the device. With dw3_fast_only broken
    on purpose (every layer taken for fast), the same check fails in the
    depthwise 3x3 cases."""
    res = _kernels_check_without_dw3_any(tmp_path / "kept")
    assert res["failures"] == 0, "\n".join(res["mismatches"][:20])
    assert res["ok"] and res["exit_code"] == 0
    assert res["cases"]["dw3"] > 0 and res["cases"]["dw3_wide"] > 0, res["cases"]
    bad = _kernels_check_without_dw3_any(tmp_path / "broken", broken=True)
    assert bad["exit_code"] == 1 and bad["failures"] > 0 and not bad["ok"]
    described = [m for m in bad["mismatches"] if m.startswith("case ")]
    assert described and all(m.endswith(" dw3") for m in described), described


def test_kernels_check_catches_a_broken_add_table_form(tmp_path: Any) -> None:
    """The check reaches the DSP form of the ADD's table loop
    (arm_dsp/add_s8_dsp.h) and fails when it is wrong: a copy of the crt
    whose loop packs its fourth output into the third's byte gives
    mismatches, and only in the cases the check counts as that form's."""
    last = "    TN__CRT_BFI8(v, TN__CRT_ADD_OUT(s3), 24);\n"
    _check_broken_form(tmp_path, "add_s8_dsp.h", last, last.replace("24)", "16)"), "qadd-dsp")


def test_kernels_check_catches_a_broken_pointwise_form(tmp_path: Any) -> None:
    """The check reaches the DSP matrix product (arm_dsp/conv_s8_dsp.h:
    dsp_pointwise, its assembly quads) and fails when it is wrong: a copy
    of the crt whose quads multiply one sum's second pair by the wrong
    weights gives mismatches, and only in the cases the check counts as
    that form's."""
    last = '"smlad %[s11], %[b1], %[u], %[s11]\\n\\t"'
    _check_broken_form(tmp_path, "conv_s8_dsp.h", last, last.replace("[u],", "[u0],"), "pw")


def test_kernels_check_catches_a_broken_six_load_pointwise_quad(tmp_path: Any) -> None:
    """The check reaches the fused assembly's fourteen-register form
    (arm_dsp/conv_s8_dsp.h: pw_pairs_fast14 and pw_pairs_wide14, whose
    quads load both channels' weight words with the columns) and fails
    when it is wrong: a copy of the crt whose quad multiplies the second
    pixel's second channel by the first channel's weights gives
    mismatches, and only in the cases the check marks as that form's
    (" pw-quad6")."""
    last = '"smlad " TN__R(s11) ", " TN__R(b1) ", " TN__R(v) ", " TN__R(s11) "\\n\\t"'
    _check_broken_form(tmp_path, "conv_s8_dsp.h", last, last.replace("R(v)", "R(u)"), "pw",
                       marked="pw-quad6")


def test_kernels_check_catches_a_broken_pointwise_turn_entry(tmp_path: Any) -> None:
    """The check reaches the entry of the fourteen-register form's turns
    of 64 taps (arm_dsp/conv_s8_dsp.h: TN__PW_ENTRY16, computed once a
    call) and fails when it is wrong: a copy of the crt that enters each
    pair's first turn one block of eight taps late (leaving the window's
    first eight taps out) gives mismatches, and only in the cases the
    check marks as that form's (" pw-quad6")."""
    last = '"orr " TN__R(a0) ", " TN__R(a0) ", #1\\n\\t"'
    late = '"add " TN__R(a0) ", " TN__R(a0) ", " TN__R(u) "\\n\\t"'
    _check_broken_form(tmp_path, "conv_s8_dsp.h", last, late + last, "pw",
                       marked="pw-quad6")


def test_kernels_check_catches_a_broken_pointwise_weight_sums(tmp_path: Any) -> None:
    """The check reaches the matrix product's weight sums (arm_dsp/conv_s8_dsp.h:
    pw_corr, its int16 lanes four words a turn) and fails when they are
    wrong: a copy of the crt whose turn adds the third word's odd bytes
    where the fourth's belong gives mismatches, and only in the cases the
    check counts as the matrix product's."""
    last = "        e = __sxtab16(e, (int32_t)v3), o = tn__crt_sxtab16_ror8(o, v3);\n"
    _check_broken_form(tmp_path, "conv_s8_dsp.h", last, last.replace("(o, v3)", "(o, v2)"),
                       "pw")


@pytest.mark.skipif("m55" not in TARGETS, reason="no m55 row in firmware/targets.txt")
def test_kernels_check_catches_a_broken_mve_pointwise_form(tmp_path: Any) -> None:
    """On the M55 the check reaches the MVE matrix product
    (arm_mve/conv_s8_mve.h) and fails when it is wrong: a copy of the crt
    whose loop multiplies the second pixel's second sum by the first
    channel's weights gives mismatches, and only in the cases the check
    counts as the matrix product's."""
    last = '"vmladava.s8 %[e], q1, q3\\n\\t"'
    _check_broken_form(tmp_path, "conv_s8_mve.h", last, last.replace("q3", "q2"), "pw",
                       folder="arm_mve", target="m55")


@pytest.mark.skipif("m55" not in TARGETS, reason="no m55 row in firmware/targets.txt")
def test_kernels_check_reaches_the_mve_pointwise_run(tmp_path: Any, objects: str) -> None:
    """On the M55 the check's matrix product cases reach the assembly
    block of whole turns (arm_mve/conv_s8_mve.h: mve_run) in both its
    forms, per channel and per tensor, and their outputs equal the
    reference's."""
    kc = _load_kernels_check()
    res = kc.check(str(tmp_path), opt="-O2", cases=400, seed=5, cache=objects,
                   target="m55")
    assert res["failures"] == 0, "\n".join(res["mismatches"][:20])
    assert res["ok"] and res["exit_code"] == 0
    ran = res["cases"]
    assert 0 < ran["pw_mve_run_tensor"] < ran["pw_mve_run"] <= ran["pw_mve"], ran
    # the 1x1 block of 64 taps (mve_pw64): the last extra cases reach it
    assert 0 < ran["pw_mve_64"] < ran["pw_mve_run"], ran


@pytest.mark.skipif("m55" not in TARGETS, reason="no m55 row in firmware/targets.txt")
@pytest.mark.parametrize("old,new,marked", [
    # the second pixel's sums of channels 2 and 3 take the first pixel's taps
    ('"vmladava.s8 r6, q1, q5\\n\\t"', '"vmladava.s8 r6, q0, q5\\n\\t"', "pw-mve-run"),
    # per channel: the second pixel shifted by the first pixel's sums
    ('"vrshl.s32 q4, q4, q1\\n\\t"', '"vrshl.s32 q4, q3, q1\\n\\t"', "pw-mve-run"),
    # per tensor: the first pixel multiplied by the shift, not the multiplier
    ('"vqrdmulh.s32 q3, q3, r1\\n\\t"', '"vqrdmulh.s32 q3, q3, r3\\n\\t"',
     "pw-mve-run-tensor"),
    # channels 2 and 3 of the second and later turns read their rows
    # without the adjustment for windows that are not whole turns of 16
    ('"add r8, r8, r9\\n\\t"', '"add r8, r8, #0\\n\\t"', "pw-mve-run"),
], ids=["loop", "shift-per-channel", "multiply-per-tensor", "row-adjust"])
def test_kernels_check_catches_a_broken_mve_pointwise_run(tmp_path: Any, old: str, new: str,
                                                          marked: str) -> None:
    """On the M55 the check fails when mve_run's assembly block (the MVE
    matrix product's whole turns) is wrong: copies of the crt whose loop,
    per-channel shift, per-tensor multiply or weight-row step is broken
    give mismatches, and only in the cases the check counts as that
    form's."""
    _check_broken_form(tmp_path, "conv_s8_mve.h", old, new, "pw", marked=marked,
                       cases=200, folder="arm_mve", target="m55")


@pytest.mark.skipif("m55" not in TARGETS, reason="no m55 row in firmware/targets.txt")
@pytest.mark.parametrize("old,new", [
    # the second pixel's sum of channel 3 takes the first pixel's taps
    ('  OP ".s8 lr, q1, q5\\n\\t"', '  OP ".s8 lr, q0, q5\\n\\t"'),
    # the third run of 16 taps multiplied by the second run's weights
    ('      MVE_PW64_RUN("vmladava", "32", "96", "32", "96")',
     '      MVE_PW64_RUN("vmladava", "32", "96", "16", "80")'),
    # in place: the second pixel's taps not copied before the pair's
    # outputs overwrite them
    ("      mve_copy(cols, x, 128);\n", "      mve_copy(cols, x, 64);\n"),
    # the last of an odd count: its second copy left out
    ("      mve_copy(cols, x, 64), mve_copy(cols + 64, x, 64);\n",
     "      mve_copy(cols, x, 64);\n"),
], ids=["pixel", "run-weights", "in-place-copy", "odd-last"])
def test_kernels_check_catches_a_broken_mve_pointwise_64(tmp_path: Any, old: str,
                                                         new: str) -> None:
    """On the M55 the check fails when the MVE matrix product's 1x1 block of
    64 taps (arm_mve/conv_s8_mve.h: mve_pw64) is wrong: copies of the crt
    whose second pixel takes the first's taps, whose third run of taps
    takes the second run's weights, whose pairs in place lose a pixel's
    taps, or whose last pixel of an odd count reads stale taps, give
    mismatches, and only in the cases the check counts as that block's."""
    _check_broken_form(tmp_path, "conv_s8_mve.h", old, new, "pw", marked="pw-mve-64",
                       cases=200, folder="arm_mve", target="m55")


@pytest.mark.skipif("m55" not in TARGETS, reason="no m55 row in firmware/targets.txt")
def test_kernels_check_catches_a_broken_mve_window_fill(tmp_path: Any) -> None:
    """On the M55 the check fails when the MVE matrix product's gathered
    windows that the padding cuts are filled wrong (arm_mve/conv_s8_mve.h:
    mve_im2col's mve_fill): a copy of the crt that fills the columns left
    of the input with 0, not -input_offset, gives mismatches, and only in
    the matrix product's cases."""
    _check_broken_form(tmp_path, "conv_s8_mve.h", "      mve_fill(o, v, lead);\n",
                       "      mve_fill(o, vdupq_n_s8(0), lead);\n", "pw",
                       cases=200, folder="arm_mve", target="m55")


@pytest.mark.skipif("m55" not in TARGETS, reason="no m55 row in firmware/targets.txt")
@pytest.mark.parametrize("old,new", [
    # sixteen inputs a turn: the fourth row's sum adds to the third row's
    ("    s3 = vmladavaq_s8(s3, xv, mve_gather_wb(&a3));\n",
     "    s3 = vmladavaq_s8(s2, xv, mve_gather_wb(&a3));\n"),
    # the last 4 to 12 inputs: the fourth row's left out
    ("    s3 = vmladavaq_s8(s3, xv, vreinterpretq_s8_s32(\n",
     "    s3 = s3 + 0 * vmladavaq_s8(s3, xv, vreinterpretq_s8_s32(\n"),
    # every block of four outputs takes the first block's bias
    ("    if (bias != NULL) acc = vaddq_s32(acc, vldrwq_s32(bias + n));\n",
     "    if (bias != NULL) acc = vaddq_s32(acc, vldrwq_s32(bias));\n"),
], ids=["whole-turn-row", "tail-row", "bias"])
def test_kernels_check_catches_a_broken_mve_dense_form(tmp_path: Any, old: str,
                                                       new: str) -> None:
    """On the M55 the check reaches the MVE dense layer
    (arm_mve/dense_s8_mve.h) and fails when it is wrong: copies of the crt
    whose whole turns add a row's products to another row's sum, whose
    last inputs leave a row out, or whose blocks all take the first
    block's bias give mismatches, and only in the cases the check counts
    as that form's (" p4-mve")."""
    _check_broken_form(tmp_path, "dense_s8_mve.h", old, new, "p4", marked="p4-mve",
                       cases=400, folder="arm_mve", target="m55")


@pytest.mark.skipif("m55" not in TARGETS, reason="no m55 row in firmware/targets.txt")
@pytest.mark.parametrize("old,new", [
    # sixteen channels a pass: the last four multiply the third four's input
    ("      a3 = vaddq_s32(a3, vmulq_s32(x3, mve_dw_ld4(wt + 12, pr[3], full)));\n",
     "      a3 = vaddq_s32(a3, vmulq_s32(x2, mve_dw_ld4(wt + 12, pr[3], full)));\n"),
    # a column layer's last channels (mve_dw_col_run's; kernels_check's
    # other cases rarely reach the general walk's): the input offset off
    # by one
    ("      mve_dw_taps(a, x + whole, wr + whole, ny, 1, ys, ys, wy, 0, pr, io, 1,\n",
     "      mve_dw_taps(a, x + whole, wr + whole, ny, 1, ys, ys, wy, 0, pr, io + 1, 1,\n"),
], ids=["whole-pass-input", "tail-offset"])
def test_kernels_check_catches_a_broken_mve_depthwise_form(tmp_path: Any, old: str,
                                                           new: str) -> None:
    """On the M55 the check reaches the MVE form of the depthwise layers
    other than 3x3 (arm_mve/dw_s8_mve.h) and fails when it is wrong:
    copies of the crt whose whole passes multiply the wrong channels'
    input, or whose last channels add the wrong input offset, give
    mismatches, and only in the cases the check marks as that form's
    (" dw-any-mve")."""
    _check_broken_form(tmp_path, "dw_s8_mve.h", old, new, "dw-any-mve", cases=400,
                       folder="arm_mve", target="m55")


@pytest.mark.skipif("m55" not in TARGETS, reason="no m55 row in firmware/targets.txt")
@pytest.mark.parametrize("old,new", [
    # a tap's third four channels computed from the second four's input
    # and weights
    ('MVE_DW_COL_TAP("a2", "q4", "q5", "8")', 'MVE_DW_COL_TAP("a2", "q4", "q5", "4")'),
    # the input offset left out of the taps
    ('"vadd.i32 " X ", " X ", %[io]\\n\\t"', '""'),
    # the per-channel requantization: the clamp's high end left as the
    # rounding's scratch
    ('"vldrw.32 q6, [%[lh], #16]\\n\\t"', '""'),
    # and the last four channels stored over the third four
    ('MVE_DW_COL_RQ("a3", "12")', 'MVE_DW_COL_RQ("a3", "8")'),
], ids=["tap-weights", "tap-offset", "requant-clamp", "requant-store"])
def test_kernels_check_catches_a_broken_mve_depthwise_column_form(tmp_path: Any, old: str,
                                                                  new: str) -> None:
    """On the M55 the check reaches the column layers' assembly of the MVE
    depthwise form (arm_mve/dw_s8_mve.h: mve_dw_col16, the wake word's
    layers) and fails when it is wrong: copies of the crt whose taps take
    the wrong weights or leave out the input offset, or whose
    requantization clamps wrongly or stores to the wrong channels, give
    mismatches, and only in the cases the check marks as that form's
    (" dw-mve-col", then " dw-any-mve")."""
    _check_broken_form(tmp_path, "dw_s8_mve.h", old, new, "dw-any-mve", marked="dw-mve-col",
                       cases=400, folder="arm_mve", target="m55")


@pytest.mark.skipif("m55" not in TARGETS, reason="no m55 row in firmware/targets.txt")
@pytest.mark.parametrize("old,new", [
    # the second pixel's sums put in their lanes in GCC 12's vcreateq order
    ('"vmov %q[v][" HI "], %q[v][" LO "], %[d], %[e]"',
     '"vmov %q[v][" HI "], %q[v][" LO "], %[e], %[d]"'),
    # a last turn of 1-3 channels stored in all four lanes
    ("vctp32q((uint32_t)left), 0,", "vctp32q(4), 0,"),
    # a whole turn's four channels given the sums' start one channel late
    ("full ? vldrwq_s32(k) : vldrwq_z_s32(k, on);",
     "full ? vldrwq_s32(k + 1) : vldrwq_z_s32(k + 1, on);"),
    # a gathered window row's last byte left uncopied (rows not of whole vectors)
    ("vstrbq_p_s8(o, vldrbq_z_s8(x, m), m);",
     "vstrbq_p_s8(o, vldrbq_z_s8(x, m), vctp8q((uint32_t)n - 1));"),
    # the sums' start (mve_corr) with each turn's weights added twice
    ('"vaddva.s8 %[s], q0\\n\\t"', '"vaddva.s8 %[s], q0\\n\\tvaddva.s8 %[s], q0\\n\\t"'),
], ids=["lane-order", "channel-tail", "corr-lanes", "row-copy-tail", "corr-sum-tail"])
def test_kernels_check_catches_a_broken_mve_pointwise_quad(tmp_path: Any, old: str,
                                                           new: str) -> None:
    """The same for the matrix product's four channels a turn
    (mve_turns, mve_turn) and its windows' gathering (mve_copy): copies of the
    crt with its lanes, its last turn's predicate, its sums' start or the
    last byte of a gathered row broken give mismatches, only in the matrix
    product's cases."""
    _check_broken_form(tmp_path, "conv_s8_mve.h", old, new, "pw", folder="arm_mve",
                       target="m55")


@pytest.mark.skipif("m55" not in TARGETS, reason="no m55 row in firmware/targets.txt")
@pytest.mark.parametrize("old,new", [
    # a window inside: its last row of taps left as the buffer held it
    ("  for (int32_t ky = 0; ky < p->k_h; ky++, o += in->pitch, x += in->step)\n",
     "  for (int32_t ky = 1; ky < p->k_h; ky++, o += in->pitch, x += in->step)\n"),
    # a window inside: its rows gathered a byte too far apart
    ("  in->pitch = ws[0];\n", "  in->pitch = ws[0] + 1;\n"),
], ids=["inside-row", "inside-pitch"])
def test_kernels_check_catches_a_broken_mve_window_gather(tmp_path: Any, old: str,
                                                          new: str) -> None:
    """The check reaches the MVE matrix product's windows that lie inside
    the input, gathered by whole rows (arm_mve/conv_s8_mve.h: mve_window),
    and fails when they are wrong: copies of the crt that leave a row of
    such a window uncopied, or gather its rows a byte too far apart, give
    mismatches, only in the cases marked " pw-mve-inside"."""
    _check_broken_form(tmp_path, "conv_s8_mve.h", old, new, "pw", marked="pw-mve-inside",
                       folder="arm_mve", target="m55", cases=400)


def test_kernels_check_catches_a_broken_pointwise_unit_columns(tmp_path: Any) -> None:
    """The check reaches the matrix product's columns of one input pixel
    each (arm_dsp/conv_s8_dsp.h: pw_unit, its 1x1 layers) and fails when
    they are wrong: a copy of the crt whose pw_unit reads each pixel's
    input one channel late gives mismatches, and only in the cases the
    check marks as pw_unit's (" pw-unit")."""
    at = "             (ptrdiff_t)it->ox * p->stride_w * is[2],\n"
    _check_broken_form(tmp_path, "conv_s8_dsp.h", at, at.replace(" * is[2],", " * is[2] + 1,"),
                       "pw", marked="pw-unit")


def test_kernels_check_catches_a_broken_pointwise_gather(tmp_path: Any) -> None:
    """The same for the windows gathered into one run before their columns
    (pw_gather: rows of a length that is not whole words, VWW's first
    layer's 3x3x3): a copy whose gather leaves out each row's last byte
    but one gives mismatches, only in the cases marked " pw-gather"
    (about one case in forty, so 400 of them)."""
    last = "    if (k + 1 < len) g[k + 1] = x[k + 1];\n"
    _check_broken_form(tmp_path, "conv_s8_dsp.h", last, "", "pw", marked="pw-gather",
                       cases=400)


def test_kernels_check_catches_a_broken_pointwise_gather_cut(tmp_path: Any) -> None:
    """The same for the windows the padding cuts, gathered with -io in
    place of the taps outside (pw_gather_cut: KWS's first layer, 10x4
    taps of one channel, half its windows cut): a copy that leaves each
    row's last tap inside as -io gives mismatches, only in the cases
    marked " pw-gather-cut"."""
    loop = "    for (k = 0; k < n; k++) {\n"
    _check_broken_form(tmp_path, "conv_s8_dsp.h", loop, loop.replace("k < n", "k + 1 < n"),
                       "pw", marked="pw-gather-cut", cases=400)


@pytest.mark.parametrize("old,new,marked,cases", [
    # a window inside copied by rows (pw_inside): its last row one byte on
    ("ky++, x += step) o = pw_words(o, x, len);",
     "ky++, x += step) o = pw_words(o, x + (ky + 1 == p->k_h), len);", "pw-inside", 800),
    # a last partial quad taken whole (pw_sums): one tap too many, from
    # before the quad
    ("    const int sh = 8 * (4 - k);\n", "    const int sh = 8 * (3 - k);\n", "pw-tail", 120),
    # a gathered row's last word (pw_gather) placed one byte late
    ("      pw_move4(g + len - 4, x + len - 4);\n",
     "      pw_move4(g + len - 3, x + len - 4);\n", "pw-gather", 400),
    # a gathered window's zeros up to a word (pw_gathered) not zero
    ("  const uint32_t zero = 0;\n", "  const uint32_t zero = 0x01010101;\n", "", 400),
    # the padding's taps filled by words (pw_fill): a quad's second word
    # left out
    ("      __builtin_memcpy(o + 2, &vv, 4);\n", "", "", 400),
])
def test_kernels_check_catches_a_broken_pointwise_column_path(tmp_path: Any, old: str,
                                                              new: str, marked: str,
                                                              cases: int) -> None:
    """The check reaches the matrix product's faster column paths
    (arm_dsp/conv_s8_dsp.h: pw_inside, the whole last quad of pw_sums,
    pw_gather's last word, pw_gathered's zero word, pw_fill by words)
    and fails when one is wrong: each broken copy gives mismatches, only
    in the matrix product's cases, and where a form has a mark of its own
    (" pw-inside", " pw-tail", " pw-gather"), only in cases marked so."""
    _check_broken_form(tmp_path, "conv_s8_dsp.h", old, new, "pw", marked=marked, cases=cases)


@pytest.mark.skipif("m55" not in TARGETS, reason="no m55 row in firmware/targets.txt")
@pytest.mark.parametrize("old,new", [
    # a window inside the input, one pixel a pass: its last tap left out
    ("    s = mve_mla(s, mve_ld4(x + 2 * is2, g->lanes, full), g->w[3 * ky + 2]);\n", ""),
    # two pixels a pass: the second one's taps take the first one's input
    ("      b = mve_mla(b, v, w);\n", "      b = mve_mla(b, u, w);\n"),
    # a window cut by the padding: its input offset subtracted
    ("                                io),\n", "                                -io),\n"),
    # a whole group's pair (assembly): the second pixel's last column read
    # from the first's
    ('"vldrb.s32 q5, [%[c3]]\\n\\t" MVE_DW3_W(3 * K + 2)',
     '"vldrb.s32 q5, [%[c2]]\\n\\t" MVE_DW3_W(3 * K + 2)'),
    # a whole group's window without column 0 (assembly): started from the
    # sum without column 2
    ('MVE_DW3_ONE(MVE_DW3_ROW1_2, "160", 1, a);', 'MVE_DW3_ONE(MVE_DW3_ROW1_2, "176", 1, a);'),
    # a whole group's single whole window (assembly): its last row's
    # columns read a row too low
    ('MVE_DW3_STEP("c2") ROW(2, K0)', 'MVE_DW3_STEP("c2") MVE_DW3_STEP("c0") ROW(2, K0)'),
    # in place, a group of four's ring flush (assembly): each pixel's word
    # stored one byte on
    ('"str %[t], [%[o]]\\n\\t"', '"str %[t], [%[o], #1]\\n\\t"'),
    # a SAME layer's row: its last window taken as one without column 0
    ("  mve_dw3_store(o, mve_dw3_cols2_asm(g, x, is1, is2, 0), g, off, lo, hi, 1);\n",
     "  mve_dw3_store(o, mve_dw3_cols2_asm(g, x, is1, is2, 1), g, off, lo, hi, 1);\n"),
    # a whole group's window without its bottom row (assembly): started
    # from the sum without its top row
    ('MVE_DW3_EDGE("240", "256", "272", 0, 1);',
     'MVE_DW3_EDGE("192", "256", "272", 0, 1);'),
    # a whole group's corner window (rows 1 and 2, columns 1 and 2): its
    # corner tap's share of the input offset subtracted twice
    ("          g->corr, vsubq_s32(vaddq_s32(row, col[k]), g->w[6 * j + 2 * k]),\n",
     "          g->corr, vaddq_s32(row, col[k]),\n"),
    # a whole group's pair with its bottom row cut (assembly): started
    # from the sum without its top row
    ('MVE_DW3_TWO2("240", 0, 1);', 'MVE_DW3_TWO2("192", 0, 1);'),
], ids=["whole-window-tap", "pair-input", "cut-window-offset", "asm-pair-column",
        "asm-cut-start", "asm-whole-row", "ring-flush", "same-row-last", "asm-edge-start",
        "edge-corner", "asm-edge-pair-start"])
def test_kernels_check_catches_a_broken_mve_depthwise_3x3_form(tmp_path: Any, old: str,
                                                                new: str) -> None:
    """On the M55 the check reaches the MVE depthwise 3x3
    (arm_mve/dw3x3_s8_mve.h) and fails when it is wrong: copies of the crt
    whose whole windows drop a tap, whose pairs read the wrong input,
    whose cut windows subtract the input offset, whose in-place ring flush
    stores a byte off or whose SAME row takes its last window for the first
    give mismatches, and only in the cases the check counts as that form's
    ("dw-mve")."""
    _check_broken_form(tmp_path, "dw3x3_s8_mve.h", old, new, "dw3", marked="dw-mve",
                       cases=400, folder="arm_mve", target="m55")


@pytest.mark.skipif("m55" not in TARGETS, reason="no m55 row in firmware/targets.txt")
@pytest.mark.parametrize("old,new", [
    # TFLite's rounding of negative ties away from zero left out (VRSHL's
    # round half up alone)
    ("  return vrshlq_n_s32(vqaddq_s32(h, vshrq_n_s32(h, 31)), sh);\n",
     "  return vrshlq_n_s32(h, sh);\n"),
    # the tail predicate one lane too long
    ("    const mve_pred16_t p = vctp32q((uint32_t)rest);\n",
     "    const mve_pred16_t p = vctp32q((uint32_t)rest + 1);\n"),
    # a half lhs: its data moved to the right, its parameters not
    ("    a = b, b = t, l = r, r = u, ha = 0, hb = 1;\n",
     "    (void)t, l = r, r = u, ha = 0, hb = 1;\n"),
], ids=["negative-ties", "tail", "half-swap"])
def test_kernels_check_catches_a_broken_mve_add_form(tmp_path: Any, old: str,
                                                     new: str) -> None:
    """On the M55 the check reaches the MVE form of the int8 ADD
    (arm_mve/add_s8_mve.h) and fails when it is wrong: copies of the crt
    whose rounding shift rounds negative ties up, whose tail writes a lane
    past the end, or whose operands swap their data but not their
    parameters give mismatches, and only in the cases the check counts as that
    form's (" qadd-mve")."""
    _check_broken_form(tmp_path, "add_s8_mve.h", old, new, "qadd-mve", cases=200,
                       folder="arm_mve", target="m55")


def test_kernels_check_catches_a_broken_fused_pointwise_requantization(
        tmp_path: Any) -> None:
    """The check reaches the matrix product's fused assembly
    (arm_dsp/conv_s8_dsp.h: pw_pairs_fast, the sums requantized in the
    loop that makes them) and fails when it is wrong: a copy of the crt
    whose fused requantization adds 1 for the output offset's 2 * off + 1
    in pixel 1's sums gives mismatches, and only in the cases the check
    marks as that assembly's (" pw-fast")."""
    off = '"add " TN__R(sb) ", " TN__R(sb) ", " TN__R(u) "\\n\\t"'
    _check_broken_form(tmp_path, "conv_s8_dsp.h", off, off.replace('TN__R(u)', '"#1"'), "pw",
                       marked="pw-fast")


def test_kernels_check_catches_a_broken_wide_pointwise_requantization(
        tmp_path: Any) -> None:
    """The check reaches the fused assembly's 64-bit requantization
    (arm_dsp/conv_s8_dsp.h: pw_pairs_wide, the layers whose shifts go
    below -20, VWW's) and fails when it is wrong: a copy of the crt whose
    form shifts the second channel's high word by r - 1 instead of r - 2
    gives mismatches, and only in the cases the check marks as that
    form's (" pw-wide")."""
    r2 = '"sub " TN__R(b1) ", " TN__R(b1) ", #1\\n\\t"'
    _check_broken_form(tmp_path, "conv_s8_dsp.h", r2, "", "pw", marked="pw-wide")


def test_kernels_check_catches_a_broken_wide_depthwise_requantization(
        tmp_path: Any) -> None:
    """The check reaches the depthwise 3x3 form's requantization of
    shifts below -20 (arm_dsp/dw3x3_s8_dsp.h: dw3_group, dw3_q) and fails
    when it is wrong: a copy of the crt that takes r - 1 as 0 for those
    shifts gives mismatches, and only in the cases the check marks as
    having such a group (" dw3-wide")."""
    rr = "sh <= -1 && sh >= -31 ? -sh - 1 : 0;"
    _check_broken_form(tmp_path, "dw3x3_s8_dsp.h", rr, rr.replace("-31", "-20"), "dw3",
                       marked="dw3-wide")


def test_kernels_check_catches_a_broken_folded_dense_form(tmp_path: Any) -> None:
    """The check reaches the dense layer's loop for input offset 0
    (arm_dsp/dense_s8_dsp.h: rows4_x8, what a FoldInputOffset'ed layer
    takes) and fails when it is wrong: a copy of the crt whose loop takes
    the input's even bytes for its odd ones gives mismatches, and only in
    dense cases."""
    # the line after the third load: the packed loop (p4_x16) unpacks its
    # input with the same instruction
    odd = ('[%[w], %[sn]]\\n\\t"                   \\\n'
           '  "sxtb16 %[xb], %[xa], ror #8\\n\\t"')
    _check_broken_form(tmp_path, "dense_s8_dsp.h", odd, odd.replace(", ror #8", ""),
                       "dense", kind=True)


def test_kernels_check_catches_a_broken_packed_dense_form(tmp_path: Any) -> None:
    """The check reaches the dense layer's loop for weights packed N4K4
    (arm_dsp/dense_s8_dsp.h: p4_x16 and p4_x4, what PackDenseWeights gives
    "cortex-m") and fails when it is wrong: a copy of the crt whose loop
    reads each group's fourth row from the third row's word gives
    mismatches, only in dense cases, and only in those the check marks as
    that loop's (" p4")."""
    fourth = '"ldr %[t0], [%[w], #" wo12 "]\\n\\t"'
    _check_broken_form(tmp_path, "dense_s8_dsp.h", fourth, fourth.replace("wo12", "wo8"),
                       "dense", kind=True, marked="p4")


def test_kernels_check_catches_a_broken_per_tensor_dense_requantization(
        tmp_path: Any) -> None:
    """The same for the dense requantization's loop of a per-tensor layer
    with a bias and no activation (AD's layers): its outputs one too
    high give mismatches, and only in dense cases."""
    store = "      out[n] = (int8_t)tn__crt_requant_s8("
    _check_broken_form(tmp_path, "dense_s8_dsp.h", store,
                       store.replace("(int8_t)tn", "(int8_t)1 + tn"), "dense", kind=True)


def test_kernels_check_catches_a_broken_dense_requantization(tmp_path: Any) -> None:
    """The check reaches the dense layer's DSP requantization
    (arm_dsp/dense_s8_dsp.h, dense_rq_block) and fails when it is wrong:
    a copy of the crt whose outputs there are one too high gives
    mismatches, and only in dense cases."""
    _check_broken_form(tmp_path, "dense_s8_dsp.h", "    out[n] = (int8_t)r;\n",
                       "    out[n] = (int8_t)(r + 1);\n", "dense", kind=True)


@pytest.mark.parametrize("target", TARGETS)
def test_int8_models_use_the_dsp_kernels(tmp_path: Any, objects: str, prepared: Any,
                                         target: str) -> None:
    """Keyword spotting at -O2 takes fewer than 5 instructions a
    multiply-accumulate (the portable C took 9; the Cortex-M DSP forms
    about 3): the firmware compiles the DSP kernels."""
    archive, info, inputs, ref = prepared("kws_ref_model.tflite", "kws")
    res = fw.build_and_run(archive, "kws", inputs, str(tmp_path / "fw"), opt="-O2",
                           cache=objects, target=target)
    np.testing.assert_array_equal(_device_outputs(res, info)[0], ref[0])
    assert res["instructions"] < 5 * int(info["macs"]), (res["instructions"], info["macs"])


def test_cycle_estimate_and_per_operator_profile(tmp_path: Any, objects: str,
                                                 prepared: Any) -> None:
    """run.py --cycles: the qemu plugin's count of the timed inference
    agrees with SysTick's (within its tick), every instruction is named by
    the disassembly and priced (at least one cycle each, and loads and
    taken branches more), and the per-operator table lists the model's
    operators in the order they ran, summing to the whole."""
    archive, info, inputs, _ = prepared("kws_ref_model.tflite", "kws")
    wd = str(tmp_path / "fw")
    res = fw.build_and_run(archive, "kws", inputs, wd, cache=objects)
    est = fw.profile(res["elf"], wd)
    assert abs(est["instructions"] - res["instructions"]) <= fw.get_target().instructions_per_tick
    assert est["unknown_instructions"] == 0
    assert est["cycles"] > est["instructions"] + est["taken_branches"]
    assert sum(c["instructions"] for c in est["classes"].values()) == est["instructions"]
    ops = [r for r in est["operators"] if r["operator"].startswith("tvmgen_kws_op")]
    assert [r["operator"].split("_")[2] for r in ops] == ["op%d" % i for i in range(len(ops))]
    assert len(ops) >= 10 and "conv2d" in ops[0]["operator"]
    assert sum(r["cycles"] for r in est["operators"]) == est["cycles"]
    assert sum(r["instructions"] for r in ops) > 0.99 * est["instructions"]
    assert "tvmgen_kws_op0" in est["table"]


@pytest.mark.skipif("m55" not in TARGETS, reason="no m55 row in firmware/targets.txt")
def test_instruction_profile_on_a_core_without_a_timing_table(tmp_path: Any, objects: str,
                                                              prepared: Any) -> None:
    """run.py --profile counts the inference per operator and function on a
    core the cycle table does not describe (the M55): no cycles anywhere in
    it, its count agrees with SysTick's (within two ticks), the operators come in the order they
    ran and, with the code outside them, add up to the whole; --cycles and
    --profile together are refused."""
    archive, info, inputs, _ = prepared("ad01_int8.tflite", "ad")
    wd = str(tmp_path / "fw")
    p = subprocess.run([sys.executable, RUNNER, archive, "ad"] + inputs
                       + ["--target", "m55", "--opt=-O2", "--profile", "--cache", objects,
                          "--workdir", wd], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    res = json.loads(p.stdout)
    prof = res["profile"]
    assert "cycles" not in prof
    assert not any("cycles" in r for r in prof["operators"] + prof["functions"])
    # SysTick's figure is whole ticks at both ends: within two of them
    assert abs(prof["instructions"] - res["instructions"]) <= \
        2 * fw.get_target("m55").instructions_per_tick
    assert sum(prof["classes"].values()) == prof["instructions"]
    assert sum(r["instructions"] for r in prof["operators"]) == prof["instructions"]
    ops = [r for r in prof["operators"] if r["operator"].startswith("tvmgen_ad_op")]
    assert [r["operator"].split("_")[2] for r in ops] == ["op%d" % i for i in range(len(ops))]
    assert len(ops) >= 5 and any("dense" in r["operator"] for r in ops)
    counts = [r["instructions"] for r in prof["functions"]]
    assert counts == sorted(counts, reverse=True)
    assert "counted, not priced" in p.stderr and "tvmgen_ad_op0" in p.stderr
    both = subprocess.run([sys.executable, RUNNER, archive, "ad", "--cycles", "--profile"],
                          capture_output=True, text=True, timeout=60)
    assert both.returncode != 0 and "give one of --cycles, --profile" in both.stderr


def _ram(res: Dict[str, Any]) -> int:
    """The device RAM the report compares with TFLM's (BENCHMARKS.md):
    .data + .bss (pools, I/O buffers, harness) + the timed run's stack."""
    return int(res["size"]["data"] + res["size"]["bss"] + res["run_stack_bytes"])


@pytest.mark.parametrize("fname,name", [("kws_ref_model.tflite", "kws"),
                                        ("ad01_int8.tflite", "ad")], ids=["kws", "ad"])
def test_io_in_pool_model_matches_host_with_less_ram(tmp_path: Any, objects: str,
                                                     prepared: Any, fname: str,
                                                     name: str) -> None:
    """An --io-in-pool archive on the board: the harness declares no input
    or output buffer, writes the input into the pool and reads the output
    from it at the places tvmgen_<name>_map_inputs/outputs give. The
    outputs are the host executor's, the bad calls that still apply return
    their codes (the inputs struct is no argument any more), and the
    device's RAM is smaller than the same model's with its own I/O
    buffers, by no more than those buffers (the pool may grow by what of
    the I/O does not fit where activations are dead)."""
    archive, info, inputs, ref = prepared(fname, name)
    mod = frontend.load_model(_model(fname))
    arch = codegen.compile(mod, name=name, target="cortex-m", io_in_pool=True)
    io_archive = arch.export(str(tmp_path / "mlf"))
    io_info = arch.info
    del arch, mod
    assert io_info["interface"]["io_in_pool"] is True
    io = fw.build_and_run(io_archive, name, inputs, str(tmp_path / "io"), cache=objects,
                          bad_calls=True)
    assert io["ok"] is True
    for got, want in zip(_device_outputs(io, io_info), ref):
        np.testing.assert_array_equal(got, want)
    assert set(io["bad_calls"]) >= {"misaligned_pool", "pool_too_small", "good_instance"}
    assert "null_input" not in io["bad_calls"] and "null_inputs_struct" not in io["bad_calls"]
    assert all(c["status"] == c["expected"] for c in io["bad_calls"].values())
    _check_report(io, io_info, DEFAULT)
    # built the same way (the bad calls add their own statics to .bss)
    plain = fw.build_and_run(archive, name, inputs, str(tmp_path / "plain"), cache=objects,
                             bad_calls=True)
    # the harness's own I/O buffers (main.c's in_<name>, out_<name>) are
    # in the plain firmware only
    buffers = ["in_" + t["name"] for t in info["inputs"]] + [
        "out_" + t["name"] for t in info["outputs"]]

    def symbols(elf: str) -> List[str]:
        return subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True,
                              check=True).stdout.split()
    assert set(buffers) <= set(symbols(plain["elf"]))
    assert not set(buffers) & set(symbols(io["elf"]))
    assert plain["outputs"] == io["outputs"]
    align = int(info["interface"]["alignment"])
    io_bytes = sum(-(-int(t["size_bytes"]) // align) * align
                   for t in info["inputs"] + info["outputs"])
    saved = plain["size"]["bss"] - io["size"]["bss"]
    # (+ one alignment: where the linker places the other statics moves)
    assert 0 < saved <= io_bytes + align, (saved, io_bytes)
    assert _ram(io) < _ram(plain), (_ram(io), _ram(plain))
    print("\n%s RAM: %d B with I/O in the pool, %d B without (%d B of I/O buffers)"
          % (name, _ram(io), _ram(plain), io_bytes))


def test_model_behind_the_uart(tmp_path: Any, objects: str, prepared: Any) -> None:
    """KWS behind the emulated board's UART (issue 31): the firmware
    firmware/common/session_uart.c (the crt's device session over its
    link) built for the archive, driven by go/serve/device's Session in
    TestQemuModelSession: the device's outputs for the input are the host
    executor's, a timed request answers its repeats, refused requests come
    back as errors, and requests with a flipped or a dropped byte are sent
    again and answered; and in TestQemuDeviceServe the same through
    tvmnode-serve's --device (go/serve)."""
    go = os.environ.get("GO") or next(
        (p for p in ("/usr/local/go/bin/go", "/usr/bin/go") if os.path.exists(p)), None)
    build = os.environ.get("TVMNODE_BUILD_DIR") or os.path.join(ROOT, "build")
    if go is None:
        pytest.skip("no Go toolchain (./dev installs it)")
    if not os.path.exists(os.path.join(build, "tvmnode.pc")):
        pytest.skip("no C build tree at %s (TVMNODE_BUILD_DIR) for the Go test" % build)
    archive, info, inputs, ref = prepared("kws_ref_model.tflite", "kws")
    res = fw.build(archive, "kws", inputs, str(tmp_path / "session"), cache=objects,
                   harness="session_uart.c")
    assert not fw.allocators_in(res["elf"])
    case = {"elf": res["elf"], "model": "kws",
            "inputs": [base64.b64encode(np.load(p).tobytes()).decode() for p in inputs],
            "outputs": [base64.b64encode(r.tobytes()).decode() for r in ref]}
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case))
    env = dict(os.environ, TVMNODE_SESSION_CASE=str(path),
               PATH=os.path.dirname(go) + os.pathsep + os.environ.get("PATH", ""))
    cmd = ('. "%s/go/tools.sh" "%s" && cd "%s/go/serve" && '
           'go test -count=1 -v -run "^(TestQemuModelSession|TestQemuDeviceServe)$" . ./device/'
           % (ROOT, build, ROOT))
    run = subprocess.run(["bash", "-c", cmd], env=env, capture_output=True, text=True,
                         timeout=300)
    print(run.stdout[-3000:])
    # (both packages' output: a failure in the first is above the second's)
    assert run.returncode == 0, run.stdout[-12000:] + run.stderr[-3000:]
    for test in ("TestQemuModelSession", "TestQemuDeviceServe"):
        assert "--- PASS: " + test in run.stdout, run.stdout[-3000:]


def _symbols(elf: str) -> List[str]:
    out = subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True,
                         check=True).stdout
    return [line.split()[-1] for line in out.splitlines() if line.split()]


def _has(syms: List[str], fn: str) -> bool:
    """fn is among the symbols (gcc may suffix a clone)."""
    return any(x == fn or x.startswith(fn + ".") for x in syms)


def _forms_builds(tmp_path: Any, objects: str, prepared: Any, key: str, forms: int
                  ) -> Tuple[str, Dict[str, Any], List[str], List[str], Dict[str, Any]]:
    """KWS's archive, whose metadata names `forms` under `key`, built with
    them (its outputs the host's, the define in its flags) and with every
    form: (archive, its report, its symbols, every form's symbols, the
    inputs and the size of every form's build)."""
    archive, info, inputs, ref = prepared("kws_ref_model.tflite", "kws")
    assert info["interface"][key] == forms, hex(info["interface"][key])
    res = fw.build_and_run(archive, "kws", inputs, str(tmp_path / "sel"), cache=objects)
    define = "-DTN_CRT_%s=" % key.upper()
    assert define + "%d" % forms in res["flags"]
    for got, want in zip(_device_outputs(res, info), ref):
        np.testing.assert_array_equal(got, want)
    full = fw.build(archive, "kws", inputs, str(tmp_path / "all"), cache=objects,
                    all_forms=True)
    assert not any(f.startswith(define) for f in full["flags"])
    assert res["size"]["text"] < full["size"]["text"]
    return archive, res, _symbols(res["elf"]), _symbols(full["elf"]), {"inputs": inputs}


def _refused(tmp_path: Any, archive: str, define: str, match: str) -> None:
    """The archive's generated C does not compile against a crt built with
    `define`: the #error names the layer."""
    os.makedirs(str(tmp_path / "bad"), exist_ok=True)
    flags = fw.target_flags(fw.get_target(fw.DEFAULT_TARGET), "-Os")
    with pytest.raises(fw.FirmwareError, match=match):
        fw._compile_all(fw._c_files(os.path.join(archive, "codegen", "host", "src")),
                        flags + [define],
                        [os.path.join(archive, "codegen", "host", "include"),
                         os.path.join(archive, "runtime", "include")],
                        str(tmp_path / "bad"), None)


def test_firmware_links_only_the_convolution_forms_its_layers_take(
        tmp_path: Any, objects: str, prepared: Any) -> None:
    """KWS's archive names the forms its layers take (metadata's
    conv_s8_forms: the fast matrix product, fused, and the depthwise 3x3
    form, not the blocks); its firmware, built with them (directly and through CMake),
    gives the host's outputs and links no wide or plain matrix product
    loop (pw_pairs_wide, pw_pairs) and no blocks, which the build of every form
    (--all-forms) still has; a crt that leaves out a form a layer takes
    fails the model's build, naming the layer."""
    forms = 0x02 | 0x10 | 0x40
    archive, res, sel, every, more = _forms_builds(tmp_path, objects, prepared,
                                                   "conv_s8_forms", forms)
    for fn in ("pw_pairs_wide", "pw_pairs", "conv_blocks"):
        assert _has(every, fn) and not _has(sel, fn), fn
    for fn in ("pw_pairs_fast", "dw3_rows"):
        assert _has(every, fn) and _has(sel, fn), fn
    if shutil.which("cmake"):  # the archive's CMakeLists.txt, given the same set
        cm = fw.build_cmake(archive, "kws", more["inputs"], str(tmp_path / "cmake"))
        assert not _has(_symbols(cm["elf"]), "pw_pairs_wide")
        assert cm["size"]["text"] == res["size"]["text"]
    # the depthwise 3x3 form left out: the generated C refuses to build
    _refused(tmp_path, archive, "-DTN_CRT_CONV_S8_FORMS=%d" % (forms & ~0x40),
             r"op\d+_conv2d_s8.*takes the convolution forms 0x40")


def test_firmware_links_only_the_dense_forms_its_layers_take(
        tmp_path: Any, objects: str, prepared: Any) -> None:
    """KWS's dense layer takes N4K4's DSP form alone (metadata's
    dense_s8_forms); its firmware, built with it, gives the host's outputs
    and links neither the [N, K] loops (dot4, dot1) nor the packed 1x1
    convolution's entry, nor the loops of the convolutions in place a row
    or a chunk at a time, which KWS's layers do not take (conv_lines,
    conv_pixels), all of which the build of every form has; a crt that
    leaves the DSP form out fails the model's build, naming the layer."""
    archive, res, sel, every, _ = _forms_builds(tmp_path, objects, prepared,
                                                "dense_s8_forms", 0x04)
    for fn in ("dot4", "dot1", "tn_crt_conv2d_s8_packed", "conv_lines", "conv_pixels"):
        assert _has(every, fn) and not _has(sel, fn), fn
    assert _has(every, "dot_p4") and _has(sel, "dot_p4")
    _refused(tmp_path, archive, "-DTN_CRT_DENSE_S8_FORMS=1",
             r"op\d+_dense_s8.*takes the dense forms 0x04")


VWW = os.path.join(os.environ.get("TFLM_SOURCES", os.path.join(ROOT, "..", "tflm-sources")),
                   "mlcommons-tiny", "benchmark", "training", "visual_wake_words",
                   "trained_models", "vww_96_int8.tflite")


def test_depthwise_layers_beyond_the_fast_rows_name_them_in_their_forms(
        tmp_path: Any) -> None:
    """VWW's depthwise 3x3 layers include groups the fast rows do not take
    (shifts below -20), so its archive's conv_s8_forms names
    TN_CRT_CONV_FORM_DW3_ANY (0x200) beside DW3, which KWS's does not
    (test_firmware_links_only_the_convolution_forms_its_layers_take); a crt
    that leaves DW3_ANY out fails VWW's build, naming a layer."""
    if not os.path.exists(VWW):
        pytest.skip("no %s" % VWW)
    arch = codegen.compile(frontend.load_model(VWW), name="vww", target="cortex-m")
    forms = arch.info["interface"]["conv_s8_forms"]
    assert forms & 0x240 == 0x240, hex(forms)
    archive = arch.export(str(tmp_path / "mlf"))
    _refused(tmp_path, archive, "-DTN_CRT_CONV_S8_FORMS=%d" % (forms & ~0x200),
             r"op\d+_conv2d_s8.*takes the convolution forms 0x[23][0-9a-f]{2}")


@pytest.mark.parametrize("fname,name,bit,most", [
    ("pretrainedResnet_quant.tflite", "ic", 0x80, 35 * 1024), (VWW, "vww", 0x100, 46 * 1024)])
def test_cortex_m_plan_runs_layers_in_place_where_ram_counts(
        tmp_path: Any, objects: str, fname: str, name: str, bit: int, most: int) -> None:
    """The Cortex-M plan runs IC's 3x3 convolutions in place by rows and
    VWW's widening pointwise layers in place by chunks (the forms' bits
    LINES 0x80 and CHUNKS 0x100), which the host's plan does not: its pool
    is under a bound the host plan's exceeds, no two buffers alive at one
    step overlap, and the device's outputs are the host executor's (whose
    plan has none of these), byte for byte."""
    path = fname if os.path.isabs(fname) else os.path.join(MODELS, fname)
    if not os.path.exists(path):
        pytest.skip("no %s" % path)
    mod = frontend.load_model(path)
    arch = codegen.compile(mod, name=name, target="cortex-m")
    host = codegen.compile(mod, name=name)
    ops = arch.info["memory"]["functions"]["operator_functions"]
    hops = host.info["memory"]["functions"]["operator_functions"]
    assert arch.info["interface"]["conv_s8_forms"] & bit
    assert sum(v[0]["in_place"] for v in ops.values()) > sum(
        v[0]["in_place"] for v in hops.values())
    assert arch.workspace_bytes <= most < host.workspace_bytes, (arch.workspace_bytes,
                                                                 host.workspace_bytes)
    bufs = [b for b in arch.plan["buffers"] if b["size"] > 0]
    for i, a in enumerate(bufs):
        for b in bufs[i + 1:]:
            if a["first"] <= b["last"] and b["first"] <= a["last"]:
                assert (a["offset"] + a["size"] <= b["offset"]
                        or b["offset"] + b["size"] <= a["offset"]), (a, b)
    out = arch.export(str(tmp_path / "mlf"))
    info = arch.info
    xs, paths = _inputs(info, str(tmp_path))
    outs = runtime.Executor(host.module)(*xs)
    want = [np.array(o, copy=True) for o in (outs if isinstance(outs, tuple) else (outs,))]
    del outs, arch, host, mod
    res = fw.build_and_run(out, name, paths, str(tmp_path / "fw"), cache=objects)
    for got, w in zip(_device_outputs(res, info), want):
        np.testing.assert_array_equal(got, w)
