"""A change's paths + the store (history, the file graph, content sketches) + the file model's
weights → the ranked file list of a PR pack (step 7 of the recipe in ``candidates.py``).

1. **Weights.** ``files.weights`` when a pack pins them (a replay), else the weights the index
   fitted on this repository's own history (meta ``files_model``, ``index/filefit.py``), else
   the prior fitted on the development corpus (``files.prior``). ``with_file_weights`` puts the
   weights in use into the settings, so they enter the PackRoot's parameters.
2. **Candidates and signals** (``history.filesignals.change_signals``) over every file's mined
   history rows, each file's partner count and the changed files' pairs (a candidate's own
   commits, recency and partners are signals): co-change, the file graph (direct links, tests,
   the file-level walk), paths, content, the candidate's own history.
3. **Score** (``history.filemodel.FileModel``): ``sigmoid(bias + w · x)``, best first, ties by
   path; the first ``files.list_size`` make the list.
4. **Reasons and evidence.** Each signal's contribution ``w_j x_j`` is summed per reason
   (``REASON_OF``); the reasons holding at least ``REASON_SHARE`` of the strongest one's
   contribution are listed, strongest first, and said in words with the changed file they
   relate to.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from knowing_pr.config import Settings
from knowing_pr.errors import StoreError
from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.graph.paths import is_test_path
from knowing_pr.history import HistoryState
from knowing_pr.history.fileinputs import FileGraph, FileUniverse, HistoryView, Sketches
from knowing_pr.history.filemodel import FileModel
from knowing_pr.history.filesignals import SIGNALS, SignalRows, change_signals
from knowing_pr.model import RankedFile
from knowing_pr.rank.memo import Memo, store_state
from knowing_pr.store import Store
from knowing_pr.store.filedata import (
    MODEL_META,
    RANK_INPUTS_BLOB,
    cached_file_inputs,
    inputs_tag,
    read_file_inputs,
)
from knowing_pr.store.history import load_history, partner_counts

__all__ = [
    "MODEL_META",
    "REASON_OF",
    "FileRanking",
    "file_weights",
    "prepare_file_ranking",
    "rank_files",
    "with_file_weights",
]

#: the reason each signal speaks for (signals not listed are no reason on their own)
REASON_OF: Mapping[str, str] = {
    "cochange_share": "cochange",
    "cochange_sized": "cochange",
    "cochange_conf": "cochange",
    "cochange_support": "cochange",
    "cochange_reverse": "cochange",
    "cochange_given": "cochange",
    "cochange_rank": "cochange",
    "links_in": "caller",
    "links_out": "callee",
    "tests_link": "test",
    "test_pair": "test",
    "stem_sibling": "sibling",
    "stem_match": "same_name",
    "near_duplicate": "near_duplicate",
    "walk": "connected",
    "walk_rank": "connected",
    "same_dir": "same_directory",
    "dir_near": "same_directory",
    "path_tokens": "similar_path",
}
#: a reason is listed when its contribution is at least this share of the strongest one's
REASON_SHARE = 0.2
MAX_REASONS = 3


@dataclass(frozen=True)
class FileRanking:
    """The list (best first, ``files.list_size`` long) and every candidate's score in order."""

    files: tuple[RankedFile, ...]
    order: tuple[tuple[str, float], ...]
    model: FileModel
    rows: SignalRows


def file_weights(store: Store, settings: Settings) -> dict[str, float]:
    """The weights a ranking uses now: pinned, else fitted on this repository, else the prior."""
    if settings.files.weights:
        return dict(settings.files.weights)
    raw = store.get_meta(MODEL_META)
    if raw:
        try:
            weights = json.loads(raw).get("weights")
            if isinstance(weights, dict) and weights:
                return {str(k): float(v) for k, v in weights.items()}
        except (ValueError, TypeError, AttributeError):
            pass
    return dict(settings.files.prior)


def with_file_weights(store: Store, settings: Settings) -> Settings:
    """``settings`` with the weights in use pinned (``files.weights``): they enter the PackRoot."""
    if not settings.files.enabled:
        return settings
    pinned = FileModel(file_weights(store, settings)).as_dict()
    return dataclasses.replace(settings, files=dataclasses.replace(settings.files, weights=pinned))


def rank_files(
    store: Store,
    adjacency: Adjacency,
    settings: Settings,
    changed: Collection[str],
) -> FileRanking:
    """The ranked file list for a change of ``changed`` (module docstring). It reads every file's
    history (a candidate's own commits, recency and partner count are signals too) and the
    pairs of the changed files."""
    params = settings.files
    model = FileModel(file_weights(store, settings))
    inputs = _change_free_inputs(store, adjacency, settings)
    graph, content, universe = inputs.graph, inputs.sketches, inputs.universe
    if not all(universe.knows(path) for path in changed):  # the kept universe must not grow
        universe = universe.copy()
    state, partners = inputs.files_state, inputs.partner_counts
    if settings.history.enabled:  # the change's own pairs: all the signals read of the pairs
        try:
            state = state.with_pairs(store.history_pairs(changed))
        except StoreError:  # as a whole history that does not load: none
            state, partners = HistoryState.empty(settings.history), {}
    view = HistoryView(state, partners)
    rows = change_signals(changed, view, graph, content, universe, params)
    scores = model.scores(rows.values)
    ranked = sorted(range(len(rows.paths)), key=lambda i: (-scores[i], rows.paths[i]))
    order = tuple((rows.paths[i], round(float(scores[i]), 6)) for i in ranked)
    listed = ranked[: params.list_size]
    contributions = model.contributions(rows.values)
    explain = _Evidence(sorted(set(changed)), view, graph, content, rows)
    files = tuple(
        RankedFile(
            path=rows.paths[i],
            score=round(float(scores[i]), 6),
            reasons=(reasons := _reasons(contributions[i])),
            evidence=explain.of(i, reasons),
            signals=tuple(
                (name, round(float(value), 6))
                for name, value in zip(SIGNALS, rows.values[i].tolist(), strict=True)
                if value != 0.0
            ),
        )
        for i in listed
    )
    return FileRanking(files, order, model, rows)


def prepare_file_ranking(store: Store, adjacency: Adjacency, settings: Settings) -> None:
    """Read what ``rank_files`` reads whatever the change (kept per graph root in a process)."""
    _change_free_inputs(store, adjacency, settings)


@dataclass(frozen=True)
class _ChangeFree:
    """What the ranking reads that no change alters: the history's file rows (no pairs: a
    change reads its own), each file's partner count, the file graph, the sketches, the paths."""

    files_state: HistoryState
    partner_counts: Mapping[str, int]
    graph: FileGraph
    sketches: Sketches
    universe: FileUniverse


#: per process: the ``_ChangeFree`` inputs, by graph root and mined history
_INPUTS = Memo(capacity=2)


def _change_free_inputs(store: Store, adjacency: Adjacency, settings: Settings) -> _ChangeFree:
    """Read once per store state (``memo.store_state``) in a process (a warm server ranks many
    changes of one commit); the file graph, the sketches, the paths and the partner counts from
    the copy the index run kept for this state (``files_rank_inputs``) when there is one, else
    from the rows."""
    graph_root, commit = store.graph_root, store.indexed_commit

    def build() -> _ChangeFree:
        state = load_history(store, pairs_of=()) if settings.history.enabled else None
        tag = inputs_tag(graph_root, commit)
        inputs = cached_file_inputs(store, RANK_INPUTS_BLOB, tag) if graph_root else None
        if inputs is None:
            inputs = read_file_inputs(store, adjacency)
        if state is None:
            partners: Mapping[str, int] = {}
        elif inputs.partner_counts is not None:  # counted when the copy was kept
            partners = inputs.partner_counts
        else:
            partners = partner_counts(store.conn)
        return _ChangeFree(
            state if state is not None else HistoryState.empty(settings.history),
            partners,
            inputs.graph,
            inputs.sketches,
            FileUniverse.build(inputs.paths, is_test_path),
        )

    if not graph_root:
        return build()
    return _INPUTS.get((store_state(store), settings.history, adjacency.node_count), build)


def _reasons(contributions: npt.NDArray[np.float64]) -> tuple[str, ...]:
    by_reason: dict[str, float] = {}
    for name, value in zip(SIGNALS, contributions.tolist(), strict=True):
        reason = REASON_OF.get(name)
        if reason is not None and value > 0:
            by_reason[reason] = by_reason.get(reason, 0.0) + value
    if not by_reason:
        return ("similar_path",)
    ranked = sorted(by_reason.items(), key=lambda item: (-item[1], item[0]))
    strongest = ranked[0][1]
    return tuple(reason for reason, value in ranked[:MAX_REASONS] if value >= REASON_SHARE * strongest)


class _Evidence:
    """A listed file's reasons in words, each naming the changed file it relates to."""

    def __init__(
        self, changed: Sequence[str], view: HistoryView, graph: FileGraph, content: Sketches, rows: SignalRows
    ) -> None:
        self.changed = changed
        self.view = view
        self.graph = graph
        self.content = content
        self.rows = rows

    def of(self, row: int, reasons: Sequence[str]) -> str:
        path = self.rows.paths[row]
        parts = [text for reason in reasons if (text := self._say(reason, path, row))]
        return "; ".join(parts)

    def _say(self, reason: str, path: str, row: int) -> str:
        if reason == "cochange":
            return self._cochange(path)
        if reason in ("caller", "callee"):
            return self._links(reason, path)
        if reason == "test":
            return self._test(path)
        if reason == "sibling":
            return f"same name as {self._nearest(path)} in its directory"
        if reason == "same_name":
            return f"named like {self._nearest(path)}"
        if reason == "near_duplicate":
            share = self.rows.column("near_duplicate")[row]
            return f"{share:.0%} of its content alike with {self._most_alike(path)}"
        if reason == "connected":
            return "near the change in the file graph"
        if reason == "same_directory":
            return f"beside {self._nearest(path)}"
        return f"path like {self._nearest(path)}"

    def _cochange(self, path: str) -> str:
        best: tuple[float, int, int, str] | None = None
        for source in self.changed:
            together, _, _ = self.view.pair(source, path)
            commits = self.view.commits(source)
            if together and commits:
                candidate = (together / commits, together, commits, source)
                if best is None or candidate[:2] > best[:2]:
                    best = candidate
        if best is None:
            return ""
        _, together, commits, source = best
        return f"changed with {source} in {together} of its {commits} commits"

    def _links(self, reason: str, path: str) -> str:
        target = self.graph.index.get(path)
        if target is None:
            return ""
        best: tuple[float, str] | None = None
        for source in self.changed:
            at = self.graph.index.get(source)
            if at is None:
                continue
            count = self.graph.links.at(target, at) if reason == "caller" else self.graph.links.at(at, target)
            if count > 0 and (best is None or count > best[0]):
                best = (count, source)
        if best is None:
            return ""
        count, source = best
        verb = "uses" if reason == "caller" else "is used by"
        return f"{verb} {source} ({int(count)} link{'s' if count != 1 else ''})"

    def _test(self, path: str) -> str:
        test = is_test_path(path)
        partner = self._nearest(path)
        return f"tests {partner}" if test else f"tested by {partner}"

    def _most_alike(self, path: str) -> str:
        at = self.content.index.get(path)
        if at is None:
            return self._nearest(path)
        from knowing_pr.parse.sketch import resemblance

        sources = [
            (source, i) for source in self.changed if (i := self.content.index.get(source)) is not None
        ]
        if not sources:
            return self._nearest(path)
        # one pass over the changed files' sketches (a change may hold thousands of files)
        alike = resemblance(self.content.matrix[[i for _, i in sources]], self.content.matrix[at])
        return max(zip(alike.tolist(), (source for source, _ in sources), strict=True))[1]

    def _nearest(self, path: str) -> str:
        """The changed file whose path shares the most with ``path``."""

        def shared(source: str) -> tuple[int, str]:
            a, b = path.split("/"), source.split("/")
            common = 0
            for x, y in zip(a[:-1], b[:-1], strict=False):
                if x != y:
                    break
                common += 1
            stem_a, stem_b = a[-1].split(".", 1)[0].lower(), b[-1].split(".", 1)[0].lower()
            return (common * 2 + int(stem_a == stem_b or stem_a in stem_b or stem_b in stem_a), source)

        return max(self.changed, key=shared) if self.changed else ""
