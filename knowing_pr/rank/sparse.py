"""Triplets or CSR arrays → a compressed-sparse-row matrix of float64, in numpy alone: the few
operations the walk and HITS need (sum, transpose, row scaling, matrix–vector products).

It stands in for ``scipy.sparse``, whose import (with the parts of numpy it pulls in: testing,
f2py) cost more than the whole ranking of a pull request in a fresh process. Each operation
adds and multiplies in the order ``scipy.sparse`` does, so the results are the same to the bit:

- building from triplets sums duplicates in their given order (a stable sort by row, then
  column; scipy's per-row sort is the same for rows of up to 16 entries), drops zero sums and
  leaves each row's columns ascending;
- ``row_sums`` reduces each row with ``numpy.add.reduceat``, as ``csr_matrix.sum(axis=1)`` does;
- ``A @ x`` and ``A.T @ x`` add a row's (or a column's) products in storage order, as
  ``csr_matvec`` does on ``A`` and on ``A.T.tocsr()``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["CsrMatrix"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class CsrMatrix:
    """An ``n_rows × n_cols`` matrix: ``indptr`` row offsets, ``indices`` columns (ascending in
    each row, unique), ``data`` the non-zero values."""

    __slots__ = ("_row_sums", "_rows", "data", "indices", "indptr", "shape")

    def __init__(self, indptr: Any, indices: Any, data: Any, shape: tuple[int, int]) -> None:
        self.indptr: IntArray = np.asarray(indptr, dtype=np.int64)
        self.indices: IntArray = np.asarray(indices, dtype=np.int64)
        self.data: FloatArray = np.asarray(data, dtype=np.float64)
        self.shape = (int(shape[0]), int(shape[1]))
        self._rows: IntArray | None = None
        self._row_sums: FloatArray | None = None

    @classmethod
    def from_triplets(cls, rows: Any, cols: Any, values: Any, shape: tuple[int, int]) -> CsrMatrix:
        """``(rows[k], cols[k]) = values[k]``, duplicates summed in the order given, zero sums dropped."""
        n_rows, n_cols = int(shape[0]), int(shape[1])
        row = np.asarray(rows, dtype=np.int64)
        col = np.asarray(cols, dtype=np.int64)
        value = np.asarray(values, dtype=np.float64)
        key = row * max(n_cols, 1) + col
        order = np.argsort(key, kind="stable")
        key, value = key[order], value[order]
        if key.size:
            starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
            group = np.cumsum(np.concatenate(([False], key[1:] != key[:-1])))
            sums: FloatArray = np.bincount(group, weights=value, minlength=starts.size).astype(np.float64)
            keep = sums != 0
            keys, sums = key[starts][keep], sums[keep]
        else:
            keys, sums = key, value
        row_of = keys // max(n_cols, 1)
        indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(row_of, minlength=n_rows), out=indptr[1:])
        return cls(indptr, keys - row_of * max(n_cols, 1), sums, (n_rows, n_cols))

    @classmethod
    def from_csr(cls, indptr: Any, indices: Any, values: Any, shape: tuple[int, int]) -> CsrMatrix:
        """CSR arrays whose rows may hold duplicate or zero entries (summed, dropped)."""
        offsets = np.asarray(indptr, dtype=np.int64)
        counts = offsets[1:] - offsets[:-1]
        rows = np.repeat(np.arange(int(shape[0]), dtype=np.int64), counts)
        return cls.from_triplets(rows, indices, values, shape)

    # -- views ----------------------------------------------------------------------------------

    @property
    def nnz(self) -> int:
        return int(self.data.size)

    def rows(self) -> IntArray:
        """The row of every stored entry."""
        if self._rows is None:
            self._rows = np.repeat(np.arange(self.shape[0], dtype=np.int64), np.diff(self.indptr))
        return self._rows

    def toarray(self) -> FloatArray:
        dense = np.zeros(self.shape, dtype=np.float64)
        dense[self.rows(), self.indices] = self.data
        return dense

    # -- arithmetic -----------------------------------------------------------------------------

    def row_sums(self) -> FloatArray:
        """Each row's sum (kept: a matrix is not changed once built, and a walk asks each time)."""
        if self._row_sums is None:
            sums = np.zeros(self.shape[0], dtype=np.float64)
            filled = np.flatnonzero(np.diff(self.indptr))
            if filled.size:
                sums[filled] = np.add.reduceat(self.data, self.indptr[filled])
            sums.flags.writeable = False
            self._row_sums = sums
        return self._row_sums

    def transpose(self) -> CsrMatrix:
        """The entries regrouped by column; within a column the rows stay ascending (a stable
        sort by column), so no sum or sort is needed."""
        n_rows, n_cols = self.shape
        order = _stable_order(self.indices, n_cols)
        columns = self.indices[order]
        indptr = np.zeros(n_cols + 1, dtype=np.int64)
        np.cumsum(np.bincount(columns, minlength=n_cols), out=indptr[1:])
        return CsrMatrix(indptr, self.rows()[order], self.data[order], (n_cols, n_rows))

    @property
    def T(self) -> CsrMatrix:  # noqa: N802 - the matrix convention
        return self.transpose()

    def __add__(self, other: CsrMatrix) -> CsrMatrix:
        if self.shape != other.shape:
            raise ValueError(f"cannot add a {other.shape} matrix to a {self.shape} one")
        return CsrMatrix.from_triplets(
            np.concatenate((self.rows(), other.rows())),
            np.concatenate((self.indices, other.indices)),
            np.concatenate((self.data, other.data)),
            self.shape,
        )

    def scale_rows(self, factors: FloatArray) -> CsrMatrix:
        """``diag(factors) @ self`` (entries that become zero are dropped)."""
        data = self.data * np.asarray(factors, dtype=np.float64)[self.rows()]
        keep = data != 0
        if bool(keep.all()):
            return CsrMatrix(self.indptr, self.indices, data, self.shape)
        return CsrMatrix.from_triplets(self.rows()[keep], self.indices[keep], data[keep], self.shape)

    def __matmul__(self, vector: Any) -> FloatArray:
        x = np.asarray(vector, dtype=np.float64)
        return _sums(self.rows(), self.data * x[self.indices], self.shape[0])

    def rmatvec(self, vector: Any) -> FloatArray:
        """``self.T @ vector`` without building the transpose."""
        x = np.asarray(vector, dtype=np.float64)
        return _sums(self.indices, self.data * x[self.rows()], self.shape[1])


def _stable_order(values: IntArray, bound: int) -> IntArray:
    """``numpy.argsort(values, kind="stable")`` for values in ``[0, bound)``, as a radix sort on
    16-bit digits (numpy sorts those in linear time; int64 falls back to a merge sort)."""
    if bound <= 1 << 16:
        return np.argsort(values.astype(np.uint16), kind="stable")
    if bound <= 1 << 32:
        low = np.argsort((values & 0xFFFF).astype(np.uint16), kind="stable")
        high = np.argsort((values[low] >> 16).astype(np.uint16), kind="stable")
        return low[high]
    return np.argsort(values, kind="stable")


def _sums(bins: IntArray, values: FloatArray, length: int) -> FloatArray:
    """``out[bins[k]] += values[k]`` for k in order, from zeros (``numpy.bincount``)."""
    return np.asarray(np.bincount(bins, weights=values, minlength=length), dtype=np.float64)
