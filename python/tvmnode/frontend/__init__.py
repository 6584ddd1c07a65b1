"""tvmnode.frontend: trained models in, IRModules out.

    mod = tvmnode.frontend.from_tflite("model.tflite")
    mod = tvmnode.frontend.from_onnx("model.onnx")

Each importer reads the file with the format's own package (`tflite`,
`onnx`), checks every operator before building anything, and returns a
typed, well-formed module whose attributes "inputs" and "outputs" describe
the model's tensors (names, shapes, dtypes, quantization).
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from .common import DynamicShapeWarning, ModelImportError, UnsupportedOperatorError, model_io


def from_tflite(model: Any) -> Any:
    """See tvmnode.frontend.tflite.from_tflite."""
    from .tflite import from_tflite as f

    return f(model)


def from_onnx(model: Any, *args: Any, **kwargs: Any) -> Any:
    """See tvmnode.frontend.onnx.from_onnx."""
    from .onnx import from_onnx as f

    return f(model, *args, **kwargs)


def load_model(path: str, shape: Optional[Mapping[str, Sequence[int]]] = None,
               values: Optional[Mapping[str, Any]] = None) -> Any:
    """Import a model file by its extension (.tflite, .onnx). `shape`
    ({input name: shape}) fixes an ONNX model's dynamic input shapes and
    `values` ({input name: value}) makes its inputs constants (see
    from_onnx); TFLite models declare their shapes."""
    low = path.lower()
    if low.endswith(".tflite"):
        if shape or values:
            what = "input shapes (--shape)" if shape else "input values (--value)"
            raise ModelImportError("load_model: %s apply to ONNX models only; '%s' is a TFLite "
                                   "model, whose shapes are fixed" % (what, path))
        return from_tflite(path)
    if low.endswith(".onnx"):
        return from_onnx(path, shape=dict(shape) if shape else None,
                         values=dict(values) if values else None)
    raise ModelImportError("load_model: '%s' is neither .tflite nor .onnx" % path)


__all__ = ["DynamicShapeWarning", "ModelImportError", "UnsupportedOperatorError", "from_onnx", "from_tflite", "load_model", "model_io"]
