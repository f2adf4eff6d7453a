"""``rank.sparse.CsrMatrix`` gives ``scipy.sparse``'s results to the bit: building from triplets
(duplicates summed, zeros dropped), transposing, adding, row sums, row scaling, ``A @ x`` and
``A.T @ x``, on random matrices with duplicates, zeros and empty rows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowing_pr.rank.sparse import CsrMatrix

sp = pytest.importorskip("scipy.sparse")

WEIGHTS = [0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0, 0.1 + 0.2, 1 / 3]


@st.composite
def triplets(draw: st.DrawFn) -> tuple[int, list[int], list[int], list[float]]:
    n = draw(st.integers(1, 12))
    entries = draw(
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.sampled_from(WEIGHTS)), max_size=14
        )
    )
    # per row, columns in ascending order (as the adjacency blob keeps them): duplicates stay in
    # the order given, the case scipy and CsrMatrix must sum alike
    entries.sort(key=lambda e: (e[0], e[1]))
    return n, [e[0] for e in entries], [e[1] for e in entries], [e[2] for e in entries]


def reference(n: int, rows: list[int], cols: list[int], vals: list[float]) -> object:
    matrix = sp.csr_matrix((np.array(vals, dtype=np.float64), (rows, cols)), shape=(n, n))
    matrix.sum_duplicates()
    matrix.eliminate_zeros()
    return matrix


def same(ours: CsrMatrix, theirs: object) -> bool:
    theirs = sp.csr_matrix(theirs)
    theirs.sort_indices()
    return (
        np.array_equal(ours.indptr, theirs.indptr)
        and np.array_equal(ours.indices, theirs.indices)
        and np.array_equal(ours.data, theirs.data)
    )


@settings(max_examples=300, deadline=None)
@given(triplets(), st.lists(st.floats(0, 1, allow_nan=False), min_size=12, max_size=12))
def test_every_operation_matches_scipy_to_the_bit(
    case: tuple[int, list[int], list[int], list[float]], vector: list[float]
) -> None:
    n, rows, cols, vals = case
    ours, theirs = CsrMatrix.from_triplets(rows, cols, vals, (n, n)), reference(n, rows, cols, vals)
    x = np.array(vector[:n], dtype=np.float64)
    assert same(ours, theirs)
    assert same(ours.T, theirs.T.tocsr())
    assert same(ours + ours.T, (theirs + theirs.T).tocsr())
    sums = np.asarray(theirs.sum(axis=1)).ravel()
    assert np.array_equal(ours.row_sums(), sums)
    assert same(ours.scale_rows(x), sp.diags(x) @ theirs)
    assert np.array_equal(ours @ x, theirs @ x)
    assert np.array_equal(ours.rmatvec(x), theirs.T.tocsr() @ x)
    assert np.array_equal(ours.toarray(), theirs.toarray())


def test_csr_arrays_with_duplicates_and_zeros_are_summed_in_storage_order() -> None:
    ours = CsrMatrix.from_csr([0, 3, 3, 4], [1, 1, 2, 0], [0.1, 0.2, 0.0, 0.5], (3, 3))
    assert ours.indptr.tolist() == [0, 1, 1, 2] and ours.indices.tolist() == [1, 0]
    assert ours.data.tolist() == [0.1 + 0.2, 0.5]
    assert CsrMatrix.from_triplets([], [], [], (0, 0)).nnz == 0


@pytest.mark.parametrize("bound", [1, 100, 70_000, 5_000_000])
def test_the_radix_order_is_numpys_stable_argsort(bound: int) -> None:
    from knowing_pr.rank.sparse import _stable_order

    values = np.random.default_rng(bound).integers(0, bound, 50_000)
    assert np.array_equal(_stable_order(values, bound), np.argsort(values, kind="stable"))
