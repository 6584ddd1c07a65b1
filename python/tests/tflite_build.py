"""Build small .tflite flatbuffers in tests: one operator, its tensors,
constant buffers, per-tensor or per-channel quantization and builtin
options, written with the `flatbuffers` builder and the functions the
`tflite` package generates from TFLite's schema (tflite.ModelStart,
tflite.OperatorAddInputs, ...). The bytes load in TFLite Micro
(tflite_micro.python.tflite_micro.runtime.Interpreter.from_bytes) and in
the importers, so a test can run one operator through both and compare.

    from tflite_build import TensorSpec, single_op_model, builtin_options

    model = single_op_model(
        "MEAN",
        inputs=[TensorSpec((1, 4, 4, 8), "int8", quant=(0.05, -3)),
                TensorSpec((2,), "int32", data=np.array([1, 2], "int32"))],
        outputs=[TensorSpec((1, 1, 1, 8), "int8", quant=(0.02, 5))],
        options=builtin_options("ReducerOptions", keepDims=True))

An input without `data` is a graph input (in order), one with `data` a
constant; None in `inputs` is an omitted optional input (index -1). The
`tflite`, `flatbuffers` and `numpy` packages are needed (a test should
`pytest.importorskip("tflite")` first); they are reached through
importlib, so this module type-checks without their stubs.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

tflite: Any = importlib.import_module("tflite")
flatbuffers: Any = importlib.import_module("flatbuffers")

# A (scale(s), zero point(s)) pair: one of each (per tensor) or equal-length
# sequences (per channel, along TensorSpec.quantized_dimension).
Quant = Tuple[Union[float, Sequence[float]], Union[int, Sequence[int]]]
# (BuiltinOptions type, fn(builder) -> offset of the options table)
Options = Tuple[int, Callable[[Any], int]]

_DTYPES: Dict[str, str] = {
    "float32": "FLOAT32", "float16": "FLOAT16", "float64": "FLOAT64",
    "int8": "INT8", "uint8": "UINT8", "int16": "INT16", "uint16": "UINT16",
    "int32": "INT32", "uint32": "UINT32", "int64": "INT64", "bool": "BOOL",
}


@dataclass
class TensorSpec:
    """One tensor of the model: its shape and numpy dtype name; `quant`
    for a quantized tensor; `data` (converted to `dtype`) for a constant."""

    shape: Sequence[int]
    dtype: str
    quant: Optional[Quant] = None
    data: Optional[np.ndarray] = None
    quantized_dimension: int = 0
    name: str = ""


def tensor_type(dtype: str) -> int:
    """The schema's TensorType for a numpy dtype name."""
    if dtype not in _DTYPES:
        raise ValueError("no TFLite tensor type for dtype %r" % dtype)
    return int(getattr(tflite.TensorType, _DTYPES[dtype]))


def opcode_of(op: Union[int, str]) -> int:
    """A BuiltinOperator from its value or name ("MEAN", "STRIDED_SLICE")."""
    if isinstance(op, str):
        return int(getattr(tflite.BuiltinOperator, op))
    return int(op)


def builtin_options(table: str, **fields: Any) -> Options:
    """Options for `table` (a schema table name, also its BuiltinOptions
    member, e.g. "ReducerOptions") with its fields given by their schema
    names: builtin_options("StridedSliceOptions", beginMask=1, offset=False)
    calls tflite.StridedSliceOptionsAddBeginMask and so on."""
    kind = int(getattr(tflite.BuiltinOptions, table))
    adders = []
    for name, value in fields.items():
        fn = getattr(tflite, "%sAdd%s" % (table, name[:1].upper() + name[1:]), None)
        if fn is None:
            raise ValueError("%s has no field %r" % (table, name))
        adders.append((fn, value))

    def build(b: Any) -> int:
        getattr(tflite, table + "Start")(b)
        for fn, value in adders:
            fn(b, value)
        return int(getattr(tflite, table + "End")(b))

    return kind, build


def _ints(b: Any, values: Sequence[int]) -> int:
    return int(b.CreateNumpyVector(np.asarray(values, dtype=np.int32)))


def _bytes(b: Any, data: bytes) -> int:
    # 16-byte aligned, as TFLite's own writer aligns buffers
    b.StartVector(1, len(data), 16)
    b.head = b.head - len(data)
    b.Bytes[b.head:b.head + len(data)] = data
    return int(b.EndVector())


def _quantization(b: Any, spec: TensorSpec) -> int:
    assert spec.quant is not None
    scales = np.atleast_1d(np.asarray(spec.quant[0], dtype=np.float32))
    zps = np.atleast_1d(np.asarray(spec.quant[1], dtype=np.int64))
    if scales.shape != zps.shape:
        raise ValueError("%d scales but %d zero points" % (scales.size, zps.size))
    sv = b.CreateNumpyVector(scales)
    zv = b.CreateNumpyVector(zps)
    tflite.QuantizationParametersStart(b)
    tflite.QuantizationParametersAddScale(b, sv)
    tflite.QuantizationParametersAddZeroPoint(b, zv)
    tflite.QuantizationParametersAddQuantizedDimension(b, spec.quantized_dimension)
    return int(tflite.QuantizationParametersEnd(b))


def _table_vector(b: Any, start: Callable[[Any, int], Any], items: List[int]) -> int:
    start(b, len(items))
    for off in reversed(items):
        b.PrependUOffsetTRelative(off)
    return int(b.EndVector())


def single_op_model(op: Union[int, str], inputs: Sequence[Optional[TensorSpec]],
                    outputs: Sequence[TensorSpec], options: Optional[Options] = None,
                    version: int = 1) -> bytes:
    """A model of one subgraph running one builtin operator `op` on
    `inputs` (graph inputs and constants, None for an omitted optional
    input) into `outputs`. `options` from builtin_options (or any
    (BuiltinOptions type, build function) pair)."""
    return graph_model([OpSpec(op, inputs, outputs, options, version)], outputs)


@dataclass
class OpSpec:
    """One operator of graph_model: its builtin (value or name), its input
    and output tensors (None for an omitted optional input) and options."""

    op: Union[int, str]
    inputs: Sequence[Optional[TensorSpec]]
    outputs: Sequence[TensorSpec]
    options: Optional[Options] = None
    version: int = 1


def graph_model(ops: Sequence[OpSpec], outputs: Sequence[TensorSpec]) -> bytes:
    """A model of one subgraph running `ops` in order. Tensors are the
    TensorSpec objects themselves: one an operator writes is read by the
    later ones that list it; one without data that no operator writes is a
    graph input (in order of first use); `outputs` are the graph's."""
    b = flatbuffers.Builder(1024)
    specs: List[TensorSpec] = []
    index: Dict[int, int] = {}
    for o in ops:
        for s in list(o.inputs) + list(o.outputs):
            if s is not None and id(s) not in index:
                index[id(s)] = len(specs)
                specs.append(s)
    written = {id(s) for o in ops for s in o.outputs}
    # buffer 0 is the empty buffer every non-constant tensor points at
    buffer_data: List[Optional[bytes]] = [None]
    tensor_offsets: List[int] = []
    for i, s in enumerate(specs):
        buf = 0
        if s.data is not None:
            arr = np.ascontiguousarray(np.asarray(s.data, dtype=s.dtype).reshape(tuple(s.shape)))
            buffer_data.append(arr.astype(arr.dtype.newbyteorder("<")).tobytes())
            buf = len(buffer_data) - 1
        name = b.CreateString(s.name or "t%d" % i)
        shape = _ints(b, s.shape)
        q = _quantization(b, s) if s.quant is not None else None
        tflite.TensorStart(b)
        tflite.TensorAddShape(b, shape)
        tflite.TensorAddType(b, tensor_type(s.dtype))
        tflite.TensorAddBuffer(b, buf)
        tflite.TensorAddName(b, name)
        if q is not None:
            tflite.TensorAddQuantization(b, q)
        tensor_offsets.append(int(tflite.TensorEnd(b)))
    graph_inputs = [index[id(s)] for s in specs if s.data is None and id(s) not in written]

    codes: List[Tuple[int, int]] = []
    operators = []
    for o in ops:
        key = (opcode_of(o.op), o.version)
        if key not in codes:
            codes.append(key)
        opts = o.options[1](b) if o.options is not None else None
        in_vec = _ints(b, [index[id(s)] if s is not None else -1 for s in o.inputs])
        out_vec = _ints(b, [index[id(s)] for s in o.outputs])
        tflite.OperatorStart(b)
        tflite.OperatorAddOpcodeIndex(b, codes.index(key))
        tflite.OperatorAddInputs(b, in_vec)
        tflite.OperatorAddOutputs(b, out_vec)
        if o.options is not None:
            tflite.OperatorAddBuiltinOptionsType(b, o.options[0])
            tflite.OperatorAddBuiltinOptions(b, opts)
        operators.append(int(tflite.OperatorEnd(b)))

    tensors = _table_vector(b, tflite.SubGraphStartTensorsVector, tensor_offsets)
    g_in, g_out = _ints(b, graph_inputs), _ints(b, [index[id(s)] for s in outputs])
    op_vec = _table_vector(b, tflite.SubGraphStartOperatorsVector, operators)
    sg_name = b.CreateString("main")
    tflite.SubGraphStart(b)
    tflite.SubGraphAddTensors(b, tensors)
    tflite.SubGraphAddInputs(b, g_in)
    tflite.SubGraphAddOutputs(b, g_out)
    tflite.SubGraphAddOperators(b, op_vec)
    tflite.SubGraphAddName(b, sg_name)
    subgraph = int(tflite.SubGraphEnd(b))

    code_offsets = []
    for code, version in codes:
        tflite.OperatorCodeStart(b)
        # codes above 127 live in builtin_code; the deprecated byte says so
        tflite.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, 127))
        tflite.OperatorCodeAddBuiltinCode(b, code)
        tflite.OperatorCodeAddVersion(b, version)
        code_offsets.append(int(tflite.OperatorCodeEnd(b)))

    buffers = []
    for data in buffer_data:
        dv = _bytes(b, data) if data else None
        tflite.BufferStart(b)
        if dv is not None:
            tflite.BufferAddData(b, dv)
        buffers.append(int(tflite.BufferEnd(b)))

    code_vec = _table_vector(b, tflite.ModelStartOperatorCodesVector, code_offsets)
    subgraphs = _table_vector(b, tflite.ModelStartSubgraphsVector, [subgraph])
    buffer_vec = _table_vector(b, tflite.ModelStartBuffersVector, buffers)
    desc = b.CreateString("tvmnode tests: one operator" if len(ops) == 1
                          else "tvmnode tests: %d operators" % len(ops))
    tflite.ModelStart(b)
    tflite.ModelAddVersion(b, 3)
    tflite.ModelAddOperatorCodes(b, code_vec)
    tflite.ModelAddSubgraphs(b, subgraphs)
    tflite.ModelAddDescription(b, desc)
    tflite.ModelAddBuffers(b, buffer_vec)
    b.Finish(tflite.ModelEnd(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def run_tflite_micro(model: bytes, *arrays: np.ndarray, outputs: int = 1) -> List[np.ndarray]:
    """Run `model` once in TFLite Micro's interpreter (the tflite-micro
    package) on the graph inputs in order; its first `outputs` outputs,
    copied out of the interpreter's arena."""
    runtime: Any = importlib.import_module("tflite_micro.python.tflite_micro.runtime")
    interp = runtime.Interpreter.from_bytes(model)
    for i, a in enumerate(arrays):
        interp.set_input(a, i)
    interp.invoke()
    return [np.array(interp.get_output(i), copy=True) for i in range(outputs)]
