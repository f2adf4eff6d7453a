"""The store at a commit (history mined, adjacency written) → the file model fitted on the
repository's own history, with the benchmark's protocol (``bench/cochange.py``): a past commit's
files, half given, the rest held out, only the history before it. Called inside the index run's
one transaction, after the adjacency:

1. **Recent commits.** The newest ``files.fit_window`` commits the miner applied (sha, time,
   paths; one JSON line each in meta ``files_recent``): an incremental run appends its commits
   without reading the others back, a run that mined from scratch replaces them.
2. **Training tasks.** Those that changed between ``fit_min_files`` and ``fit_max_files``
   indexed source files (the newest ``fit_tasks``), split as the benchmark splits (a seeded
   half given, the seed the commit's sha).
3. **Rows.** A task's candidates and signal values (``history.filesignals``) with the history as
   it stood before the commit (it and every newer commit taken out of the counts), the file
   graph and the content sketches; the held-out files and ``fit_negatives`` others (the prior's
   best and a seeded sample) are kept in the blob ``files_rows:<sha>`` (tagged with their
   order), so an incremental run extracts its new tasks' rows only. A full extraction reads the
   file graph and sketches from the store; an incremental one reuses the copy cached in the blob
   ``files_inputs`` (rebuilt after ``INPUTS_REFRESH`` runs): a row may see a file graph a few
   commits old, which keeps the hook path cheap.
4. **Fit** (``history.filemodel.fit_model``) after a full extraction, or once ``refit_every`` new
   tasks arrived (starting from the previous weights); fewer than ``fit_min_tasks`` tasks: the
   prior. Meta ``files_model`` keeps the weights, the tasks, the commit fitted at and the tasks
   that arrived since. The hook path defers the refit (``defer_refit``): its index run only
   extracts the new rows and counts them, and the hook's worker refits once the store reflects
   HEAD, in a transaction of its own (``refit_if_due``), so a commit never waits for a fit.

A full extraction runs for a full index, when the fit's settings changed (``_fit_key``), and when
the history was mined from scratch. Deterministic: a full index of a commit always gives the
same weights. An incremental run keeps the rows earlier runs extracted (with the file graph of
their time), so its weights can differ slightly from a full index of the same commit; a pack
records the weights it used (``rank/files.py``), and ``replay --verify`` ranks with those.
"""

from __future__ import annotations

import hashlib
import json
import random
import struct
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from knowing_pr.config import FileRankParams, Settings, canonical
from knowing_pr.history import HistoryState
from knowing_pr.history.fileinputs import FileGraph, FileUniverse, HistoryView, Sketches
from knowing_pr.history.filemodel import FileModel, TrainingTask, fit_model
from knowing_pr.history.filesignals import SIGNALS, change_signals
from knowing_pr.history.state import AppliedCommit
from knowing_pr.index.fileinputs import TrainingInputs, training_inputs
from knowing_pr.store import Store
from knowing_pr.store.filedata import MODEL_META

__all__ = [
    "MODEL_META",
    "RECENT_META",
    "ROWS_PREFIX",
    "FitReport",
    "refit_if_due",
    "split_task",
    "task_files",
    "training_rows",
    "update_file_model",
]

RECENT_META = "files_recent"
#: the history's mined head (``store.history``): the commit a deferred refit is fitted at
HISTORY_HEAD_META = "history_mined_head"
RECENT_HEAD_META = "files_recent_head"
ROWS_PREFIX = "files_rows:"
#: the rows' layout: a change of the signals makes every stored row stale
ROWS_FORMAT = "1:" + hashlib.sha256(",".join(SIGNALS).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class FitReport:
    """What one index run did to the file model."""

    tasks: int
    extracted: int
    refitted: bool
    extract_ms: float
    fit_ms: float


def update_file_model(
    store: Store,
    settings: Settings,
    state: HistoryState | None,
    *,
    before: HistoryState | None,
    extended_from: str | None,
    new_commits: int,
    full: bool,
    defer_refit: bool = False,
) -> FitReport:
    """Steps 1–4 of the module docstring (the transaction is the caller's). ``before`` is the
    state the mine extended (``None``: mined from scratch); ``defer_refit``: an incremental run
    keeps the weights even when a refit is due (``refit_if_due`` does it later)."""
    params = settings.files
    if not params.enabled or not params.fit or state is None or not settings.history.enabled:
        return FitReport(0, 0, False, 0.0, 0.0)
    t0 = time.perf_counter()
    key = _fit_key(params)
    previous = _load_model(store)
    recent_head = store.get_meta(RECENT_HEAD_META)
    appended = extended_from is not None and before is not None and recent_head == extended_from
    stale = full or previous is None or previous.get("key") != key or (new_commits > 0 and not appended)
    if stale:
        if full or (new_commits > 0 and not appended):  # mined from scratch: the mine has them all
            recent = list(state.recent)
        else:
            recent = [*_load_recent(store), *(state.recent if appended else ())]
        extracted, kept = _extract_all(store, state, recent[-params.fit_window :], params)
        start = None
        new_since = len(extracted)
    else:
        assert previous is not None
        if new_commits == 0 or before is None:
            return FitReport(int(previous.get("tasks", 0)), 0, False, 0.0, 0.0)
        _append_recent(store, state, params)
        extracted = _extract_new(store, state, before, params)
        kept = _trim_rows(store, params.fit_tasks)
        start = previous.get("weights")
        new_since = int(previous.get("new_since_fit", 0)) + len(extracted)
    t1 = time.perf_counter()
    refitted = stale or (new_since >= params.refit_every and not defer_refit)
    if refitted:
        training = _training(store, kept, extracted)
        weights = _fit(training, params, start)
        _save_model(store, weights, len(training), state.mined_head, key, 0)
    else:
        assert previous is not None
        _save_model(store, previous.get("weights", {}), len(kept), previous.get("fitted_at"), key, new_since)
    t2 = time.perf_counter()
    return FitReport(len(kept), len(extracted), refitted, (t1 - t0) * 1000, (t2 - t1) * 1000)


def refit_if_due(store: Store, settings: Settings) -> FitReport:
    """The refit an index run deferred (``defer_refit``): when ``refit_every`` new tasks arrived
    since the last fit, fit on the stored rows from the previous weights (the transaction is the
    caller's). Nothing when no refit is due or the fit's settings changed since (the next
    index run extracts anew)."""
    params = settings.files
    previous = _load_model(store)
    if (
        not params.enabled
        or not params.fit
        or previous is None
        or previous.get("key") != _fit_key(params)
        or int(previous.get("new_since_fit", 0)) < params.refit_every
    ):
        return FitReport(int(previous.get("tasks", 0)) if previous else 0, 0, False, 0.0, 0.0)
    t0 = time.perf_counter()
    kept = _trim_rows(store, params.fit_tasks)
    training = _training(store, kept, {})
    weights = _fit(training, params, previous.get("weights"))
    head = store.get_meta(HISTORY_HEAD_META) or previous.get("fitted_at")
    _save_model(store, weights, len(training), head, _fit_key(params), 0)
    return FitReport(len(training), 0, True, 0.0, (time.perf_counter() - t0) * 1000)


def _training(store: Store, kept: Sequence[str], extracted: Mapping[str, TrainingTask]) -> list[TrainingTask]:
    """The kept tasks' rows, oldest first: this run's from memory, the others from the store."""
    loaded = {sha: _decode(data) for sha, data in _rows_data(store, set(kept) - set(extracted))}
    return [
        extracted[sha] if sha in extracted else loaded[sha]
        for sha in kept
        if sha in extracted or sha in loaded
    ]


# -- 1. recent commits ---------------------------------------------------------------------------


def _commit_line(commit: AppliedCommit) -> str:
    return json.dumps([commit.sha, commit.time, list(commit.touched)], separators=(",", ":"))


def _save_recent(store: Store, head: str | None, lines: Sequence[str]) -> None:
    store.set_meta(RECENT_META, "\n".join(lines))
    store.set_meta(RECENT_HEAD_META, head or "")


def _append_recent(store: Store, state: HistoryState, params: FileRankParams) -> None:
    """Append this run's commits to the stored list (one JSON line each, not parsed again)."""
    raw = store.get_meta(RECENT_META) or ""
    lines = [*(raw.split("\n") if raw else []), *(_commit_line(c) for c in state.recent)]
    _save_recent(store, state.mined_head, lines[-params.fit_window :])


def _load_recent(store: Store) -> list[AppliedCommit]:
    raw = store.get_meta(RECENT_META)
    commits: list[AppliedCommit] = []
    for line in (raw or "").split("\n"):
        try:
            sha, when, paths = json.loads(line)
            commits.append(AppliedCommit(str(sha), int(when), tuple(str(p) for p in paths)))
        except (ValueError, TypeError):
            continue
    return commits


# -- 2. training tasks ---------------------------------------------------------------------------


def task_files(commit: AppliedCommit, indexed: set[str], params: FileRankParams) -> list[str] | None:
    """The indexed source files a commit changed, when it makes a training task."""
    files = sorted(p for p in commit.touched if p in indexed)
    return files if params.fit_min_files <= len(files) <= params.fit_max_files else None


def split_task(files: Sequence[str], sha: str) -> tuple[list[str], set[str]]:
    """(given, held out): the benchmark's split — a half (rounded up), seeded by the commit."""
    shuffled = sorted(files)
    random.Random(sha).shuffle(shuffled)
    given = (len(shuffled) + 1) // 2
    return sorted(shuffled[:given]), set(shuffled[given:])


def _training_commits(
    recent: Sequence[AppliedCommit], indexed: set[str], params: FileRankParams
) -> list[AppliedCommit]:
    eligible = [c for c in recent if task_files(c, indexed, params) is not None]
    return eligible[-params.fit_tasks :] if params.fit_tasks > 0 else []


# -- 3. rows -------------------------------------------------------------------------------------


def _extract_all(
    store: Store, state: HistoryState, recent: Sequence[AppliedCommit], params: FileRankParams
) -> tuple[dict[str, TrainingTask], list[str]]:
    """Every training task's rows anew (a full index, or the fit's settings changed), from the
    ``recent`` commits. Returns the rows and the training tasks' shas, oldest first."""
    _save_recent(store, state.mined_head, [_commit_line(c) for c in recent])
    _delete_rows(store, list(_stored_rows(store)))
    indexed = set(store.indexed_paths())
    tasks = _training_commits(recent, indexed, params)
    if not tasks:
        return {}, []
    inputs = training_inputs(store, fresh=True)
    previous = _previous_changes(recent)
    wanted = {c.sha: n for n, c in enumerate(tasks)}
    oldest = min(i for i, c in enumerate(recent) if c.sha in wanted)
    view = HistoryView(state)
    out: dict[str, TrainingTask] = {}
    for i in range(len(recent) - 1, oldest - 1, -1):
        commit = recent[i]
        view.take_out(commit, previous[i])
        if commit.sha in wanted:
            out[commit.sha] = _store_task(store, commit, indexed, view, inputs, params, wanted[commit.sha])
    return out, [c.sha for c in tasks]


def _extract_new(
    store: Store, state: HistoryState, before: HistoryState, params: FileRankParams
) -> dict[str, TrainingTask]:
    """Rows of the training tasks among the commits this run mined (the newest ``fit_tasks``),
    each with the history before it; when a path changed before is told by ``before``."""
    new = list(state.recent)
    touched = {p for c in new for p in c.touched}
    indexed = store.indexed_among(touched)
    tasks = [c for c in new if task_files(c, indexed, params) is not None][-params.fit_tasks :]
    if not tasks:
        return {}
    inputs = training_inputs(store, fresh=False)
    seen = {p: s.last_time for p in touched if (s := before.files.get(p)) is not None}
    previous: list[dict[str, int | None]] = []
    for commit in new:
        previous.append({p: seen.get(p) for p in commit.touched})
        seen.update(dict.fromkeys(commit.touched, commit.time))
    sequence = _next_sequence(store)
    wanted = {c.sha: sequence + n for n, c in enumerate(tasks)}
    view = HistoryView(state)
    out: dict[str, TrainingTask] = {}
    for i in range(len(new) - 1, -1, -1):
        commit = new[i]
        view.take_out(commit, previous[i])
        if commit.sha in wanted:
            out[commit.sha] = _store_task(store, commit, indexed, view, inputs, params, wanted[commit.sha])
        if len(out) == len(wanted):
            break
    return out


def _store_task(
    store: Store,
    commit: AppliedCommit,
    indexed: set[str],
    view: HistoryView,
    inputs: TrainingInputs,
    params: FileRankParams,
    sequence: int,
) -> TrainingTask:
    files = task_files(commit, indexed, params)
    assert files is not None
    task = training_rows(commit.sha, files, view, inputs.graph, inputs.sketches, inputs.universe, params)
    store.put_blob(ROWS_PREFIX + commit.sha, f"{ROWS_FORMAT}:{sequence}", _encode(task))
    return task


def _trim_rows(store: Store, keep: int) -> list[str]:
    """Drop the oldest stored tasks beyond ``keep``; the shas kept, oldest first."""
    ordered = sorted(_stored_rows(store).items(), key=lambda item: (item[1], item[0]))
    _delete_rows(store, [sha for sha, _ in ordered[: max(len(ordered) - keep, 0)]])
    return [sha for sha, _ in ordered[max(len(ordered) - keep, 0) :]]


def _next_sequence(store: Store) -> int:
    return max(_stored_rows(store).values(), default=-1) + 1


def training_rows(
    sha: str,
    files: Sequence[str],
    view: HistoryView,
    graph: FileGraph,
    content: Sketches,
    universe: FileUniverse,
    params: FileRankParams,
) -> TrainingTask:
    """One task's rows: every held-out candidate and ``fit_negatives`` others."""
    given, held = split_task(files, sha)
    rows = change_signals(given, view, graph, content, universe, params)
    labels = np.array([p in held for p in rows.paths], dtype=bool)
    keep = _kept_rows(rows.values, labels, sha, params)
    return TrainingTask(rows.values[keep], labels[keep])


def _kept_rows(
    values: npt.NDArray[np.float64], labels: npt.NDArray[np.bool_], sha: str, params: FileRankParams
) -> npt.NDArray[np.int64]:
    """The held-out rows, the prior's best others (two thirds) and a seeded sample of the rest."""
    others = np.flatnonzero(~labels)
    if others.size <= params.fit_negatives:
        return np.arange(labels.size)
    logits = FileModel(params.prior).logits(values[others])
    order = others[np.lexsort((others, -logits))]
    best = (params.fit_negatives * 2) // 3
    rest = order[best:].tolist()
    sample = random.Random(sha).sample(rest, min(len(rest), params.fit_negatives - best))
    return np.sort(np.concatenate([np.flatnonzero(labels), order[:best], np.array(sample, dtype=np.int64)]))


def _previous_changes(recent: Sequence[AppliedCommit]) -> list[dict[str, int | None]]:
    """For each commit, when each of its paths changed before it (within ``recent``)."""
    seen: dict[str, int] = {}
    out: list[dict[str, int | None]] = []
    for commit in recent:
        out.append({path: seen.get(path) for path in commit.touched})
        for path in commit.touched:
            seen[path] = commit.time
    return out


def _encode(task: TrainingTask) -> bytes:
    n, width = task.values.shape
    return (
        struct.pack("<II", n, width)
        + np.ascontiguousarray(task.values, dtype="<f4").tobytes()
        + np.ascontiguousarray(task.held, dtype=np.uint8).tobytes()
    )


def _decode(data: bytes) -> TrainingTask:
    n, width = struct.unpack_from("<II", data)
    values = np.frombuffer(data, dtype="<f4", count=n * width, offset=8).astype(np.float64).reshape(n, width)
    held = np.frombuffer(data, dtype=np.uint8, count=n, offset=8 + 4 * n * width).astype(bool)
    return TrainingTask(values, held)


def _stored_rows(store: Store) -> dict[str, int]:
    """sha → sequence number of every stored task's rows (in the current layout)."""
    rows = store.conn.execute(
        "SELECT name, tag FROM blobs WHERE name >= ? AND name < ?", (ROWS_PREFIX, ROWS_PREFIX[:-1] + ";")
    )
    out: dict[str, int] = {}
    for name, tag in rows:
        layout, _, sequence = str(tag).rpartition(":")
        if layout == ROWS_FORMAT and sequence.isdigit():
            out[str(name)[len(ROWS_PREFIX) :]] = int(sequence)
    return out


def _rows_data(store: Store, shas: set[str]) -> list[tuple[str, bytes]]:
    """(sha, stored rows) of the given tasks, in one read."""
    rows = store.conn.execute(
        "SELECT name, tag, data FROM blobs WHERE name >= ? AND name < ?",
        (ROWS_PREFIX, ROWS_PREFIX[:-1] + ";"),
    )
    out = []
    for name, tag, data in rows:
        sha = str(name)[len(ROWS_PREFIX) :]
        if sha in shas and str(tag).rpartition(":")[0] == ROWS_FORMAT:
            out.append((sha, bytes(data)))
    return sorted(out)


def _delete_rows(store: Store, shas: Sequence[str]) -> None:
    store.conn.executemany("DELETE FROM blobs WHERE name = ?", [(ROWS_PREFIX + sha,) for sha in shas])


# -- 4. fit --------------------------------------------------------------------------------------


def _fit_key(params: FileRankParams) -> str:
    fit_settings = {
        k: v
        for k, v in canonical(params).items()
        if k in ("prior", "regularization", "objective", "fit_window", "fit_tasks", "fit_min_tasks")
        or k.startswith(("fit_", "max_", "min_", "near_", "walk_"))
    }
    text = json.dumps([ROWS_FORMAT, fit_settings], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _fit(
    training: Sequence[TrainingTask], params: FileRankParams, start: Mapping[str, float] | None
) -> dict[str, float]:
    if len(training) < params.fit_min_tasks:
        return FileModel(params.prior).as_dict()
    model = fit_model(
        training, params.prior, regularization=params.regularization, objective=params.objective, start=start
    )
    return model.as_dict()


def _load_model(store: Store) -> dict[str, Any] | None:
    raw = store.get_meta(MODEL_META)
    if not raw:
        return None
    try:
        loaded = json.loads(raw)
    except ValueError:
        return None
    return loaded if isinstance(loaded, dict) else None


def _save_model(
    store: Store, weights: object, tasks: int, fitted_at: object, key: str, new_since_fit: int
) -> None:
    payload = {
        "weights": weights,
        "tasks": tasks,
        "fitted_at": fitted_at,
        "key": key,
        "new_since_fit": new_since_fit,
    }
    store.set_meta(MODEL_META, json.dumps(payload, sort_keys=True, separators=(",", ":")))
