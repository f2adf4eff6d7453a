"""A task + its analysis + its symbol ranking → the channels of its ranked file list and the list
(``rank/task_files.py`` fuses them).

The text is split into its parts (``parts.split_task``): BM25 over whole files
(``store.filewords``) is asked once for all its words, once for its title's (when the text is
more than its title) and once for the names it writes as code; the paths it names and its
traceback's files are matched against the indexed paths by suffix; the names it writes as code
are looked up among the indexed definitions (``nodes``); the symbol ranking's files come in its
final order; the past commits whose subjects match its words (its title's only with
``files_commits_title`` on) vote for the files they changed (``store.commitwords``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from knowing_pr.config.params import TaskParams
from knowing_pr.graph import is_test_path
from knowing_pr.model import RankedFile
from knowing_pr.rank.task_files import FileChannels, is_vendored, rank_task_files
from knowing_pr.store import Store
from knowing_pr.store.commitwords import search_commits
from knowing_pr.store.filewords import search_file_words
from knowing_pr.task.analysis import TaskAnalysis
from knowing_pr.task.parts import TaskParts, code_names, file_query, split_task, text_words

__all__ = ["file_channels", "task_files"]


def _bm25(store: Store, query: str, params: TaskParams) -> list[str]:
    if not query:
        return []
    hits = search_file_words(
        store.conn, query, limit=params.files_bm25_limit, path_weight=params.files_path_weight
    )
    return [path for path, _ in hits]


def _by_suffix(name: str, indexed: Sequence[str]) -> list[str]:
    """The indexed files whose path ends in the longest run of ``name``'s last segments (at
    least the file's directory and name when it has one): ``/usr/lib/…/site-packages/pkg/mod.py``
    finds ``src/pkg/mod.py``; at most 3."""
    segments = [s for s in name.lstrip("./").split("/") if s]
    shortest = 2 if len(segments) > 1 else 1
    for size in range(len(segments), shortest - 1, -1):
        tail = "/".join(segments[-size:])
        found = [p for p in indexed if p == tail or p.endswith("/" + tail)]
        if found:
            return found[:3]
    return []


def _named_paths(parts: TaskParts, analysis: TaskAnalysis, indexed: Sequence[str]) -> list[str]:
    """Indexed files the text names (by path suffix), then its traceback's, innermost first."""
    out: list[str] = []
    frame_paths = [*reversed(parts.frames), *(path for _, path, _ in reversed(analysis.frames) if path)]
    for name in (*parts.paths, *frame_paths):
        if "/" not in name and len(name) < 6:
            continue  # "a.py"-like placeholders name nothing
        out.extend(p for p in _by_suffix(name, indexed) if p not in out)
    return out


def _defining_files(store: Store, names: Sequence[str], indexed: int, limit: int) -> list[str]:
    """The files that define (a class, function, method or constant) one of ``names``, case
    ignored: each file scores the sum of its names' IDF (``log(1 + files / files defining
    it)``), best first, ties by path; at most ``limit``."""
    scores: dict[str, float] = {}
    for name in names:
        rows = store.conn.execute(
            "SELECT DISTINCT path FROM nodes WHERE name = ? COLLATE NOCASE AND kind != 'module'", (name,)
        ).fetchall()
        if not rows:
            continue
        idf = math.log(1 + max(indexed, len(rows)) / len(rows))
        for (path,) in rows:
            scores[str(path)] = scores.get(str(path), 0.0) + idf
    return sorted(scores, key=lambda p: (-scores[p], p))[:limit]


def _commit_files(store: Store, query: str, indexed: set[str], params: TaskParams) -> list[str]:
    """The files changed by the past commits whose subjects match ``query`` (the best
    ``files_commits_top`` that changed at most ``files_commits_max_files`` files), each commit
    adding its BM25 score over the number of files it changed; indexed files only, best first,
    ties by path."""
    if params.files_weight_commits <= 0 or params.files_commits_top <= 0:
        return []
    hits = search_commits(
        store.conn, query, limit=params.files_commits_top, max_files=params.files_commits_max_files
    )
    votes: dict[str, float] = {}
    for score, files in hits:
        for path in files:
            if path in indexed:
                votes[path] = votes.get(path, 0.0) + score / len(files)
    return sorted(votes, key=lambda p: (-votes[p], p))


def file_channels(
    store: Store, analysis: TaskAnalysis, symbol_paths: Sequence[tuple[str, str]], params: TaskParams
) -> FileChannels:
    """The channels of a task's file list (``rank/task_files.py``); ``symbol_paths``: (path, symbol name) of the final
    symbol order, best first."""
    text = analysis.task
    parts = split_task(text)
    indexed = [p for p, row in store.files().items() if row.status == "indexed"]
    symbols: list[str] = []
    symbol_of: dict[str, str] = {}
    for path, name in symbol_paths:
        if path not in symbol_of:
            symbol_of[path] = name
            symbols.append(path)
    seed_nodes = store.nodes_by_ids(nid for nid, _ in analysis.fused)
    seeds = [seed_nodes[nid].path for nid, _ in analysis.fused if nid in seed_nodes]
    words = file_query(text_words(text))
    title_query = file_query(text_words(parts.title))
    subjects_query = title_query if params.files_commits_title else ""
    return FileChannels(
        bm25=_bm25(store, words, params),
        seeds=list(dict.fromkeys(seeds)),
        names=_bm25(store, file_query((*parts.identifiers, *parts.errors)), params),
        named=_named_paths(parts, analysis, sorted(indexed)),
        defs=_defining_files(store, code_names(text, parts), len(indexed), params.files_bm25_limit),
        symbols=symbols,
        commits=_commit_files(store, subjects_query or words, set(indexed), params),
        # a text that is all title has no body to drown it: the channel would be ``bm25`` twice
        title=_bm25(store, title_query, params)
        if params.files_weight_title > 0 and title_query != words
        else [],
        symbol_of=symbol_of,
        history=_scaled(dict(store.conn.execute("SELECT path, commits FROM hist_files"))),
    )


def _scaled(values: dict[str, int]) -> dict[str, float]:
    """``log1p(value)`` over the largest's: in [0, 1]."""
    top = max(values.values(), default=0)
    if top <= 0:
        return {}
    scale = math.log1p(top)
    return {path: math.log1p(max(value, 0)) / scale for path, value in values.items()}


def _generated(store: Store) -> set[str]:
    return {str(r[0]) for r in store.conn.execute("SELECT path FROM file_sketches WHERE generated = 1")}


def task_files(
    store: Store, analysis: TaskAnalysis, symbol_paths: Sequence[tuple[str, str]], params: TaskParams
) -> tuple[RankedFile, ...]:
    """The task's ranked file list (at least ``files_listed`` files when there are as many)."""
    channels = file_channels(store, analysis, symbol_paths, params)
    generated = _generated(store)

    tests_kept = analysis.about_tests and not params.files_demote_tests_always

    def demote(path: str) -> bool:
        if not tests_kept and is_test_path(path):
            return True
        return path in generated or is_vendored(path, params.vendored_segments)

    return rank_task_files(channels, params, demote)
