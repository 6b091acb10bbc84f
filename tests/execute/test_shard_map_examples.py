"""Seed 004's ``shard_map`` examples (``examples/shard_map/*.mlir``, issue 14) compute what the
document says they compute (spec 004 sections 2, 3, 5 and 11): each module's
``sdy.manual_computation`` is partitioned, run on every device of its mesh on the document's
inputs, and the reassembled global result compared with the document's formula evaluated by
NumPy (integers and the integer-valued float32 products exactly). Results the document
untiles (a mesh axis left out of ``out_specs``) are checked equal on every device that holds
them by the reassembly itself."""
from __future__ import annotations

import numpy as np
import pytest

# The facade export (`from shardy_ref.execute import simulate`) is being added with issue 14.
from shardy_ref.execute import simulate
from tests.conftest import ROOT

EXAMPLES = ROOT / "examples" / "shard_map"

# -- the document's inputs (spec 004 section 11: x = arange(144).reshape(12,12); int32, as jnp)
X = np.arange(144, dtype=np.int32).reshape(12, 12)
NOTEBOOK_X = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 1, 2], dtype=np.int32)
A8x16 = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
B16x32 = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
# Section 5.1 with small sizes (its note: the document's 4096x2048x1024 int32 product overflows).
CM_A = np.arange(16 * 8, dtype=np.float32).reshape(16, 8)
CM_B = np.arange(8 * 4, dtype=np.float32).reshape(8, 4)
Y8x5 = np.arange(8 * 5, dtype=np.float32).reshape(8, 5)
XNORM = np.arange(2 * 3 * 8, dtype=np.float32).reshape(2, 3, 8)
Q_WI = np.arange(8 * 8 * 3, dtype=np.float32).reshape(8, 8, 3)


def _f_rank_preserving(y_blk: np.ndarray) -> np.ndarray:
    """The f of rank_preserving.mlir (the document leaves f open): f32[2,5] -> f32[3,7]."""
    return np.pad(2 * y_blk, ((0, 1), (1, 1)), constant_values=-1)


# file stem -> (the document's inputs, the document's global results)
CASES: dict[str, tuple[tuple, tuple]] = {
    # section 2: c == a @ b, f32[8,32]
    "matmul_basic": ((A8x16, B16x32), (A8x16 @ B16x32,)),
    "matmul_reduce_scatter": ((A8x16, B16x32), (A8x16 @ B16x32,)),
    # section 3.1: concatenate([f(y_blk) for y_blk in split(y, 4)]), f32[12,7]
    "rank_preserving": ((Y8x5,), (np.concatenate([_f_rank_preserving(b)
                                                   for b in np.split(Y8x5, 4)]),)),
    # section 3.2: f1(x1) == tile(x1, (1, 2)); f2(x_) == x_ == f1(x); the P(('j','i'), None)
    # tiling of tile(x, (2, 1)) gives the blocks f1 sees
    "f1": ((X,), (np.tile(X, (1, 2)),)),
    "f2": ((np.tile(X, (1, 2)),), (np.tile(X, (1, 2)),)),
    "f2_tile_rows": ((np.tile(X, (2, 1)),), (np.tile(X, (1, 2)),)),
    # section 3.3: tile(x, (4, 2)) / tile(x, (4, 1)) / x for x = [[3.]]
    "closure": ((np.array([[3.0]], dtype=np.float32),),
                (np.full((4, 2), 3.0), np.full((4, 1), 3.0), np.full((1, 1), 3.0))),
    "f3": ((X,), (X[:, :6] + X[:, 6:],)),
    "f4": ((X,), (X.reshape(4, 3, 12).sum(0),)),
    "f5": ((X,), (X.reshape(4, 3, 2, 6).sum((0, 2)),)),
    # section 5.1: C == A @ B, on every device
    "collective_matmul": ((CM_A, CM_B), (CM_A @ CM_B,)),
    "collective_matmul_fori": ((CM_A, CM_B), (CM_A @ CM_B,)),
    # section 5.2 (reconstructed manual region): the non-manual branch's einsum
    "weight_gathered_2d": ((XNORM, Q_WI), (np.einsum("bte,hed->bthd", XNORM, Q_WI),)),
    # section 11, the notebook's literal vectors
    "notebook_psum": ((NOTEBOOK_X,), ([22, 20, 12, 17],)),
    "notebook_all_gather": ((np.array([3, 9, 5, 2], dtype=np.int32),), ([3, 9, 5, 2] * 4,)),
    "notebook_psum_scatter": ((NOTEBOOK_X,), ([22, 20, 12, 17],)),
    "notebook_all_to_all": ((NOTEBOOK_X,), ([3, 5, 5, 9, 1, 9, 3, 7, 4, 2, 5, 1, 1, 6, 8, 2],)),
    "notebook_ppermute": ((np.arange(8, dtype=np.int32),), ([4, 5, 6, 7, 0, 1, 2, 3],)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_gives_the_documented_result(name):
    inputs, expected = CASES[name]
    got = simulate((EXAMPLES / f"{name}.mlir").read_text(), *inputs)
    assert len(got) == len(expected)
    for i, (g, want) in enumerate(zip(got, expected, strict=True)):
        want = np.asarray(want)
        assert g.shape == want.shape, f"result {i}: shape {g.shape} != {want.shape}"
        assert np.array_equal(g, want), f"result {i}:\n{g}\n!=\n{want}"


def test_the_documents_printed_rows():
    """Section 11's literal rows: f3 row 0 = [6,8,...,16], f4 row 0 = [216,220,...,260],
    f5 row 0 = [456,464,...,496]."""
    for name, row0 in (("f3", np.arange(6, 17, 2)), ("f4", np.arange(216, 261, 4)),
                       ("f5", np.arange(456, 497, 8))):
        (y,) = simulate((EXAMPLES / f"{name}.mlir").read_text(), X)
        assert np.array_equal(y[0], row0), name


def test_every_example_has_a_case_and_cites_the_document():
    files = {p.stem: p for p in EXAMPLES.glob("*.mlir")}
    assert set(files) == set(CASES), (f"untested: {sorted(set(files) - set(CASES))}; "
                                      f"missing: {sorted(set(CASES) - set(files))}")
    for name, path in files.items():
        first = path.read_text().splitlines()[0]
        assert first.startswith("// Seed 004") and "section" in first, name


def test_expected_values_match_the_documents_shapes():
    """The expected arrays have the global shapes the document prints."""
    shapes = {"f1": (12, 24), "f2": (12, 24), "f3": (12, 6), "f4": (3, 12), "f5": (3, 6),
              "matmul_basic": (8, 32), "rank_preserving": (12, 7)}
    for name, shape in shapes.items():
        assert np.asarray(CASES[name][1][0]).shape == shape, name
    assert [np.asarray(e).shape for e in CASES["closure"][1]] == [(4, 2), (4, 1), (1, 1)]

