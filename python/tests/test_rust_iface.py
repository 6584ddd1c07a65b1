"""The Embedded Rust interface, tvmgen_<name>.rs (docs/embedded-rust.md).

`compile(..., interface="c,rust")` writes it beside the C header. Checked
here: every interface variant, element type and awkward name gives a module
that builds as part of a #![no_std] library without warnings (2021 and 2024
editions; for the host and, when the target is installed, a Cortex-M4) and
that rustfmt leaves alone; its constants, struct fields and run parameters
are the header's; the misuses its types rule out are compile errors with
the expected codes. Then the example crate rust-sys/examples/embedded runs
the keyword-spotting model in five variants on the host (cargo test), as
Cortex-M4 firmware under qemu, and in wasm32 under node, every variant
giving the output of the generated C run; and tvmnode-sys builds for
thumbv7em-none-eabihf, as a no_std crate should. A missing toolchain skips
its test and says which. Cargo builds go to $TVMNODE_RUSTEMB_DIR (default
build-rustemb/ at the top of the repository), so only the first run
compiles the `cc` crate; the first run ever fetches it from crates.io.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile
from typing import Any, Dict, List, Optional

import numpy as np
import pytest

from tvmnode import cli, codegen, frontend, ir
from tvmnode.ir import op

from aot_util import HostModel
from conftest import live

REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE = os.path.join(REPO, "rust-sys", "examples", "embedded")
FIRMWARE = os.path.join(REPO, "firmware")
# a source tree may be read-only (make distcheck): then a temporary folder
TARGET_DIR = os.environ.get("TVMNODE_RUSTEMB_DIR") or (
    os.path.join(REPO, "build-rustemb") if os.access(REPO, os.W_OK)
    else os.path.join(tempfile.gettempdir(), "tvmnode-rustemb"))
MODELS = os.environ.get("TVMNODE_MODELS", os.path.normpath(
    os.path.join(REPO, "..", "shared", "models")))
KWS = os.path.join(MODELS, "kws_ref_model.tflite")
M4 = "thumbv7em-none-eabihf"
WASM = "wasm32-unknown-unknown"
QEMU = ["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-monitor", "none",
        "-semihosting-config", "enable=on,target=native", "-icount", "shift=0"]


# ---- tools --------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def rust_target(target: str) -> bool:
    """Whether rustc has the standard library for `target`."""
    if shutil.which("rustc") is None:
        return False
    root = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True,
                          text=True).stdout.strip()
    return os.path.isdir(os.path.join(root, "lib", "rustlib", target, "lib"))


def need(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip("%s not installed" % ", ".join(missing))


def need_target(target: str) -> None:
    need("rustc")
    if not rust_target(target):
        pytest.skip("the Rust target %s is not installed (rustup target add %s)"
                    % (target, target))


def succeeded(p: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert p.returncode == 0, "%s failed (%d):\n%s\n%s" % (
        " ".join(p.args), p.returncode, p.stdout[-3000:], p.stderr[-6000:])
    return p


def run(cmd: List[str], timeout: int = 900, **kw: Any) -> subprocess.CompletedProcess:
    return succeeded(subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw))


OFFLINE = ("failed to download", "Unable to update registry", "failed to query replaced source",
           "Couldn't resolve host", "failed to get `cc`")


def cargo(args: List[str], archives: str, timeout: int = 900) -> subprocess.CompletedProcess:
    """cargo in the example crate; a skip when it cannot fetch the `cc`
    crate (no network and nothing cached)."""
    env = dict(os.environ, TVMGEN_ARCHIVES=archives, CARGO_TARGET_DIR=TARGET_DIR,
               CARGO_TERM_COLOR="never", TVMGEN_FIRMWARE_DIR=FIRMWARE)
    p = subprocess.run(["cargo"] + args, capture_output=True, text=True, timeout=timeout,
                       cwd=EXAMPLE, env=env)
    if p.returncode != 0 and any(w in p.stderr for w in OFFLINE):
        pytest.skip("cargo cannot fetch the cc crate from crates.io: %s" % p.stderr[-300:])
    return succeeded(p)


def rustc_lib(src: str, out: str, edition: str = "2021",
              target: Optional[str] = None) -> subprocess.CompletedProcess:
    """Type-check `src` as a library (no code generated): the result, run
    or not."""
    cmd = ["rustc", "--edition", edition, "--crate-type", "lib", "--emit=metadata",
           "-o", out, src]
    if target:
        cmd += ["--target", target]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def model(path: str) -> Any:
    if not os.path.exists(path):
        pytest.skip("model %s not found" % path)
    return frontend.load_model(path)


# ---- models beyond the bundled ones ---------------------------------------------------

def awkward_model() -> Any:
    """Inputs named like Rust keywords, three outputs, two element types."""
    a = ir.var("type", shape=(1, 8), dtype="float32")
    b = ir.var("self", shape=(1, 8), dtype="float32")
    c = ir.var("In", shape=(2, 3), dtype="int32")
    body = ir.Tuple([op.add(a, b), op.nn.relu(a), op.add(c, c)])
    return ir.IRModule.from_expr(ir.Function([a, b, c], body))


def wide_model() -> Any:
    """Nine inputs (a constructor longer than a line) summed."""
    xs = [ir.var("x%d" % i, shape=(4,), dtype="float32") for i in range(9)]
    y: Any = xs[0]
    for x in xs[1:]:
        y = op.add(y, x)
    return ir.IRModule.from_expr(ir.Function(xs, y))


def dtypes_model() -> Any:
    """Every element type the crt names, passed through (no pool at all)."""
    dts = ["uint8", "int16", "int64", "float64", "bool", "int8", "float32", "int32"]
    xs = [ir.var("x_" + d, shape=(2, 3), dtype=d) for d in dts]
    return ir.IRModule.from_expr(ir.Function(xs, ir.Tuple([op.reshape(x, (3, 2)) for x in xs])))


TWO_POOLS = [{"name": "sram", "limit": 4096}, {"name": "dram", "limit": 0}]
VARIANTS: Dict[str, Any] = {
    "plain": (KWS, {}),
    "io": (KWS, {"io_in_pool": True}),
    "cp": (KWS, {"constants_in_pool": True}),
    "two": (KWS, {"pools": TWO_POOLS}),
    "dev": (KWS, {"devices": {"npu": ["qnn.conv2d"]}}),
    "all": (KWS, {"io_in_pool": True, "constants_in_pool": True, "pools": TWO_POOLS,
                  "devices": {"npu": ["qnn.conv2d"], "dsp": ["nn.avg_pool2d", "qnn.dense"]}}),
    "align64": (KWS, {"alignment": 64, "io_in_pool": True}),
    "float": (os.path.join(MODELS, "kws_ref_model_float32.tflite"), {}),
    "awkward": (awkward_model, {"io_in_pool": True}),
    "awkward_plain": (awkward_model, {}),
    "wide": (wide_model, {}),
    "dtypes": (dtypes_model, {}),
}


def compile_variant(key: str) -> codegen.Archive:
    src, opts = VARIANTS[key]
    mod = src() if callable(src) else model(src)
    return codegen.compile(mod, name="m_" + key, interface="c,rust", **opts)


# ---- the module as text ----------------------------------------------------------------

def defines(header: str) -> Dict[str, int]:
    return {k: int(v) for k, v in re.findall(r"#define (\w+) (\d+)\n", header)}


def c_fields(header: str, struct: str) -> List[str]:
    m = re.search(r"struct %s \{\n(.*?)\};" % struct, header, re.S)
    assert m, struct
    return re.findall(r"void \*(\w+);", m.group(1))


def rs_fields(rs: str, struct: str) -> List[str]:
    m = re.search(r"pub struct %s(?:<'\w>)? \{\n(.*?)\n\}" % struct, rs, re.S)
    assert m, struct
    fields = re.findall(r"^\s+(?:pub )?(?:r#)?(\w+): \*mut c_void,", m.group(1), re.M)
    return [f[:-1] if f in ("self_", "crate_", "super_") else f for f in fields]


def test_the_interface_option_writes_the_module(tmp_path: Any) -> None:
    mod = model(KWS)
    c_only = codegen.compile(mod, name="kws")
    both = codegen.compile(mod, name="kws", interface="c,rust")
    assert not any(p.endswith(".rs") for p in c_only.files)
    assert "codegen/host/src/tvmgen_kws.rs" in both.files
    assert both.info["interface"]["api"] == ["c", "rust"]
    out = str(tmp_path / "kws")
    assert cli.main(["compile", KWS, "--name", "kws", "-o", out, "--interface", "c,rust"]) == 0
    with open(os.path.join(out, "codegen", "host", "src", "tvmgen_kws.rs")) as f:
        assert f.read() == both.files["codegen/host/src/tvmgen_kws.rs"]
    with pytest.raises(ValueError, match="not one of c, rust"):
        codegen.compile(mod, name="kws", interface="c,go")


@pytest.mark.parametrize("key", sorted(VARIANTS))
def test_the_module_says_what_the_header_says(key: str) -> None:
    arch = compile_variant(key)
    m = arch.name
    rs = arch.files["codegen/host/src/tvmgen_%s.rs" % m]
    h = arch.files["codegen/host/include/tvmgen_%s.h" % m]
    info, M = arch.info, m.upper()
    consts = {k: int(v) for k, v in re.findall(r"pub const (\w+): usize = (\d+);", rs)}
    hd = defines(h)
    for kind, ts in (("INPUT", info["inputs"]), ("OUTPUT", info["outputs"])):
        for t in ts:
            up = t["name"].upper()
            assert consts["%s_%s_SIZE" % (kind, up)] == hd["TVMGEN_%s_%s_SIZE" % (M, up)] \
                == t["size_bytes"]
            n = int(np.prod(t["shape"]))
            assert consts["%s_%s_LEN" % (kind, up)] == n
            if info["interface"]["io_in_pool"]:
                assert consts["%s_%s_OFFSET" % (kind, up)] == t["offset"]
    assert consts["ALIGNMENT"] == hd["TVMGEN_%s_ALIGNMENT" % M] == info["interface"]["alignment"]
    assert "#[repr(C, align(%d))]" % info["interface"]["alignment"] in rs
    pools = [k[len("TVMGEN_%s_" % M):-len("_WORKSPACE_POOL_SIZE")] for k in hd
             if k.endswith("_WORKSPACE_POOL_SIZE")]
    for p in pools:
        want = hd["TVMGEN_%s_%s_WORKSPACE_POOL_SIZE" % (M, p)]
        assert consts["%s_WORKSPACE_POOL_SIZE" % p] == want
    if len(pools) == 1:
        assert "pub const WORKSPACE_POOL_SIZE: usize = %s_WORKSPACE_POOL_SIZE;" % pools[0] in rs
    if info["interface"]["constants_in_pool"]:
        assert consts["CONSTANT_POOL_SIZE"] == hd["TVMGEN_%s_CONSTANT_POOL_SIZE" % M]
        assert "macro_rules! constant_pool_data" in rs
    # the structs: one pointer a field, in the header's order
    structs = {"workspace_pools": "WorkspacePools", "devices": "Devices"}
    if not info["interface"]["io_in_pool"]:
        structs.update(inputs="Inputs", outputs="Outputs")
    for c, r in structs.items():
        if "struct tvmgen_%s_%s {" % (m, c) in h:
            assert rs_fields(rs, r) == c_fields(h, "tvmgen_%s_%s" % (m, c)), c
            assert "#[repr(C)]\npub struct %s" % r in rs
        else:
            assert "pub struct %s" % r not in rs
    # run: the header's parameters, in its order, and the crt's statuses
    c_run = re.search(r"int32_t tvmgen_%s_run\((.*?)\);" % m, h)
    rs_run = re.search(r"pub fn tvmgen_%s_run\((.*?)\) -> i32;" % m, rs, re.S)
    assert c_run and rs_run
    c_params = re.findall(r"\*(\w+)", c_run.group(1))
    assert c_params == re.findall(r"(\w+): \*mut", rs_run.group(1))
    assert re.findall(r"\bError::(\w+) => (\d+),", rs)[-1] == ("WriteFailed", "18")
    for word in ("std::", "alloc::", "extern crate"):
        assert word not in rs


def test_every_variant_builds_no_std_without_warnings(tmp_path: Any) -> None:
    need("rustc")
    lib = ["#![no_std]", "#![deny(warnings)]"]
    files = []
    for key in sorted(VARIANTS):
        arch = compile_variant(key)
        path = str(tmp_path / ("tvmgen_m_%s.rs" % key))
        with open(path, "w") as f:
            f.write(arch.files["codegen/host/src/tvmgen_m_%s.rs" % key])
        files.append(path)
        lib.append("#[path = %s]\npub mod m_%s;" % (json.dumps(path), key))
        del arch
    src = str(tmp_path / "lib.rs")
    with open(src, "w") as f:
        f.write("\n".join(lib) + "\n")
    targets: List[Optional[str]] = [None] + ([M4] if rust_target(M4) else [])
    for edition in ("2021", "2024"):
        for target in targets if edition == "2021" else [None]:
            p = rustc_lib(src, str(tmp_path / "out.rmeta"), edition, target)
            assert p.returncode == 0, "edition %s, target %s:\n%s" % (
                edition, target or "host", p.stderr[-8000:])
    if shutil.which("rustfmt"):
        p = subprocess.run(["rustfmt", "--edition", "2021", "--check"] + files,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-2000:]


# ---- the example crate ------------------------------------------------------------------

def _make_archives() -> Any:
    spec = importlib.util.spec_from_file_location(
        "make_archives", os.path.join(EXAMPLE, "make_archives.py"))
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def archives(tmp_path_factory: Any) -> str:
    """The example's archives (kws in five variants), input.bin and
    expected.bin, which is checked here to be the generated C's output.
    Returns the directory; keeps no tvmnode object."""
    if not os.path.exists(KWS):
        pytest.skip("model %s not found" % KWS)
    before = live()
    out = str(tmp_path_factory.mktemp("rustemb"))
    made = _make_archives().make(out, KWS)
    arch = codegen.compile(frontend.load_model(KWS), name="kws")
    hm = HostModel(arch, str(tmp_path_factory.mktemp("crun")))
    got = hm.run(made["input"])[0]
    np.testing.assert_array_equal(got.reshape(-1), made["expected"].reshape(-1))
    del hm, arch, made
    assert live() == before
    return out


def expected_hex(archives: str) -> str:
    with open(os.path.join(archives, "expected.bin"), "rb") as f:
        return f.read().hex()


COMPILE_ERRORS = {
    # what the types rule out, and the error rustc must give
    "a buffer one element short":
        ("let mut x = [0i8; 489]; let _ = tvmgen_kws::Inputs::new(&mut x);", "E0308"),
    "a buffer of another element type":
        ("let mut x = [0u8; 490]; let _ = tvmgen_kws::Inputs::new(&mut x);", "E0308"),
    "an output too large":
        ("let mut y = [0i8; 13]; let _ = tvmgen_kws::Outputs::new(&mut y);", "E0308"),
    "a plain byte array as a pool":
        ("let mut p = [0u8; tvmgen_kws::WORKSPACE_POOL_SIZE];"
         " let _ = tvmgen_kws::WorkspacePools::new(&mut p);", "E0308"),
    "a pool too small":
        ("let mut p = tvmgen_kws::Pool::<100>::new();"
         " let _ = tvmgen_kws::WorkspacePools::new(&mut p);", "E0308"),
    "a byte array too small":
        ("let mut p = [0u8; 100]; let _ = tvmgen_kws::WorkspacePools::from_bytes(&mut p);",
         "E0308"),
    "another model's structs":
        ("let (mut x, mut y) = ([0i8; 490], [0i8; 12]);"
         " let mut s = tvmgen_kws_2p::SramWorkspacePool::new();"
         " let mut d = tvmgen_kws_2p::DramWorkspacePool::new();"
         " let mut i = tvmgen_kws_2p::Inputs::new(&mut x);"
         " let mut o = tvmgen_kws_2p::Outputs::new(&mut y);"
         " let mut p = tvmgen_kws_2p::WorkspacePools::new(&mut s, &mut d);"
         " let _ = tvmgen_kws::run(&mut i, &mut o, &mut p);", "E0308"),
    "a device handle outside unsafe":
        ("let _ = tvmgen_kws_dev::Devices::new(core::ptr::null_mut());", "E0133"),
    "a buffer touched while the model holds it":
        ("let mut x = [0i8; 490]; let i = tvmgen_kws::Inputs::new(&mut x);"
         " x[0] = 1; drop(i);", "E0506"),
    "a view alive across a run":
        ("let mut p = tvmgen_kws_io::WorkspacePool::new();"
         " let mut ps = tvmgen_kws_io::WorkspacePools::new(&mut p);"
         " let v = ps.map_inputs(); let _ = tvmgen_kws_io::run(&mut ps); v.input_1[0] = 1;",
         "E0499"),
    "input and output views at once (they may share bytes)":
        ("let mut p = tvmgen_kws_io::WorkspacePool::new();"
         " let mut ps = tvmgen_kws_io::WorkspacePools::new(&mut p);"
         " let i = ps.map_inputs(); let o = ps.map_outputs(); i.input_1[0] = o.identity[0];",
         "E0499"),
    "the io-in-pool run given buffers":
        ("let mut p = tvmgen_kws_io::WorkspacePool::new();"
         " let mut ps = tvmgen_kws_io::WorkspacePools::new(&mut p);"
         " let mut x = [0i8; 490]; let _ = tvmgen_kws_io::run(&mut x, &mut ps);", "E0061"),
}
GOOD = ("let (mut x, mut y) = ([0i8; 490], [0i8; 12]);"
        " let mut p = tvmgen_kws::WorkspacePool::new();"
        " let mut i = tvmgen_kws::Inputs::new(&mut x);"
        " let mut o = tvmgen_kws::Outputs::new(&mut y);"
        " let mut ps = tvmgen_kws::WorkspacePools::new(&mut p);"
        " let _ = tvmgen_kws::run(&mut i, &mut o, &mut ps);"
        " let mut q = tvmgen_kws_io::WorkspacePool::new();"
        " let mut qs = tvmgen_kws_io::WorkspacePools::new(&mut q);"
        " qs.map_inputs().input_1[0] = 1; let _ = tvmgen_kws_io::run(&mut qs);"
        " let _ = qs.map_outputs().identity[0];"
        " let mut npu = 0u8;"
        " let _ = unsafe { tvmgen_kws_dev::Devices::new(&mut npu as *mut u8 as *mut _) };")


def test_misuse_is_a_compile_error(archives: str, tmp_path: Any) -> None:
    need("rustc")
    mods = "".join("#[path = %s]\npub mod tvmgen_%s;\n" % (json.dumps(
        os.path.join(archives, n, "codegen", "host", "src", "tvmgen_%s.rs" % n)), n)
        for n in ("kws", "kws_io", "kws_2p", "kws_dev"))
    for what, (body, code) in [("the right use", (GOOD, None))] + sorted(COMPILE_ERRORS.items()):
        src = str(tmp_path / "lib.rs")
        with open(src, "w") as f:
            f.write("#![no_std]\n%s\npub fn case() {\n    %s\n}\n" % (mods, body))
        p = rustc_lib(src, str(tmp_path / "out.rmeta"))
        if code is None:
            assert p.returncode == 0, p.stderr[-4000:]
        else:
            assert p.returncode != 0, "%s compiled" % what
            assert "error[%s]" % code in p.stderr, "%s:\n%s" % (what, p.stderr[-3000:])


def test_the_example_runs_on_the_host(archives: str) -> None:
    need("cargo")
    out = cargo(["test", "--locked"], archives).stdout
    assert re.search(r"test result: ok\. 7 passed", out), out[-3000:]
    got = cargo(["run", "--locked", "-q"], archives).stdout
    assert "output identity %s\n" % expected_hex(archives) in got
    assert "checks 7 passed\n" in got and got.endswith("done 0\n"), got


def test_the_example_runs_on_a_cortex_m4_under_qemu(archives: str) -> None:
    need_target(M4)
    need("cargo", "arm-none-eabi-gcc", "arm-none-eabi-nm", "arm-none-eabi-size", QEMU[0])
    if not os.path.exists(os.path.join(FIRMWARE, "m4", "mps2_an386.ld")):
        pytest.skip("the firmware harness (firmware/common, firmware/m4) is not there")
    cargo(["build", "--locked", "--release", "--target", M4], archives)
    elf = os.path.join(TARGET_DIR, M4, "release", "tvmgen-embedded")
    syms = run(["arm-none-eabi-nm", elf]).stdout.split()
    assert not {"malloc", "free", "calloc", "realloc"} & set(syms), "an allocator in the link"
    p = subprocess.run(QEMU + ["-kernel", elf], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, text=True, timeout=120)
    lines = p.stdout.replace("\r", "")
    assert p.returncode == 0, lines
    assert "run status 0\n" in lines and "checks 7 passed\n" in lines, lines
    assert "output identity %s\n" % expected_hex(archives) in lines, lines
    assert lines.endswith("done 0\n"), lines
    n = re.search(r"instructions (\d+)", lines)
    assert n and 1_000_000 < int(n.group(1)) < 200_000_000, lines
    size = run(["arm-none-eabi-size", elf]).stdout
    print(lines + size)


def test_the_example_runs_in_wasm32_under_node(archives: str) -> None:
    need_target(WASM)
    need("cargo", "clang", "llvm-ar", "node")
    cargo(["rustc", "--locked", "--release", "--lib", "--crate-type", "cdylib",
           "--target", WASM], archives)
    wasm = os.path.join(TARGET_DIR, WASM, "release", "tvmgen_embedded.wasm")
    p = run(["node", os.path.join(EXAMPLE, "run_wasm.mjs"), wasm], timeout=120)
    assert p.stdout.startswith("wasm: 7 checks passed"), p.stdout
    print(p.stdout)


def test_tvmnode_sys_builds_for_a_bare_metal_target() -> None:
    """tvmnode-sys is #![no_std]: it builds for a Cortex-M4, where its
    build script links nothing (there is no libtvmnode to link)."""
    need_target(M4)
    need("cargo")
    env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(TARGET_DIR, "sys"),
               CARGO_TERM_COLOR="never")
    env.pop("TVMNODE_BUILD_DIR", None)
    run(["cargo", "build", "--locked", "-p", "tvmnode-sys", "--target", M4],
        cwd=os.path.join(REPO, "rust-sys"), env=env)
