"""How alike a change's files are to every other file, in time that does not grow with the product
of the two counts (a pull request can add 20,000 files; issue 25):

- ``near_duplicates``: each file's best content resemblance to a changed file (``parse.sketch``).
  Two files' resemblance is above 0 only when some bin of their sketches holds the same value,
  so each bin's values are sorted once and a changed file meets only the files that share one
  of its bin values (the bins as LSH buckets of one value each): the result is exactly the
  all-pairs one, at the cost of the matches found. Those matches are bounded
  (``max_matches``): when the changed files' matches would exceed it (thousands of copies of
  one file), only the changed files that fit, in path order, are compared, and the caller says so.
- ``best_token_overlap`` and ``nearest_dir_steps``: each file's best path-token Jaccard
  similarity to a changed file (an inverted index over the tokens, in array passes), and its
  fewest directory steps to one (a breadth-first walk of the directory tree from every changed
  file's directory at once).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from knowing_pr.parse.sketch import EMPTY

__all__ = ["NearDuplicates", "best_token_overlap", "directory_distances", "near_duplicates"]

#: set bits of each byte value (a popcount table: ``np.bitwise_count`` needs numpy 2)
_BITS = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)
#: the matches one pass holds in memory at most
_CHUNK = 1 << 20


class NearDuplicates:
    """``best[i]``: file ``i``'s best resemblance to a compared changed file; ``compared`` of the
    ``sources`` were compared (a prefix), ``matches`` bin matches were looked at."""

    def __init__(self, best: npt.NDArray[np.float64], compared: int, matches: int) -> None:
        self.best = best
        self.compared = compared
        self.matches = matches


def near_duplicates(
    matrix: npt.NDArray[np.uint32], sources: Sequence[int], max_matches: int
) -> NearDuplicates:
    """The best resemblance of every row of ``matrix`` (sketches) to the rows ``sources`` (a row
    to itself counts 0), equal to ``max`` over ``parse.sketch.resemblance`` of each source."""
    rows = len(matrix)
    best = np.zeros(rows)
    if not rows or not sources:
        return NearDuplicates(best, 0, 0)
    bins = matrix.shape[1]
    columns = np.ascontiguousarray(matrix.T)  # one row per bin: searched a bin at a time
    order = np.argsort(columns, axis=1, kind="stable")  # per bin: the files by value
    ordered = np.take_along_axis(columns, order, axis=1)
    source_rows = np.asarray(sources, dtype=np.int64)
    wanted = np.ascontiguousarray(columns[:, source_rows])  # (bins, sources)
    low = np.empty(wanted.shape, dtype=np.int64)
    high = np.empty(wanted.shape, dtype=np.int64)
    for b in range(bins):
        low[b] = np.searchsorted(ordered[b], wanted[b], side="left")
        high[b] = np.searchsorted(ordered[b], wanted[b], side="right")
    low, high, values = low.T, high.T, wanted.T  # (sources, bins)
    counts = np.where(values != EMPTY, high - low, 0)
    cost = np.cumsum(counts.sum(axis=1))
    compared = int(np.searchsorted(cost, max_matches, side="right"))
    packed = np.packbits(matrix != EMPTY, axis=1)  # each row's non-empty bins, as bits
    start = 0
    while start < compared:  # chunks of sources, each holding about ``_CHUNK`` matches
        before = int(cost[start - 1]) if start else 0
        end = max(int(np.searchsorted(cost, before + _CHUNK, side="right")), start + 1)
        end = min(end, compared)
        _fold_chunk(best, order, low[start:end], counts[start:end], source_rows[start:end], packed)
        start = end
    return NearDuplicates(best, compared, int(cost[compared - 1]) if compared else 0)


def _fold_chunk(
    best: npt.NDArray[np.float64],
    order: npt.NDArray[np.int64],
    low: npt.NDArray[np.int64],
    counts: npt.NDArray[np.int64],
    sources: npt.NDArray[np.int64],
    packed: npt.NDArray[np.uint8],
) -> None:
    """``best`` raised to the resemblance of each row that shares a bin value with a source
    (``order``: per bin, the rows by value)."""
    bins, rows = order.shape
    lengths = counts.ravel()  # source-major, then bin
    total = int(lengths.sum())
    if not total:
        return
    which = np.repeat(np.arange(lengths.size), lengths)  # the (source, bin) of each match
    offsets = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    source_at, bin_at = np.divmod(which, bins)
    target = order[bin_at, low.ravel()[which] + offsets]
    source = sources[source_at]
    keep = target != source
    keys = source[keep] * rows + target[keep]
    pairs, equal = np.unique(keys, return_counts=True)
    first, second = np.divmod(pairs, rows)
    either = _BITS[packed[first] | packed[second]].sum(axis=1)
    similarity = equal / np.maximum(either, 1)
    np.maximum.at(best, second, similarity)


def best_token_overlap(
    targets: Sequence[frozenset[str]], sources: Iterable[frozenset[str]]
) -> npt.NDArray[np.float64]:
    """Each target token set's best Jaccard similarity to a source set (0 for an empty set),
    as ``max(filesignals._jaccard(t, s) for s in sources)``: the sizes of the intersections come
    from an inverted index over the targets' tokens."""
    best = np.zeros(len(targets))
    postings: dict[str, list[int]] = {}
    for i, tokens in enumerate(targets):
        for token in tokens:
            postings.setdefault(token, []).append(i)
    index = {token: np.asarray(rows, dtype=np.int64) for token, rows in postings.items()}
    sizes = np.fromiter((len(t) for t in targets), dtype=np.float64, count=len(targets))
    seen: set[frozenset[str]] = set()
    for tokens in sources:
        if not tokens or tokens in seen:
            continue
        seen.add(tokens)
        shared = np.zeros(len(targets))
        for token in tokens:
            rows = index.get(token)
            if rows is not None:
                shared[rows] += 1.0
        hit = shared > 0  # an empty target shares nothing: 0, as ``_jaccard``
        union = sizes[hit] + len(tokens) - shared[hit]
        best[hit] = np.maximum(best[hit], shared[hit] / union)
    return best


def directory_distances(
    sources: Iterable[tuple[str, ...]], targets: Iterable[tuple[str, ...]]
) -> dict[tuple[str, ...], int]:
    """Each target directory's fewest steps (up to a common ancestor, then down) to a source
    directory, as ``min(fileinputs.dir_steps(t, s) for s in sources)``: one breadth-first walk
    of the tree the directories and their ancestors make, from all the sources at once."""
    wanted = set(targets)
    starts = set(sources)
    neighbours: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    linked: set[tuple[str, ...]] = set()  # joined to their parent
    for directory in wanted | starts:
        while directory and directory not in linked:
            linked.add(directory)
            parent = directory[:-1]
            neighbours.setdefault(directory, []).append(parent)
            neighbours.setdefault(parent, []).append(directory)
            directory = parent
        neighbours.setdefault(directory, [])
    steps = dict.fromkeys(starts, 0)
    queue = deque(starts)
    while queue:
        here = queue.popleft()
        for there in neighbours[here]:
            if there not in steps:
                steps[there] = steps[here] + 1
                queue.append(there)
    return {d: steps[d] for d in wanted if d in steps}
