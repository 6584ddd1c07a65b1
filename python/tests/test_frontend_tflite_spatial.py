"""The spatial and normalising TFLite operators, one operator per model
(built with tflite_build), against TFLite Micro run on the same bytes:
integer outputs identical on every element, float32 within 1e-5 of the
output's range; each through the executor unfused and after FuseOps
(test_frontend_tflite_ops.check)."""
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tflite")
pytest.importorskip("tflite_micro")

from test_frontend_tflite_ops import _error, check, const, f32, fl, i8, q8  # noqa: E402
from tflite_build import TensorSpec, builtin_options, single_op_model  # noqa: E402

RNG = np.random.default_rng(4242)

# (align_corners, half_pixel_centers): every combination TFLite accepts
FLAGS = [(False, False), (True, False), (False, True)]
# (input h, w) -> (output h, w): up, down, mixed and to one pixel
SIZES = [((3, 4), (7, 9)), ((8, 6), (3, 4)), ((5, 5), (5, 10)), ((4, 3), (1, 1))]


def resize_model(kind: str, spec: Any, hw: Any, out_hw: Any, align: bool, half: bool,
                 channels: int = 3) -> bytes:
    table = "ResizeBilinearOptions" if kind == "RESIZE_BILINEAR" else \
        "ResizeNearestNeighborOptions"
    opts = builtin_options(table, alignCorners=align, halfPixelCenters=half)
    size = const(np.array(out_hw, np.int32))
    return single_op_model(kind, [spec((2, hw[0], hw[1], channels)), size],
                           [spec((2, out_hw[0], out_hw[1], channels))], opts)


def i16spec(shape: Any) -> TensorSpec:
    return TensorSpec(shape, "int16", quant=(0.001, 0))


@pytest.mark.parametrize("kind", ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
@pytest.mark.parametrize("align,half", FLAGS)
@pytest.mark.parametrize("hw,out_hw", SIZES)
def test_resize_int8(kind: str, align: bool, half: bool, hw: Any, out_hw: Any) -> None:
    model = resize_model(kind, lambda s: q8(s, 0.05, -3), hw, out_hw, align, half)
    check(model, i8(2, hw[0], hw[1], 3))


@pytest.mark.parametrize("kind", ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
@pytest.mark.parametrize("align,half", FLAGS)
@pytest.mark.parametrize("hw,out_hw", SIZES)
def test_resize_float(kind: str, align: bool, half: bool, hw: Any, out_hw: Any) -> None:
    model = resize_model(kind, f32, hw, out_hw, align, half)
    check(model, fl(2, hw[0], hw[1], 3))


@pytest.mark.parametrize("align,half", FLAGS)
def test_resize_nearest_int16(align: bool, half: bool) -> None:
    model = resize_model("RESIZE_NEAREST_NEIGHBOR", i16spec, (3, 5), (7, 4), align, half, 2)
    check(model, RNG.integers(-32768, 32768, (2, 3, 5, 2), dtype=np.int16))


def test_resize_refusals_are_named() -> None:
    model = resize_model("RESIZE_BILINEAR", i16spec, (3, 5), (7, 4), False, False)
    msg = _error(model)
    assert "RESIZE_BILINEAR" in msg and "int16" in msg
    model = resize_model("RESIZE_BILINEAR", f32, (3, 5), (7, 4), True, True)
    assert "align_corners and half_pixel_centers" in _error(model, unsupported=False)
