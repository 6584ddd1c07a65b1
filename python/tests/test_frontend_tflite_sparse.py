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


def test_hostile_sparsity_is_refused_quickly() -> None:
    dense = sparse_matrix(2, 2)
    values, sp = csr_rows(dense)
    # a dense level far larger than its dimension (it would loop for ages)
    sp["dims"][0] = ("dense", (1 << 31) - 1)
    with pytest.raises(frontend.ModelImportError, match="level 0 is dense of size 2147483647"):
        frontend.from_tflite(densify_add([2, 2], values, sp))
    # a huge shape for a few stored bytes
    values, sp = csr_rows(dense)
    with pytest.raises(frontend.ModelImportError, match="cannot be stored"):
        frontend.from_tflite(densify_add([1 << 20, 1 << 20], values, sp))
    # a block that does not divide its dimension
    d4 = sparse_matrix(4, 4)
    values, sp = blocks_2x2(d4)
    sp["dims"][2] = ("dense", 3)
    with pytest.raises(frontend.ModelImportError, match="block 0 of size 3 does not divide"):
        frontend.from_tflite(densify_add([4, 4], values, sp))


def test_block_levels_are_found_by_traversal_order() -> None:
    # 4x4 in 2x1 blocks: each level's size is the one of the dimension it
    # traverses, found through the traversal order
    dense = sparse_matrix(4, 4)
    segs, ids, vals = [0], [], []
    for br in range(2):
        for c in range(4):
            blk = dense[2 * br:2 * br + 2, c]
            if np.any(blk):
                ids.append(c)
                vals += blk.tolist()
        segs.append(len(ids))
    # levels: block rows, columns (CSR), then the column block (size 1)
    # before the row block (size 2): traversal order [0, 1, 3, 2]
    sp = {"traversal_order": [0, 1, 3, 2], "block_map": [0, 1],
          "dims": [("dense", 2), ("csr", segs, ids), ("dense", 1), ("dense", 2)]}
    model = densify_add([4, 4], np.array(vals, np.float32), sp)
    from tvmnode.runtime import Executor

    got = np.asarray(Executor(frontend.from_tflite(model))(np.zeros((4, 4), np.float32)))
    np.testing.assert_array_equal(got, dense)
