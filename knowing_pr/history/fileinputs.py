"""What the file ranking's signals are computed from, as plain data (the callers read the store):

- ``HistoryView``: a ``HistoryState``, optionally with the newest commits taken out again
  (``take_out``), so a past commit is seen with the history before it only;
- ``FileGraph``: the symbol graph folded onto files — structural edges (calls, imports,
  inheritance, references) from file to file, ``tests`` edges, and the file-level walk
  (``file_walk``: random walk with restart over it);
- ``Sketches``: each file's content sketch (``parse.sketch``) and its generated flag;
- ``FileUniverse``: every known path, looked up by directory and by stem, with each path's
  ``PathInfo`` (directory, stem, tokens, test and source flags) worked out on first use (the test
  conventions are ``graph.paths``'s, passed in).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from knowing_pr.history.state import AppliedCommit, HistoryState, decay_time_constant_s, weight_anchor
from knowing_pr.model import EdgeKind
from knowing_pr.parse import language_for_path
from knowing_pr.parse.sketch import BINS, EMPTY, resemblance

__all__ = [
    "STRUCTURAL_KINDS",
    "Counts",
    "FileGraph",
    "FileUniverse",
    "HistoryView",
    "PathInfo",
    "Sketches",
    "dir_steps",
    "file_walk",
    "path_info",
]

#: edge kinds folded into the file graph's structural links
STRUCTURAL_KINDS = (
    EdgeKind.CALLS,
    EdgeKind.IMPORTS,
    EdgeKind.EXTENDS,
    EdgeKind.IMPLEMENTS,
    EdgeKind.INHERITS,
    EdgeKind.REFERENCES,
)


# -- history as it stood ----------------------------------------------------------------------


class HistoryView:
    """A ``HistoryState`` read as it stood before the commits handed to ``take_out`` (newest
    first): their counts and decayed weights subtracted, file ages moved back."""

    def __init__(self, state: HistoryState, partner_counts: Mapping[str, int] | None = None) -> None:
        """``partner_counts``: each file's number of partners in the whole history, when
        ``state`` holds only some files' pairs (else counted from its pairs)."""
        self.state = state
        self._partner_counts = partner_counts
        self.reference_time = state.reference_time
        self.anchor = weight_anchor(state.reference_time, state.half_life_days)
        self.tau_s = decay_time_constant_s(state.half_life_days)
        self.taken_out = 0
        self._files: dict[str, list[float]] = {}  # path -> [commits, churn] taken out
        self._pairs: dict[tuple[str, str], list[float]] = {}  # -> [count, weight, sized] taken out
        self._last: dict[str, int | None] = {}
        self.history_files = len(state.files)

    def take_out(self, commit: AppliedCommit, previous_change: Mapping[str, int | None]) -> None:
        """Subtract ``commit`` (the newest not yet taken out); ``previous_change[p]`` is when
        each of its paths changed before it (``None``: not within what the caller knows)."""
        self.taken_out += 1
        self.reference_time = commit.time
        touched = commit.touched
        if not touched:
            return
        weight = math.exp((commit.time - self.anchor) / self.tau_s)
        sized = weight / max(len(touched) - 1, 1)
        for path in touched:
            entry = self._files.setdefault(path, [0.0, 0.0])
            entry[0] += 1
            entry[1] += weight
            self._last[path] = previous_change.get(path)
        for i, first in enumerate(touched):
            for second in touched[i + 1 :]:
                pair = self._pairs.setdefault((first, second), [0.0, 0.0, 0.0])
                pair[0] += 1
                pair[1] += weight
                pair[2] += sized

    def commits(self, path: str) -> int:
        stats = self.state.files.get(path)
        if stats is None:
            return 0
        taken = self._files.get(path)
        return max(stats.commits - int(taken[0]), 0) if taken else stats.commits

    def churn(self, path: str) -> float:
        stats = self.state.files.get(path)
        if stats is None:
            return 0.0
        taken = self._files.get(path)
        return max(stats.churn - taken[1], 0.0) if taken else stats.churn

    def last_time(self, path: str) -> int | None:
        if path in self._last:
            return self._last[path]
        stats = self.state.files.get(path)
        return None if stats is None else stats.last_time

    def pair(self, a: str, b: str) -> tuple[int, float, float]:
        """(together, decayed weight, size-weighted decayed weight) of a pair, as it stood."""
        key = (a, b) if a < b else (b, a)
        stats = self.state.pairs.get(key)
        if stats is None:
            return 0, 0.0, 0.0
        taken = self._pairs.get(key)
        if taken is None:
            return stats.count, stats.weight, stats.sized
        return (
            max(stats.count - int(taken[0]), 0),
            max(stats.weight - taken[1], 0.0),
            max(stats.sized - taken[2], 0.0),
        )

    def partners(self, path: str) -> list[str]:
        return self.state.partners(path)

    def partner_count(self, path: str) -> int:
        """How many files changed together with ``path`` at least once."""
        if self._partner_counts is not None:
            return self._partner_counts.get(path, 0)
        return len(self.state.partners(path))

    @property
    def mined_commits(self) -> int:
        return max(self.state.mined_commits - self.taken_out, 1)


# -- the file graph -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Counts:
    """An ``n × n`` matrix of counts as triplets (row, column, value), one per non-zero cell,
    sorted by (row, column): the few products the file graph needs, in numpy alone."""

    n: int
    rows: npt.NDArray[np.int64]
    cols: npt.NDArray[np.int64]
    values: npt.NDArray[np.float64]

    @classmethod
    def from_triplets(cls, rows: npt.ArrayLike, cols: npt.ArrayLike, values: npt.ArrayLike, n: int) -> Counts:
        """Duplicates summed, zero sums dropped."""
        row = np.asarray(rows, dtype=np.int64).ravel()
        col = np.asarray(cols, dtype=np.int64).ravel()
        value = np.broadcast_to(np.asarray(values, dtype=np.float64), row.shape)
        keys, inverse = np.unique(row * max(n, 1) + col, return_inverse=True)
        sums = np.bincount(inverse.ravel(), weights=value, minlength=keys.size).astype(np.float64)
        keep = sums != 0
        keys, sums = keys[keep], sums[keep]
        return cls(n, keys // max(n, 1), keys % max(n, 1), sums)

    @property
    def nnz(self) -> int:
        return int(self.values.size)

    def __matmul__(self, vector: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """``M @ v``."""
        v = np.asarray(vector, dtype=np.float64)
        return np.bincount(self.rows, weights=self.values * v[self.cols], minlength=self.n).astype(np.float64)

    def rmatvec(self, vector: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """``M.T @ v``."""
        v = np.asarray(vector, dtype=np.float64)
        return np.bincount(self.cols, weights=self.values * v[self.rows], minlength=self.n).astype(np.float64)

    def row_sums(self) -> npt.NDArray[np.float64]:
        return np.bincount(self.rows, weights=self.values, minlength=self.n).astype(np.float64)

    def col_sums(self) -> npt.NDArray[np.float64]:
        return np.bincount(self.cols, weights=self.values, minlength=self.n).astype(np.float64)

    def transpose(self) -> Counts:
        return Counts.from_triplets(self.cols, self.rows, self.values, self.n)

    def at(self, row: int, col: int) -> float:
        """The value of one cell (0 when empty)."""
        key = row * max(self.n, 1) + col
        keys = self.rows * max(self.n, 1) + self.cols
        where = int(np.searchsorted(keys, key))
        return float(self.values[where]) if where < keys.size and keys[where] == key else 0.0


@dataclass(frozen=True)
class FileGraph:
    """The symbol graph folded onto files: ``links`` counts the structural edges from a symbol of
    file ``i`` to one of file ``j`` (cell ``(i, j)``); ``tests`` is symmetric (0/1); ``walk_t``
    is the transposed row-stochastic matrix of the file-level walk (both directions, tests
    included)."""

    paths: tuple[str, ...]
    index: Mapping[str, int]
    links: Counts
    links_in: Counts
    tests: Counts
    walk_t: Counts
    _degree: npt.NDArray[np.float64] | None = field(default=None, repr=False, compare=False)
    _dead: npt.NDArray[np.bool_] | None = field(default=None, repr=False, compare=False)

    @property
    def dead_ends(self) -> npt.NDArray[np.bool_]:
        """Files the walk cannot leave."""
        if self._dead is None:
            object.__setattr__(self, "_dead", self.walk_t.col_sums() <= 0)
        return self._dead  # type: ignore[return-value]

    @property
    def degree(self) -> npt.NDArray[np.float64]:
        """Structural links of each file, both directions."""
        if self._degree is None:
            object.__setattr__(self, "_degree", self.links.col_sums() + self.links.row_sums())
        return self._degree  # type: ignore[return-value]

    @classmethod
    def build(
        cls,
        node_paths: Sequence[str],
        indptr: npt.NDArray[np.int64],
        indices: npt.NDArray[np.int32],
        kinds: npt.NDArray[np.uint8],
    ) -> FileGraph:
        """From the adjacency's CSR arrays and the path of each node (in the adjacency's order)."""
        paths = tuple(sorted(set(node_paths) - {""}))
        index = {p: i for i, p in enumerate(paths)}
        node_file = np.fromiter((index.get(p, -1) for p in node_paths), dtype=np.int64, count=len(node_paths))
        sources = np.repeat(np.arange(len(node_paths), dtype=np.int64), np.diff(indptr))
        a = node_file[sources] if len(node_paths) else np.zeros(0, dtype=np.int64)
        b = node_file[indices.astype(np.int64)] if len(node_paths) else np.zeros(0, dtype=np.int64)
        across = (a != b) & (a >= 0) & (b >= 0)
        structural = across & np.isin(kinds, np.array([int(k) for k in STRUCTURAL_KINDS], dtype=np.uint8))
        test = across & (kinds == int(EdgeKind.TESTS))
        return cls.from_pairs(
            paths,
            a[structural],
            b[structural],
            np.ones(int(structural.sum())),
            np.concatenate([a[test], b[test]]),
            np.concatenate([b[test], a[test]]),
        )

    @classmethod
    def from_pairs(
        cls,
        paths: Sequence[str],
        link_rows: npt.ArrayLike,
        link_cols: npt.ArrayLike,
        link_counts: npt.ArrayLike,
        test_rows: npt.ArrayLike,
        test_cols: npt.ArrayLike,
    ) -> FileGraph:
        """From file-to-file links (counts summed per pair) and tests pairs (made 0/1)."""
        n = len(paths)
        links = Counts.from_triplets(link_rows, link_cols, link_counts, n)
        tests = Counts.from_triplets(test_rows, test_cols, 1.0, n)
        tests = Counts(n, tests.rows, tests.cols, np.ones(tests.nnz))
        ordered = tuple(paths)
        index = {p: i for i, p in enumerate(ordered)}
        return cls(ordered, index, links, links.transpose(), tests, _walk_matrix(links, tests))

    @classmethod
    def empty(cls) -> FileGraph:
        none = Counts.from_triplets((), (), (), 0)
        return cls((), {}, none, none, none, none)


def _walk_matrix(links: Counts, tests: Counts) -> Counts:
    """The transposed row-stochastic walk: log(1 + links both ways) plus the tests pairs."""
    both = Counts.from_triplets(
        np.concatenate([links.rows, links.cols]),
        np.concatenate([links.cols, links.rows]),
        np.concatenate([links.values, links.values]),
        links.n,
    )
    weights = Counts.from_triplets(
        np.concatenate([both.rows, tests.rows]),
        np.concatenate([both.cols, tests.cols]),
        np.concatenate([np.log1p(both.values), tests.values]),
        links.n,
    )
    totals = weights.row_sums()
    inverse = np.divide(1.0, totals, out=np.zeros_like(totals), where=totals > 0)
    return Counts.from_triplets(weights.cols, weights.rows, weights.values * inverse[weights.rows], links.n)


def file_walk(
    graph: FileGraph, start: Collection[int], restart: float, iterations: int
) -> npt.NDArray[np.float64]:
    """Random walk with restart over the file graph from ``start`` (uniform); a dead end sends
    its mass back to the start."""
    n = len(graph.paths)
    if n == 0 or not start:
        return np.zeros(n)
    s = np.zeros(n)
    s[list(start)] = 1.0 / len(start)
    dead = graph.dead_ends
    r = s.copy()
    for _ in range(iterations):
        lost = float(r[dead].sum())
        r = (1.0 - restart) * (graph.walk_t @ r) + ((1.0 - restart) * lost + restart) * s
    return np.asarray(r, dtype=np.float64)


# -- content sketches ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Sketches:
    """Each file's content sketch (one row of ``matrix`` per path), and the generated files."""

    paths: tuple[str, ...]
    index: Mapping[str, int]
    matrix: npt.NDArray[np.uint32]
    generated: frozenset[str]

    @classmethod
    def build(cls, rows: Iterable[tuple[str, npt.NDArray[np.uint32], bool]]) -> Sketches:
        listed = sorted(rows, key=lambda row: row[0])
        paths = tuple(path for path, _, _ in listed)
        matrix = (
            np.stack([sketch for _, sketch, _ in listed]).astype(np.uint32)
            if listed
            else np.full((0, BINS), EMPTY, dtype=np.uint32)
        )
        generated = frozenset(path for path, _, flag in listed if flag)
        return cls(paths, {p: i for i, p in enumerate(paths)}, matrix, generated)

    @classmethod
    def of_matrix(
        cls, paths: Sequence[str], matrix: npt.NDArray[np.uint32], generated: Collection[str]
    ) -> Sketches:
        """``build`` of the rows ``(paths[i], matrix[i], paths[i] in generated)``, without taking
        the matrix apart (it is reordered only when ``paths`` are not in order)."""
        if len(matrix) != len(paths):
            raise ValueError("sketches and their paths differ in number")
        order = sorted(range(len(paths)), key=paths.__getitem__)
        if order != list(range(len(paths))):
            paths, matrix = [paths[i] for i in order], matrix[order]
        ordered = tuple(paths)
        rows = matrix.astype(np.uint32) if ordered else np.full((0, BINS), EMPTY, dtype=np.uint32)
        flagged = frozenset(path for path in ordered if path in generated)
        return cls(ordered, {p: i for i, p in enumerate(ordered)}, rows, flagged)

    def similar_to(self, path: str) -> npt.NDArray[np.float64]:
        """Resemblance of every sketched file to ``path`` (zeros when it has no sketch)."""
        at = self.index.get(path)
        if at is None:
            return np.zeros(len(self.paths))
        similarity = resemblance(self.matrix, self.matrix[at])
        similarity[at] = 0.0
        return similarity


# -- paths ---------------------------------------------------------------------------------------

_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_TEST_MARKERS = re.compile(r"^[Tt]ests?_|_[Tt]ests?$|_[Ss]pec$|(?<=[a-z0-9])(Tests?|Spec|IT)$")


@dataclass(frozen=True, slots=True)
class PathInfo:
    """What a file's path says: where it is, its name's parts, whether it is a test or source."""

    directory: str
    parts: tuple[str, ...]
    stem: str
    #: the stem lowercased with test markers stripped (``test_foo`` / ``FooTest`` → ``foo``)
    plain_stem: str
    extension: str
    tokens: frozenset[str]
    is_test: bool
    is_source: bool


class FileUniverse:
    """Every path a ranking may name, with lookups by directory and by plain stem; each path's
    ``PathInfo`` is worked out when first asked for (``info``)."""

    def __init__(self, paths: Iterable[str], is_test: Callable[[str], bool]) -> None:
        self.is_test = is_test
        self.by_dir: dict[str, list[str]] = {}
        self.by_plain_stem: dict[str, list[str]] = {}
        self._info: dict[str, PathInfo] = {}
        self._known: set[str] = set(paths)
        self.paths: list[str] = sorted(self._known)
        plain_of: dict[str, str] = {}  # by file name: many files share one (``__init__.py``)
        for path in self.paths:  # ``add`` for each, in bulk
            directory, _, name = path.rpartition("/")
            self.by_dir.setdefault(directory, []).append(path)
            plain = plain_of.get(name)
            if plain is None:
                plain = plain_of[name] = _plain_stem(_stem_of(name))
            self.by_plain_stem.setdefault(plain, []).append(path)

    @classmethod
    def build(cls, paths: Iterable[str], is_test: Callable[[str], bool]) -> FileUniverse:
        return cls(paths, is_test)

    def knows(self, path: str) -> bool:
        return path in self._known

    def copy(self) -> FileUniverse:
        """A universe of the same paths that can grow without this one growing (a kept universe
        stays what the store says, whatever paths a change adds)."""
        other = FileUniverse((), self.is_test)
        other.paths = list(self.paths)
        other.by_dir = {key: list(paths) for key, paths in self.by_dir.items()}
        other.by_plain_stem = {key: list(paths) for key, paths in self.by_plain_stem.items()}
        other._info = dict(self._info)
        other._known = set(self._known)
        return other

    def add(self, path: str) -> None:
        if path in self._known:
            return
        self._known.add(path)
        self.paths.append(path)
        directory, _, name = path.rpartition("/")
        self.by_dir.setdefault(directory, []).append(path)
        self.by_plain_stem.setdefault(_plain_stem(_stem_of(name)), []).append(path)

    def info(self, path: str) -> PathInfo:
        found = self._info.get(path)
        if found is None:
            self.add(path)
            found = self._info[path] = path_info(path, self.is_test)
        return found


def _stem_of(name: str) -> str:
    return name.partition(".")[0] if not name.startswith(".") else name


def _plain_stem(stem: str) -> str:
    lowered = stem.lower()
    if "test" not in lowered and "spec" not in lowered and "IT" not in stem:
        return lowered
    return _TEST_MARKERS.sub("", stem).lower() or lowered


def path_info(path: str, is_test: Callable[[str], bool]) -> PathInfo:
    directory, _, name = path.rpartition("/")
    stem, dot, rest = name.partition(".") if not name.startswith(".") else (name, "", "")
    extension = rest.rsplit(".", 1)[-1].lower() if dot else ""
    plain = _plain_stem(stem)
    return PathInfo(
        directory=directory,
        parts=tuple(directory.split("/")) if directory else (),
        stem=stem,
        plain_stem=plain,
        extension=extension,
        tokens=frozenset(word.lower() for word in _WORD.findall(path)),
        is_test=is_test(path),
        is_source=language_for_path(path) is not None,
    )


def dir_steps(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    return len(a) + len(b) - 2 * common
