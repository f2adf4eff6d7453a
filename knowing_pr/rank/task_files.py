"""A task's ranked file list: where to look, best first (``RankedFile``s, as a PR pack's).

Eight channels, each a list of files best first, fused by weighted reciprocal rank
(``w / (k + rank)``, ``TaskParams.files_*``):

- ``bm25``: BM25 over whole files (``store.filewords``) for all the task's words — the plain
  lexical order, the channel the others are added to;
- ``names``: the same BM25 for the names the task writes as code only (snippets, backticks,
  error names, config keys), where a long report's prose would drown them;
- ``title``: the same BM25 for the words of the task's title only (its first line of prose),
  which an issue's snippets and logs would drown in ``bm25`` (empty for a text that is all
  title: it would be ``bm25`` again);
- ``named``: the files the task names by path or its traceback passes through (innermost
  frame first);
- ``defs``: the files that define a name the task writes as code (``visit_default``,
  ``make_class``), each name weighted by its IDF: where a name is defined, not only used;
- ``seeds``: the files of the task's fused seed channels (symbol BM25, names, tiered, …), in
  their order;
- ``symbols``: the files of the task's final symbol order (walk, names, consensus, co-change):
  graph and history evidence, which reorders the lexical channels and never stands alone
  with a weight above theirs;
- ``commits``: the files changed by past commits whose subjects match the task's words (its
  title's only, its first line of prose, with ``files_commits_title`` on; BM25 over
  ``store.commitwords``), each commit's score split over the files it changed.

The graph and history channels (``seeds``, ``symbols``, ``commits``) rerank the lexical ones: they add only to files
within the first ``files_graph_depth`` of a lexical channel (``bm25``, ``title``, ``names``,
``named``, ``defs``), so a file no word of the task reaches is not listed for its graph neighbours alone.

A file's history is a prior: × ``1 + files_history_prior · history``, history in [0, 1] — the
files a fix touches are more often the often-changed ones; the prior reorders the channels'
files, never adds one.
Vendored code (``vendored_segments``, ``packages`` below the top directory), generated files
(``file_sketches.generated``) and tests (unless the task is about tests) are × ``files_place_factor``
unless the task names them. Scores are divided by the best (the first file scores 1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from knowing_pr.config.params import TaskParams
from knowing_pr.model import RankedFile

__all__ = ["CHANNELS", "FileChannels", "is_vendored", "rank_task_files"]

#: the channels, in the order their reasons are listed on a tie
CHANNELS = ("named", "defs", "names", "title", "bm25", "seeds", "symbols", "commits")
#: the channels that carry the task's own words (the graph channels rerank their files)
LEXICAL = ("named", "defs", "names", "title", "bm25")
_EVIDENCE = {
    "bm25": "its text matches the task's words",
    "names": "it holds names the task writes as code",
    "named": "the task names it or its traceback passes through it",
    "title": "its text matches the task's title",
    "defs": "it defines a name the task writes as code",
    "seeds": "holds symbols that match the task",
    "symbols": "holds {symbol}, high in the task's symbol ranking",
    "commits": "past commits whose subjects match the task changed it",
}


@dataclass(frozen=True)
class FileChannels:
    """Each channel's files, best first; ``symbol_of``: the best symbol of each file in the
    ``symbols`` channel (its evidence); ``named``: files the task names (never demoted)."""

    bm25: Sequence[str] = ()
    names: Sequence[str] = ()
    named: Sequence[str] = ()
    symbols: Sequence[str] = ()
    seeds: Sequence[str] = ()
    defs: Sequence[str] = ()
    commits: Sequence[str] = ()
    title: Sequence[str] = ()
    symbol_of: Mapping[str, str] = field(default_factory=dict)
    #: each file's history in [0, 1] (``log1p(commits)`` over the most changed file's): a prior
    #: that reorders the fused files, never adds one
    history: Mapping[str, float] = field(default_factory=dict)

    def of(self, channel: str) -> Sequence[str]:
        lists = {
            "bm25": self.bm25,
            "names": self.names,
            "named": self.named,
            "symbols": self.symbols,
            "seeds": self.seeds,
            "defs": self.defs,
            "commits": self.commits,
            "title": self.title,
        }
        return lists[channel]


def is_vendored(path: str, segments: Sequence[str]) -> bool:
    """Someone else's code kept in the repository: a directory named like ``segments`` (a
    top-level ``packages/`` is a monorepo's own code, a nested one is vendored)."""
    parts = path.lower().split("/")[:-1]
    wanted = set(segments)
    return any(part in wanted and not (i == 0 and part == "packages") for i, part in enumerate(parts))


def _weights(params: TaskParams) -> dict[str, float]:
    return {
        "bm25": params.files_weight_bm25,
        "names": params.files_weight_names,
        "named": params.files_weight_named,
        "symbols": params.files_weight_symbols,
        "seeds": params.files_weight_seeds,
        "defs": params.files_weight_defs,
        "commits": params.files_weight_commits,
        "title": params.files_weight_title,
    }


def rank_task_files(
    channels: FileChannels,
    params: TaskParams,
    demote: Callable[[str], bool],
    *,
    limit: int | None = None,
) -> tuple[RankedFile, ...]:
    """The fused list (module docstring), at most ``limit`` (``files_listed``) files; ``demote``:
    vendored, generated or test files (the named ones are kept whole)."""
    weights = _weights(params)
    reached = _lexically_reached(channels, weights, params.files_graph_depth)
    parts: dict[str, dict[str, float]] = {}
    for channel in CHANNELS:
        weight = weights[channel]
        if weight <= 0:
            continue
        seen: set[str] = set()
        for rank, path in enumerate(channels.of(channel), 1):
            if path in seen:
                continue
            seen.add(path)
            if reached is not None and channel not in LEXICAL and path not in reached:
                continue
            parts.setdefault(path, {})[channel] = weight / (params.files_rrf_k + rank)
    named = set(channels.named)
    scores: dict[str, float] = {}
    for path, contributions in parts.items():
        score = sum(contributions.values())
        score *= 1 + params.files_history_prior * channels.history.get(path, 0.0)
        if path not in named and demote(path):
            score *= params.files_place_factor
        scores[path] = score
    order = sorted(scores, key=lambda p: (-scores[p], p))[: limit or params.files_listed]
    if not order:
        return ()
    best = scores[order[0]]
    out: list[RankedFile] = []
    for path in order:
        contributions = parts[path]
        reasons = tuple(sorted(contributions, key=lambda c: (-contributions[c], CHANNELS.index(c))))
        out.append(
            RankedFile(
                path=path,
                score=round(scores[path] / best, 4),
                reasons=reasons,
                evidence=_evidence(reasons, channels.symbol_of.get(path, "")),
                signals=tuple((c, round(contributions[c], 6)) for c in reasons),
            )
        )
    return tuple(out)


def _lexically_reached(channels: FileChannels, weights: Mapping[str, float], depth: int) -> set[str] | None:
    """The files within the first ``depth`` of a weighted lexical channel (None: no limit)."""
    if depth <= 0:
        return None
    return {path for c in LEXICAL if weights[c] > 0 for path in channels.of(c)[:depth]}


def _evidence(reasons: Sequence[str], symbol: str) -> str:
    said = [_EVIDENCE[r].format(symbol=symbol or "symbols") for r in reasons]
    return "; ".join(said)
