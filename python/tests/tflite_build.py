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

import dataclasses
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
    "resource": "RESOURCE",
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
    is_variable: bool = False
    # a sparse constant: `data` holds the stored values (flat) and this
    # their layout, {"traversal_order": [...], "block_map": [...], "dims":
    # [("dense", size) or ("csr", segments, indices), one per level]}
    sparsity: Optional[Dict[str, Any]] = None


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


def _int32_vector(b: Any, values: Sequence[int]) -> int:
    """An Int32Vector table (a SparseIndexVector union member)."""
    vec = _ints(b, values)
    tflite.Int32VectorStart(b)
    tflite.Int32VectorAddValues(b, vec)
    return int(tflite.Int32VectorEnd(b))


def _sparsity(b: Any, sp: Dict[str, Any]) -> int:
    dims = []
    for d in sp["dims"]:
        if d[0] == "dense":
            tflite.DimensionMetadataStart(b)
            tflite.DimensionMetadataAddFormat(b, 0)
            tflite.DimensionMetadataAddDenseSize(b, int(d[1]))
        else:
            segs, ids = _int32_vector(b, d[1]), _int32_vector(b, d[2])
            tflite.DimensionMetadataStart(b)
            tflite.DimensionMetadataAddFormat(b, 1)
            tflite.DimensionMetadataAddArraySegmentsType(b, 1)
            tflite.DimensionMetadataAddArraySegments(b, segs)
            tflite.DimensionMetadataAddArrayIndicesType(b, 1)
            tflite.DimensionMetadataAddArrayIndices(b, ids)
        dims.append(int(tflite.DimensionMetadataEnd(b)))
    tflite.SparsityParametersStartDimMetadataVector(b, len(dims))
    for off in reversed(dims):
        b.PrependUOffsetTRelative(off)
    dim_vec = b.EndVector()
    order, bmap = _ints(b, sp["traversal_order"]), _ints(b, sp.get("block_map", []))
    tflite.SparsityParametersStart(b)
    tflite.SparsityParametersAddTraversalOrder(b, order)
    tflite.SparsityParametersAddBlockMap(b, bmap)
    tflite.SparsityParametersAddDimMetadata(b, dim_vec)
    return int(tflite.SparsityParametersEnd(b))


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
    specs = [s for s in inputs if s is not None] + list(outputs)
    index = {id(s): i for i, s in enumerate(specs)}
    tensors = [s if s.name else TensorSpec(s.shape, s.dtype, s.quant, s.data,
                                           s.quantized_dimension, "t%d" % i, s.is_variable)
               for i, s in enumerate(specs)]
    op_inputs = [index[id(s)] if s is not None else -1 for s in inputs]
    op_outputs = [index[id(s)] for s in outputs]
    graph_inputs = [index[id(s)] for s in inputs if s is not None and s.data is None]
    graph = GraphSpec(tensors, graph_inputs, op_outputs,
                      [OpSpec(op, op_inputs, op_outputs, options, version)], name="main")
    return graph_model([graph], description="tvmnode tests: one operator")


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


@dataclass
class OpSpec:
    """One operator of a GraphSpec: tensor indices into the graph's
    `tensors` (-1 for an omitted optional input)."""

    op: Union[int, str]
    inputs: Sequence[int]
    outputs: Sequence[int]
    options: Optional[Options] = None
    version: int = 1


@dataclass
class GraphSpec:
    """One subgraph: its tensors (a constant when `data` is set; dtype
    "resource" for a resource handle), graph inputs and outputs (tensor
    indices) and operators in execution order."""

    tensors: Sequence[TensorSpec]
    inputs: Sequence[int]
    outputs: Sequence[int]
    ops: Sequence[OpSpec]
    name: str = ""


def graph_model(subgraphs: Sequence[GraphSpec], description: str = "tvmnode tests") -> bytes:
    """A model of several subgraphs (the first is the one that runs; the
    others are reached by CALL_ONCE, IF, WHILE ...), each with any number
    of operators: what single_op_model writes, generalised."""
    b = flatbuffers.Builder(1024)
    buffer_data: List[Optional[bytes]] = [None]
    codes: List[Tuple[int, int]] = []  # (builtin code, version), in first-use order
    sg_offsets = []
    for gi, g in enumerate(subgraphs):
        tensor_offsets: List[int] = []
        for i, s in enumerate(g.tensors):
            buf = 0
            if s.data is not None:
                arr = np.ascontiguousarray(np.asarray(s.data, dtype=s.dtype).reshape(
                    -1 if s.sparsity is not None else tuple(s.shape)))
                buffer_data.append(arr.astype(arr.dtype.newbyteorder("<")).tobytes())
                buf = len(buffer_data) - 1
            name = b.CreateString(s.name or "g%dt%d" % (gi, i))
            shape = _ints(b, s.shape)
            q = _quantization(b, s) if s.quant is not None else None
            sp = _sparsity(b, s.sparsity) if s.sparsity is not None else None
            tflite.TensorStart(b)
            tflite.TensorAddShape(b, shape)
            tflite.TensorAddType(b, tensor_type(s.dtype))
            tflite.TensorAddBuffer(b, buf)
            tflite.TensorAddName(b, name)
            if s.is_variable:
                tflite.TensorAddIsVariable(b, True)
            if q is not None:
                tflite.TensorAddQuantization(b, q)
            if sp is not None:
                tflite.TensorAddSparsity(b, sp)
            tensor_offsets.append(int(tflite.TensorEnd(b)))
        op_offsets = []
        for o in g.ops:
            key = (opcode_of(o.op), o.version)
            if key not in codes:
                codes.append(key)
            opts = o.options[1](b) if o.options is not None else None
            in_vec, out_vec = _ints(b, o.inputs), _ints(b, o.outputs)
            tflite.OperatorStart(b)
            tflite.OperatorAddOpcodeIndex(b, codes.index(key))
            tflite.OperatorAddInputs(b, in_vec)
            tflite.OperatorAddOutputs(b, out_vec)
            if o.options is not None:
                tflite.OperatorAddBuiltinOptionsType(b, o.options[0])
                tflite.OperatorAddBuiltinOptions(b, opts)
            op_offsets.append(int(tflite.OperatorEnd(b)))
        tensors = _table_vector(b, tflite.SubGraphStartTensorsVector, tensor_offsets)
        g_in, g_out = _ints(b, g.inputs), _ints(b, g.outputs)
        operators = _table_vector(b, tflite.SubGraphStartOperatorsVector, op_offsets)
        sg_name = b.CreateString(g.name or "subgraph%d" % gi)
        tflite.SubGraphStart(b)
        tflite.SubGraphAddTensors(b, tensors)
        tflite.SubGraphAddInputs(b, g_in)
        tflite.SubGraphAddOutputs(b, g_out)
        tflite.SubGraphAddOperators(b, operators)
        tflite.SubGraphAddName(b, sg_name)
        sg_offsets.append(int(tflite.SubGraphEnd(b)))
    code_offsets = []
    for code, version in codes:
        tflite.OperatorCodeStart(b)
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
    subgraph_vec = _table_vector(b, tflite.ModelStartSubgraphsVector, sg_offsets)
    buffer_vec = _table_vector(b, tflite.ModelStartBuffersVector, buffers)
    desc = b.CreateString(description)
    tflite.ModelStart(b)
    tflite.ModelAddVersion(b, 3)
    tflite.ModelAddOperatorCodes(b, code_vec)
    tflite.ModelAddSubgraphs(b, subgraph_vec)
    tflite.ModelAddDescription(b, desc)
    tflite.ModelAddBuffers(b, buffer_vec)
    b.Finish(tflite.ModelEnd(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def var_handle_options(shared_name: str, container: str = "") -> Options:
    """VarHandleOptions naming a resource variable (strings need offsets
    made before the table, so builtin_options cannot write them)."""
    kind = int(tflite.BuiltinOptions.VarHandleOptions)

    def build(b: Any) -> int:
        name = b.CreateString(shared_name)
        cont = b.CreateString(container) if container else None
        tflite.VarHandleOptionsStart(b)
        if cont is not None:
            tflite.VarHandleOptionsAddContainer(b, cont)
        tflite.VarHandleOptionsAddSharedName(b, name)
        return int(tflite.VarHandleOptionsEnd(b))

    return kind, build


@dataclass
class Node:
    """One operator of chain_model, its tensors given as TensorSpec objects
    (None for an omitted optional input)."""

    op: Union[int, str]
    inputs: Sequence[Optional[TensorSpec]]
    outputs: Sequence[TensorSpec]
    options: Optional[Options] = None
    version: int = 1


def chain_model(nodes: Sequence[Node], outputs: Sequence[TensorSpec]) -> bytes:
    """A one-subgraph model running `nodes` in order. A tensor one node
    writes is read by the later nodes that list it; one without data that
    no node writes is a graph input (in order of first use); `outputs` are
    the graph's."""
    specs: List[TensorSpec] = []
    index: Dict[int, int] = {}
    for n in nodes:
        for t in list(n.inputs) + list(n.outputs):
            if t is not None and id(t) not in index:
                index[id(t)] = len(specs)
                specs.append(t)
    written = {id(t) for n in nodes for t in n.outputs}
    tensors = [t if t.name else dataclasses.replace(t, name="t%d" % i) for i, t in enumerate(specs)]
    ops = [OpSpec(n.op, [index[id(t)] if t is not None else -1 for t in n.inputs],
                  [index[id(t)] for t in n.outputs], n.options, n.version) for n in nodes]
    graph_inputs = [index[id(t)] for t in specs if t.data is None and id(t) not in written]
    graph = GraphSpec(tensors, graph_inputs, [index[id(t)] for t in outputs], ops, name="main")
    return graph_model([graph], description="tvmnode tests: %d operators" % len(nodes))
