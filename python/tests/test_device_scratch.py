"""The kernels' scratch planned for the target's ISA: each bundled int8 model
compiled for "cortex-m" gives every convolution the scratch its DSP forms
take (tn_crt_conv2d_s8_scratch_size_isa for TN_CRT_ISA_ARM_DSP), as the
generated call passes it and the metadata reports it; compiled for the host,
the portable sizes. The sizing function is evaluated by a host program built
from the archive itself (its generated C in one translation unit, so that
the static parameter structs are in reach, and its crt), so the test reads
the sizes the device's crt computes from the parameters the device gets.
The device's stack and outputs are test_firmware_device.py's."""
from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
from typing import Any, Dict, List, Tuple

import pytest

from tvmnode import codegen, frontend

MODELS = os.environ.get("TVMNODE_MODELS", os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
        __file__))))), "shared", "models"))
INT8 = [("kws_ref_model.tflite", "kws"), ("ad01_int8.tflite", "ad"),
        ("str_ww_ref_model.tflite", "ww"), ("pretrainedResnet_quant.tflite", "ic")]

CC = shutil.which(os.environ.get("CC", "cc")) or ""

# an operator function and the parameters and scratch size of its crt call
CALL = re.compile(r"int32_t (tvmgen_\w+_op\d+_conv2d_s8)\(const void \*const \*in, void \*out, "
                  r"void \*scratch\) \{\n  return tn_crt_call_conv2d_s8\(&(tvmgen_\w+_params\d+), "
                  r"in, out, scratch, (\d+)\);")


def _archive(tmp_path: Any, fname: str, name: str, target: str,
             **kw: Any) -> Tuple[str, Dict[str, Any]]:
    path = os.path.join(MODELS, fname)
    if not os.path.exists(path):
        pytest.skip("no %s" % path)
    arch = codegen.compile(frontend.load_model(path), name=name, target=target, **kw)
    d = arch.export(str(tmp_path / ("%s-%d" % (target, len(kw)))))
    with open(os.path.join(d, "metadata.json")) as f:
        return d, json.load(f)["modules"][name]


def _convs(d: str) -> List[Tuple[str, str, int]]:
    text = "".join(open(p).read() for p in
                   sorted(glob.glob(os.path.join(d, "codegen", "host", "src", "*.c"))))
    return CALL.findall(text)


def _sizes(tmp_path: Any, d: str, calls: List[Tuple[str, str, int]],
           in_place: List[bool]) -> List[List[int]]:
    """tn_crt_conv2d_s8_scratch_size_isa(ARM DSP) of each call's parameters,
    then the smaller ones of tn_crt_conv2d_s8_scratch_less_isa, from a host
    program made of the archive's own sources."""
    gen = sorted(glob.glob(os.path.join(d, "codegen", "host", "src", "*.c")))
    main = tmp_path / "sizes.c"
    lines = ["#include <stdio.h>"] + ['#include "%s"' % g for g in gen]
    lines.append("int main(void) {")
    lines.append("  size_t less[TN_CRT_SCRATCH_LESS_MAX];")
    for (_, params, _), ip in zip(calls, in_place):
        lines.append('  printf("%%zu", tn_crt_conv2d_s8_scratch_size_isa(&%s.g, &%s.q, '
                     'TN_CRT_ISA_ARM_DSP, %d));' % (params, params, int(ip)))
        lines.append('  for (int32_t i = 0, n = tn_crt_conv2d_s8_scratch_less_isa(&%s.g, &%s.q, '
                     'TN_CRT_ISA_ARM_DSP, %d, less, NULL); i < n; i++) printf(" %%zu", less[i]);'
                     % (params, params, int(ip)))
        lines.append('  printf("\\n");')
    lines.append("  return 0;\n}\n")
    main.write_text("\n".join(lines))
    exe = str(tmp_path / "sizes")
    r = subprocess.run([CC, "-std=c11", str(main),
                        *glob.glob(os.path.join(d, "runtime", "src", "*.c")),
                        "-I" + os.path.join(d, "codegen", "host", "include"),
                        "-I" + os.path.join(d, "runtime", "include"), "-o", exe, "-lm"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    return [[int(x) for x in line.split()] for line in out.splitlines()]


@pytest.mark.skipif(not CC, reason="no C compiler")
@pytest.mark.parametrize("fname,name", INT8, ids=[n for _, n in INT8])
def test_cortex_m_plan_gives_convolutions_their_dsp_scratch(tmp_path: Any, fname: str,
                                                            name: str) -> None:
    d, mod = _archive(tmp_path, fname, name, "cortex-m")
    assert mod["interface"]["scratch_isa"] == "arm_dsp"
    ops = mod["memory"]["functions"]
    calls = _convs(d)
    if name == "ad":  # fully connected layers alone
        assert calls == []
        return
    assert calls, "no convolution call found in the generated C"
    op = {k: v[0] for k, v in ops["operator_functions"].items()}
    in_place = [bool(op[fn]["in_place"]) for fn, _, _ in calls]
    sizes = _sizes(tmp_path, d, calls, in_place)
    for (fn, _, passed), (w, *less) in zip(calls, sizes):
        # what the kernel asks (or, where the plan gave a layer at the
        # pool's peak a smaller scratch, one of those) is what the call
        # passes and the plan reports
        assert int(passed) in [w] + less, (fn, passed, w, less)
        assert int(passed) == op[fn]["workspace_size_bytes"], (fn, passed)
        assert w > 0, fn  # every layer of these takes a DSP form
    # the scratch is inside the pool: the plan's workspace holds the largest
    assert ops["main"][0]["workspace_size_bytes"] >= max(int(p) for _, _, p in calls)
    # shrink_scratch=False: every layer its fastest scratch, in a pool at
    # least as large
    fd, fmod = _archive(tmp_path, fname, name, "cortex-m", shrink_scratch=False)
    fops = fmod["memory"]["functions"]
    fcalls = _convs(fd)
    fsizes = _sizes(tmp_path, fd, fcalls, [bool(fops["operator_functions"][fn][0]["in_place"])
                                           for fn, _, _ in fcalls])
    assert [int(p) for _, _, p in fcalls] == [w for w, *_ in fsizes]
    assert fops["main"][0]["workspace_size_bytes"] >= ops["main"][0]["workspace_size_bytes"]
    if name == "ww":  # its peak holds a scratch: a smaller one shrinks the pool
        assert fops["main"][0]["workspace_size_bytes"] > ops["main"][0]["workspace_size_bytes"]

    # for the host, the portable sizes: none out of place
    hd, hmod = _archive(tmp_path, fname, name, "host")
    assert hmod["interface"]["scratch_isa"] == "portable"
    hop = {k: v[0] for k, v in hmod["memory"]["functions"]["operator_functions"].items()}
    for fn, _, passed in _convs(hd):
        assert int(passed) == hop[fn]["workspace_size_bytes"]
        if not hop[fn]["in_place"]:
            assert int(passed) == 0, fn


def test_isa_option_is_checked() -> None:
    path = os.path.join(MODELS, "ad01_int8.tflite")
    if not os.path.exists(path):
        pytest.skip("no %s" % path)
    mod = frontend.load_model(path)
    with pytest.raises(ValueError, match="option 'isa': expected 'portable' or 'arm_dsp', "
                                         "got 'avx9'"):
        codegen.get_global_func("codegen.AOT")(mod, {"name": "m", "isa": "avx9"})
