"""A change's files + what the signals are computed from (``fileinputs``: history as it stood, the
file graph, content sketches, the paths) → the candidate files it is likely to be changed with,
and each one's signal values: the rows the file model (``filemodel.py``) scores and is fitted on.

Pure: the callers read the store (``rank/files.py`` at rank time, ``index/filefit.py`` when the
model is fitted). ``SIGNALS`` lists the signal values, in the order of a row. Candidates are the
union of the change's co-change partners, the files the walk reaches, the direct structural and
test links, the files of the changed directories, same-stem files, near-duplicates by content
and, when that leaves fewer than ``min_candidates``, the files with the most similar paths.

The similarities (content, path tokens, directory steps) compare the changed files with every file
without looking at every pair (``similarity.py``): a change of 20,000 added files took 9.5 minutes
on 99a3a56. The content comparison's matches are bounded (``files.similarity_max_matches``); a
change that reaches the bound is compared in part, and ``SignalRows.limits_hit`` says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from knowing_pr.config import FileRankParams
from knowing_pr.history.fileinputs import (
    FileGraph,
    FileUniverse,
    HistoryView,
    PathInfo,
    Sketches,
    file_walk,
)
from knowing_pr.history.similarity import best_token_overlap, directory_distances, near_duplicates

__all__ = ["SIGNALS", "SIGNAL_INDEX", "SignalRows", "change_signals"]

SECONDS_PER_DAY = 86_400

#: the signal values of a candidate file, in row order (docs/history.md defines each)
SIGNALS: tuple[str, ...] = (
    # history: how the change's files and the candidate changed together, before the change
    "cochange_share",  # Σ over the changed files s: decayed weight(s, p) / decayed churn(s)
    "cochange_sized",  # the same with each commit counting 1/(its files - 1)
    "cochange_conf",  # max over s: together(s, p) / commits(s)
    "cochange_support",  # log(1 + max over s of together(s, p))
    "cochange_reverse",  # max over s: together(s, p) / commits(p)
    "cochange_given",  # share of the changed files that ever changed with p
    "cochange_rank",  # 1 / rank of p by cochange_share
    # structure: the symbol graph folded onto files
    "links_out",  # log(1 + edges from the changed files into p): p is used by the change
    "links_in",  # log(1 + edges from p into the changed files): p uses the change
    "links_share",  # those links / every structural link of p: p depends on the change, not on everything
    "tests_link",  # a ``tests`` edge between p and a changed file
    "walk",  # file-level random walk with restart from the changed files, relative to the best
    "walk_rank",  # 1 / rank of p by walk
    # paths
    "same_dir",
    "dir_near",  # 1 / (1 + directory steps to the nearest changed file)
    "stem_sibling",  # same directory and stem as a changed file (index.ts / index.mts)
    "stem_match",  # same stem elsewhere, test markers stripped (v3/foo.ts, foo_test.go)
    "test_pair",  # named after a changed file, one a test and the other not (foo_test.go ↔ foo.go)
    "path_tokens",  # max Jaccard similarity of path tokens
    "same_ext",
    "is_test",
    "test_for_code",  # p is a test and the change holds code
    "code_for_test",  # p is code and the change holds a test
    "is_source",  # p is in a language the index parses
    # content
    "near_duplicate",  # max estimated resemblance of content shingles
    "generated",  # p says it is generated
    # the candidate's own history: recency, churn, and changing with everything
    "recency",  # 1 / (1 + days since p last changed / 30)
    "recent_week",  # p changed within the week before
    "churn",  # log(1 + commits that changed p)
    "commit_share",  # commits that changed p / commits mined: high for files that change with everything
    "breadth",  # log(1 + files p ever changed with) / log(1 + files with history)
)
SIGNAL_INDEX = {name: i for i, name in enumerate(SIGNALS)}


# -- the rows ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SignalRows:
    """Candidate files (sorted by path) and their signal values (one row each, ``SIGNALS``)."""

    paths: tuple[str, ...]
    values: npt.NDArray[np.float64]
    #: the bounds on hostile input the change reached (``files.similarity_max_matches``)
    limits_hit: tuple[str, ...] = ()

    def column(self, name: str) -> npt.NDArray[np.float64]:
        return self.values[:, SIGNAL_INDEX[name]]


def change_signals(
    given: Collection[str],
    view: HistoryView,
    graph: FileGraph,
    sketches: Sketches,
    universe: FileUniverse,
    params: FileRankParams,
) -> SignalRows:
    """The candidate files for a change of ``given`` and their signal values (none for an empty
    change)."""
    changed = sorted(set(given))
    if not changed:
        return SignalRows((), np.zeros((0, len(SIGNALS))))
    for path in changed:
        universe.add(path)
    excluded = set(changed)
    values: dict[str, dict[str, float]] = {}

    def row(path: str) -> dict[str, float]:
        if path not in values:
            universe.add(path)
            values[path] = {}
        return values[path]

    _history_signals(changed, excluded, view, params, row)
    _graph_signals(changed, excluded, graph, params, row)
    limits_hit = _content_signals(changed, excluded, sketches, params, row)
    _path_candidates(changed, excluded, universe, params, row)
    if len(values) < params.min_candidates:
        taken = set(excluded) | set(values)
        _similar_paths(changed, taken, universe, params.min_candidates - len(values), row)
    paths = tuple(sorted(values))
    matrix = np.zeros((len(paths), len(SIGNALS)))
    for i, path in enumerate(paths):
        for name, value in values[path].items():
            matrix[i, SIGNAL_INDEX[name]] = value
    _fill_path_and_own_signals(changed, paths, matrix, view, sketches, universe)
    return SignalRows(paths, matrix, limits_hit)


def _history_signals(
    changed: Sequence[str],
    excluded: Collection[str],
    view: HistoryView,
    params: FileRankParams,
    row: Callable[[str], dict[str, float]],
) -> None:
    share: dict[str, float] = {}
    sized: dict[str, float] = {}
    conf: dict[str, float] = {}
    support: dict[str, int] = {}
    reverse: dict[str, float] = {}
    given: dict[str, int] = {}
    for source in changed:
        commits = view.commits(source)
        churn = view.churn(source)
        if commits <= 0 or churn <= 0:
            continue
        for partner in view.partners(source):
            if partner in excluded:
                continue
            together, weight, size_weight = view.pair(source, partner)
            if together <= 0:
                continue
            share[partner] = share.get(partner, 0.0) + weight / churn
            sized[partner] = sized.get(partner, 0.0) + size_weight / churn
            conf[partner] = max(conf.get(partner, 0.0), together / commits)
            support[partner] = max(support.get(partner, 0), together)
            own = view.commits(partner)
            reverse[partner] = max(reverse.get(partner, 0.0), together / own if own else 0.0)
            given[partner] = given.get(partner, 0) + 1
    ranked = sorted(share, key=lambda p: (-share[p], p))[: params.max_history_candidates]
    for rank, path in enumerate(ranked, 1):
        values = row(path)
        values["cochange_share"] = share[path]
        values["cochange_sized"] = sized[path]
        values["cochange_conf"] = conf[path]
        values["cochange_support"] = math.log1p(support[path])
        values["cochange_reverse"] = reverse[path]
        values["cochange_given"] = given[path] / len(changed)
        values["cochange_rank"] = 1.0 / rank


def _graph_signals(
    changed: Sequence[str],
    excluded: Collection[str],
    graph: FileGraph,
    params: FileRankParams,
    row: Callable[[str], dict[str, float]],
) -> None:
    start = [graph.index[p] for p in changed if p in graph.index]
    if not start:
        return
    indicator = np.zeros(len(graph.paths))
    indicator[start] = 1.0
    out = graph.links_in @ indicator  # links from the changed files into each file
    into = graph.links @ indicator  # links from each file into the changed files
    degree = graph.degree
    tests = graph.tests @ indicator
    mass = file_walk(graph, start, params.walk_restart, params.walk_iterations)
    mass[start] = 0.0
    for i in np.flatnonzero((out > 0) | (into > 0) | (tests > 0)).tolist():
        path = graph.paths[i]
        if path in excluded:
            continue
        values = row(path)
        values["links_out"] = math.log1p(float(out[i]))
        values["links_in"] = math.log1p(float(into[i]))
        values["links_share"] = float(out[i] + into[i]) / float(degree[i]) if degree[i] > 0 else 0.0
        values["tests_link"] = 1.0 if tests[i] > 0 else 0.0
    reached = np.flatnonzero(mass > 0)
    order = reached[np.lexsort((reached, -mass[reached]))]
    top = float(mass[order[0]]) if order.size else 0.0
    rank = 0
    for i in order.tolist():
        path = graph.paths[i]
        if path in excluded:
            continue
        rank += 1
        if rank > params.max_walk_candidates:
            break
        values = row(path)
        values["walk"] = float(mass[i]) / top if top > 0 else 0.0
        values["walk_rank"] = 1.0 / rank


def _content_signals(
    changed: Sequence[str],
    excluded: Collection[str],
    sketches: Sketches,
    params: FileRankParams,
    row: Callable[[str], dict[str, float]],
) -> tuple[str, ...]:
    """Near-duplicates of the changed files; the note saying the comparison stopped at its bound."""
    if not sketches.paths:
        return ()
    sources = [sketches.index[p] for p in changed if p in sketches.index]
    found = near_duplicates(sketches.matrix, sources, params.similarity_max_matches)
    best = found.best
    for i in np.flatnonzero(best >= params.near_duplicate_min).tolist():
        path = sketches.paths[i]
        if path not in excluded:
            row(path)["near_duplicate"] = float(best[i])
    if found.compared == len(sources):
        return ()
    return (
        f"content near-duplicates: {found.compared:,} of {len(sources):,} changed files compared "
        f"(their files shared {params.similarity_max_matches:,} sketch values: files.similarity_max_matches)",
    )


def _path_candidates(
    changed: Sequence[str],
    excluded: Collection[str],
    universe: FileUniverse,
    params: FileRankParams,
    row: Callable[[str], dict[str, float]],
) -> None:
    """Files of the changed directories and files with a changed file's stem (capped)."""
    for path in changed:
        info = universe.info(path)
        siblings = [p for p in universe.by_dir.get(info.directory, []) if p not in excluded]
        for other in _nearest_by_tokens(info, siblings, universe, params.max_dir_candidates):
            row(other)
        same_stem = [p for p in universe.by_plain_stem.get(info.plain_stem, []) if p not in excluded]
        for other in _nearest_by_tokens(info, same_stem, universe, params.max_stem_candidates):
            row(other)


def _nearest_by_tokens(info: PathInfo, paths: Sequence[str], universe: FileUniverse, limit: int) -> list[str]:
    if len(paths) <= limit:
        return list(paths)
    scored = sorted(paths, key=lambda p: (-_jaccard(info.tokens, universe.info(p).tokens), p))
    return scored[:limit]


def _similar_paths(
    changed: Sequence[str],
    excluded: Collection[str],
    universe: FileUniverse,
    count: int,
    row: Callable[[str], dict[str, float]],
) -> None:
    """Fill up with the files whose paths are most alike to a changed file's (shared path tokens,
    then the fewest directory steps)."""
    infos = [universe.info(p) for p in changed]
    paths = [p for p in universe.paths if p not in excluded]
    others = [universe.info(p) for p in paths]
    best = best_token_overlap([o.tokens for o in others], (c.tokens for c in infos)).tolist()
    steps = directory_distances((c.parts for c in infos), (o.parts for o in others))
    scored = [(-best[i], steps[o.parts], path) for i, (path, o) in enumerate(zip(paths, others, strict=True))]
    scored.sort()
    for _, _, path in scored[:count]:
        row(path)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)  # the union's size, without building it


def _fill_path_and_own_signals(
    changed: Sequence[str],
    paths: Sequence[str],
    matrix: npt.NDArray[np.float64],
    view: HistoryView,
    sketches: Sketches,
    universe: FileUniverse,
) -> None:
    """The path, content-flag and own-history signals of every candidate (in place)."""
    infos = [universe.info(p) for p in changed]
    dirs = {i.directory for i in infos}
    dir_stems = {(i.directory, i.stem) for i in infos}
    plain_stems = {i.plain_stem for i in infos}
    stem_tests = {(i.plain_stem, i.is_test) for i in infos}
    extensions = {i.extension for i in infos}
    has_test = any(i.is_test for i in infos)
    has_code = any(not i.is_test for i in infos)
    reference = view.reference_time
    files_known = max(view.history_files, 1)
    column = SIGNAL_INDEX
    candidates = [universe.info(p) for p in paths]
    distances = directory_distances((c.parts for c in infos), (i.parts for i in candidates))
    overlaps = best_token_overlap([i.tokens for i in candidates], (c.tokens for c in infos)).tolist()
    for r, path in enumerate(paths):
        info = candidates[r]
        values = matrix[r]
        values[column["same_dir"]] = float(info.directory in dirs)
        values[column["dir_near"]] = 1.0 / (1.0 + distances[info.parts])
        sibling = (info.directory, info.stem) in dir_stems
        values[column["stem_sibling"]] = float(sibling)
        values[column["stem_match"]] = float(not sibling and info.plain_stem in plain_stems)
        values[column["test_pair"]] = float((info.plain_stem, not info.is_test) in stem_tests)
        values[column["path_tokens"]] = overlaps[r]
        values[column["same_ext"]] = float(info.extension in extensions)
        values[column["is_test"]] = float(info.is_test)
        values[column["test_for_code"]] = float(info.is_test and has_code)
        values[column["code_for_test"]] = float(not info.is_test and has_test)
        values[column["is_source"]] = float(info.is_source)
        values[column["generated"]] = float(path in sketches.generated)
        commits = view.commits(path)
        last = view.last_time(path)
        if commits > 0 and last is not None and reference is not None:
            age_days = max(reference - last, 0) / SECONDS_PER_DAY
            values[column["recency"]] = 1.0 / (1.0 + age_days / 30.0)
            values[column["recent_week"]] = float(age_days < 7.0)
        values[column["churn"]] = math.log1p(commits)
        values[column["commit_share"]] = commits / view.mined_commits
        partners = view.partner_count(path) if commits > 0 else 0
        values[column["breadth"]] = math.log1p(partners) / math.log1p(files_known)
