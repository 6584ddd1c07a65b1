"""Sparse constants (TFLite's SparsityParameters: CSR levels, blocks) and
DENSIFY, which TFLite Micro does not run: the importer makes the constant
dense when it reads it, checked against LiteRT's reference kernels and
against the dense array the sparse one was made from."""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np
import pytest

pytest.importorskip("tflite")

from test_frontend_tflite_ops import check, f32  # noqa: E402
from tflite_build import GraphSpec, OpSpec, TensorSpec, builtin_options, graph_model  # noqa: E402
from tvmnode import frontend  # noqa: E402

RNG = np.random.default_rng(404)


def csr_rows(dense: np.ndarray) -> Tuple[np.ndarray, Dict[str, Any]]:
    """A 2-d array as dense rows of CSR columns: its stored values and
    sparsity."""
    segs, ids, vals = [0], [], []
    for row in dense:
        nz = np.flatnonzero(row)
        ids += nz.tolist()
        vals += row[nz].tolist()
        segs.append(len(ids))
    return np.array(vals, dense.dtype), {"traversal_order": [0, 1],
                                         "dims": [("dense", dense.shape[0]),
                                                  ("csr", segs, ids)]}


def blocks_2x2(dense: np.ndarray) -> Tuple[np.ndarray, Dict[str, Any]]:
    """A 4x4 array as 2x2 blocks, the block rows dense and the block
    columns CSR (only the blocks with a non-zero are stored)."""
    segs, ids, vals = [0], [], []
    for br in range(2):
        for bc in range(2):
            blk = dense[2 * br:2 * br + 2, 2 * bc:2 * bc + 2]
            if np.any(blk):
                ids.append(bc)
                vals += blk.reshape(-1).tolist()
        segs.append(len(ids))
    return np.array(vals, dense.dtype), {"traversal_order": [0, 1, 2, 3], "block_map": [0, 1],
                                         "dims": [("dense", 2), ("csr", segs, ids),
                                                  ("dense", 2), ("dense", 2)]}


def densify_add(shape: List[int], values: np.ndarray, sparsity: Dict[str, Any]) -> bytes:
    t = [TensorSpec(shape, "float32", data=values, sparsity=sparsity),
         TensorSpec(shape, "float32", name="dense"), f32(shape), f32(shape)]
    ops = [OpSpec("DENSIFY", [0], [1]),
           OpSpec("ADD", [2, 1], [3], builtin_options("AddOptions"))]
    return graph_model([GraphSpec(t, [2], [3], ops)])


def sparse_matrix(rows: int, cols: int) -> np.ndarray:
    m = RNG.standard_normal((rows, cols)).astype(np.float32)
    m[RNG.random((rows, cols)) < 0.6] = 0
    m[1] = 0  # an empty row
    return m


@pytest.mark.parametrize("layout", ["csr", "blocks"])
def test_sparse_constant_is_made_dense(layout: str) -> None:
    if layout == "csr":
        dense = sparse_matrix(5, 7)
        values, sp = csr_rows(dense)
    else:
        dense = sparse_matrix(4, 4)
        dense[0:2, 2:4] = 0  # an empty block
        values, sp = blocks_2x2(dense)
    model = densify_add(list(dense.shape), values, sp)
    x = RNG.standard_normal(dense.shape).astype(np.float32)
    check(model, x, reference="litert")
    from tvmnode.runtime import Executor

    got = np.asarray(Executor(frontend.from_tflite(model))(np.zeros_like(x)))
    np.testing.assert_array_equal(got, dense)


def test_bad_sparsity_is_refused() -> None:
    dense = sparse_matrix(3, 4)
    values, sp = csr_rows(dense)
    sp["dims"][1] = ("csr", sp["dims"][1][1], [9] * len(sp["dims"][1][2]))  # column 9 of 4
    with pytest.raises(frontend.ModelImportError, match="sparse values do not fit"):
        frontend.from_tflite(densify_add([3, 4], values, sp))
    values, sp = csr_rows(dense)
    with pytest.raises(frontend.ModelImportError, match="2 levels.*does not fit shape"):
        frontend.from_tflite(densify_add([3, 4, 1], values, sp))
