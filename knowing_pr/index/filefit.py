"""The store at a commit (history mined, adjacency written) → the file model fitted on the
repository's own history, with the benchmark's protocol (``bench/cochange.py``): a past commit's
files, half given, the rest held out, only the history before it. Called inside the index run's
one transaction, after the adjacency:

1. **Recent commits.** The newest ``files.fit_window`` commits of the head's history the miner
   applied (sha, time, paths; one JSON line each in meta ``files_recent``, for the head in
   ``files_recent_head``): a run that extended the history appends its commits to those of the
   head it extended, a run that mined from scratch takes the mine's.
2. **Training tasks.** Those that changed between ``fit_min_files`` and ``fit_max_files``
   indexed source files (the newest ``fit_tasks``), split as the benchmark splits (a seeded
   half given, the seed the commit's sha).
3. **Rows.** A task's candidates and signal values (``history.filesignals``) with the history as
   it stood before the commit (it and every newer commit taken out of the counts), the file
   graph and the content sketches of the head (read from the store); the held-out files and
   ``fit_negatives`` others (the prior's best and a seeded sample) are kept in the blob
   ``files_rows:<sha>`` (tagged with their order).
4. **Fit** (``history.filemodel.fit_model``) from the prior; fewer than ``fit_min_tasks`` tasks:
   the prior itself. Meta ``files_model`` keeps the weights, the tasks and the commit fitted at.

The model is a function of the head's history and tree and the fit's settings only: every head
is fitted anew (about 0.2 s on a repository of a few thousand commits), never by updating the
weights of the commit the store was at before, so a pack's weights do not depend on the commits
the store went through (docs/packroot.md). The model fitted at each of the last ``KEPT_MODELS``
heads is kept (blob ``files_model_at:<sha>``): a store that comes back to a head takes it.
The hook path defers the fit (``defer_refit``): its index run keeps the recent commits, and the
hook's worker fits once the store reflects HEAD, in a transaction of its own (``refit_if_due``),
so a commit never waits for a fit; a command that ranks with the model fits first when one is
pending (``index/commit.py``). ``files.refit_every`` is no longer read (it stays a parameter so
the parameters recorded in packs keep their digest).
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
from knowing_pr.index.history import RECENT_HEAD_META, RECENT_META, recent_line, recent_tag
from knowing_pr.index.report import settings_key
from knowing_pr.store import Store
from knowing_pr.store.filedata import MODEL_META
from knowing_pr.store.history import load_history

__all__ = [
    "MODEL_META",
    "RECENT_META",
    "load_recent",
    "ROWS_PREFIX",
    "FitReport",
    "fit_pending",
    "refit_if_due",
    "split_task",
    "task_files",
    "training_rows",
    "update_file_model",
]

#: the history's mined head (``store.history``): the commit a deferred refit is fitted at
HISTORY_HEAD_META = "history_mined_head"
#: the models fitted at earlier heads (blob per head, tagged with the fit's settings key)
KEPT_MODEL_PREFIX = "files_model_at:"
KEPT_MODELS_META = "files_model_heads"
KEPT_MODELS = 32
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
    extended_from: str | None,
    full: bool,
    defer_refit: bool = False,
) -> FitReport:
    """Steps 1–4 of the module docstring (the transaction is the caller's): the recent commits of
    ``state``'s head kept, and the model fitted at that head unless it already is (or a fit at
    it is kept). ``extended_from``: the head the mine extended (``None``: mined from scratch or
    nothing new); ``defer_refit`` (the hook path): keep the recent commits and leave the fit to
    ``refit_if_due``."""
    params = settings.files
    if not params.enabled or not params.fit or state is None or not settings.history.enabled:
        store.set_meta(MODEL_META, "")  # no fit in use: the prior, never an earlier fit's weights
        return FitReport(0, 0, False, 0.0, 0.0)
    recent = _recent_at_head(store, state, extended_from, params)
    _save_recent(store, recent_tag(state.mined_head, params.fit_window), [recent_line(c) for c in recent])
    key = _fit_key(settings)
    previous = _load_model(store)
    if not full and previous is not None and _fitted_at(previous, key, state.mined_head):
        return FitReport(int(previous.get("tasks", 0)), 0, False, 0.0, 0.0)
    if not full and _restore_kept_model(store, state.mined_head, key):
        return FitReport(int((_load_model(store) or {}).get("tasks", 0)), 0, False, 0.0, 0.0)
    if defer_refit:
        if previous is not None:
            tasks = int(previous.get("tasks", 0))
            _save_model(store, previous.get("weights", {}), tasks, previous.get("fitted_at"), key, 1)
        return FitReport(0, 0, False, 0.0, 0.0)
    return _fit_at_head(store, state, recent, settings)


def refit_if_due(store: Store, settings: Settings) -> FitReport:
    """The fit an index run deferred (``defer_refit``): when the model was not fitted at the
    store's history head, fit it there as an index run would (the transaction is the caller's).
    Nothing when it is, or when the kept recent commits are not that head's (the next index run
    mines and fits anew)."""
    params = settings.files
    head = store.get_meta(HISTORY_HEAD_META)
    if not params.enabled or not params.fit or not settings.history.enabled:
        if store.get_meta(MODEL_META):
            store.set_meta(MODEL_META, "")  # no fit in use: the prior, never an earlier fit's weights
        return FitReport(0, 0, False, 0.0, 0.0)
    if not head:
        return FitReport(0, 0, False, 0.0, 0.0)
    key = _fit_key(settings)
    previous = _load_model(store)
    if previous is not None and _fitted_at(previous, key, head):
        return FitReport(int(previous.get("tasks", 0)), 0, False, 0.0, 0.0)
    if _restore_kept_model(store, head, key):
        return FitReport(int((_load_model(store) or {}).get("tasks", 0)), 0, True, 0.0, 0.0)
    state = load_history(store)
    if (
        state is None
        or state.mined_head != head
        or store.get_meta(RECENT_HEAD_META) != recent_tag(head, settings.files.fit_window)
    ):
        return FitReport(0, 0, False, 0.0, 0.0)
    return _fit_at_head(store, state, load_recent(store), settings)


def fit_pending(store: Store, settings: Settings) -> bool:
    """Whether the model in the store is not the one fitted at its history head with these
    settings (a hook's run deferred the fit, or the fit's settings changed since)."""
    params = settings.files
    if not params.enabled or not params.fit or not settings.history.enabled:
        return bool(store.get_meta(MODEL_META))
    head = store.get_meta(HISTORY_HEAD_META)
    previous = _load_model(store)
    return bool(head) and (previous is None or not _fitted_at(previous, _fit_key(settings), head))


def _fitted_at(model: Mapping[str, Any], key: str, head: str | None) -> bool:
    return model.get("key") == key and model.get("fitted_at") == head and not model.get("new_since_fit")


def _recent_at_head(
    store: Store, state: HistoryState, extended_from: str | None, params: FileRankParams
) -> list[AppliedCommit]:
    """The newest ``fit_window`` commits of the history of ``state``'s head, oldest first: the
    kept ones of the head it extended plus the ones it applied, the kept ones when the head did
    not move, else (mined from scratch) the ones the mine applied."""
    kept = store.get_meta(RECENT_HEAD_META)
    if extended_from is not None and kept == recent_tag(extended_from, params.fit_window):
        return [*load_recent(store), *state.recent][-params.fit_window :]
    if kept and kept == recent_tag(state.mined_head, params.fit_window) and not state.recent:
        return load_recent(store)[-params.fit_window :]
    return list(state.recent)[-params.fit_window :]


def _fit_at_head(
    store: Store, state: HistoryState, recent: Sequence[AppliedCommit], settings: Settings
) -> FitReport:
    """Every training task's rows from ``recent`` with the store's inputs, fitted from the prior:
    a function of the head's history and tree only. The weights are kept for the head too."""
    params = settings.files
    t0 = time.perf_counter()
    extracted, kept = _extract_all(store, state, recent, params)
    t1 = time.perf_counter()
    training = _training(store, kept, extracted)
    weights = _fit(training, params, None)
    key = _fit_key(settings)
    _save_model(store, weights, len(training), state.mined_head, key, 0)
    _keep_model(store, state.mined_head, key)
    t2 = time.perf_counter()
    return FitReport(len(kept), len(extracted), True, (t1 - t0) * 1000, (t2 - t1) * 1000)


# -- models kept per head ------------------------------------------------------------------------


def _keep_model(store: Store, head: str | None, key: str) -> None:
    """Keep the model just saved as the one fitted at ``head`` (the newest ``KEPT_MODELS`` are
    kept), so a store that comes back to ``head`` takes it instead of fitting again."""
    raw = store.get_meta(MODEL_META)
    if not head or not raw:
        return
    store.put_blob(KEPT_MODEL_PREFIX + head, key, raw.encode())
    heads = [h for h in (store.get_meta(KEPT_MODELS_META) or "").split() if h != head] + [head]
    for old in heads[:-KEPT_MODELS]:
        store.conn.execute("DELETE FROM blobs WHERE name = ?", (KEPT_MODEL_PREFIX + old,))
    store.set_meta(KEPT_MODELS_META, " ".join(heads[-KEPT_MODELS:]))


def _restore_kept_model(store: Store, head: str | None, key: str) -> bool:
    """Make the model kept for ``head`` (fitted with the settings ``key``) the store's; False
    when there is none."""
    found = store.get_blob(KEPT_MODEL_PREFIX + head) if head else None
    if found is None or found[0] != key:
        return False
    store.set_meta(MODEL_META, found[1].decode())
    return True


def _training(store: Store, kept: Sequence[str], extracted: Mapping[str, TrainingTask]) -> list[TrainingTask]:
    """The kept tasks' rows, oldest first: this run's from memory, the others from the store."""
    loaded = {sha: _decode(data) for sha, data in _rows_data(store, set(kept) - set(extracted))}
    return [
        extracted[sha] if sha in extracted else loaded[sha]
        for sha in kept
        if sha in extracted or sha in loaded
    ]


# -- 1. recent commits ---------------------------------------------------------------------------


def _save_recent(store: Store, tag: str, lines: Sequence[str]) -> None:
    store.set_meta(RECENT_META, "\n".join(lines))
    store.set_meta(RECENT_HEAD_META, tag)


def load_recent(store: Store) -> list[AppliedCommit]:
    """The recent commits the store keeps for the file model (``RECENT_META``), oldest first."""
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
    _delete_rows(store, list(_stored_rows(store)))
    indexed = set(store.indexed_paths())
    tasks = _training_commits(recent, indexed, params)
    if not tasks:
        return {}, []
    inputs = training_inputs(store)
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


def _fit_key(settings: Settings) -> str:
    """What a fitted model depends on besides the head: the fit's own settings, the history's
    (how the training commits were mined) and the index's (the file graph it reads). A model kept
    under another key is never taken (a store indexed with other settings fits anew)."""
    params = settings.files
    fit_settings = {
        k: v
        for k, v in canonical(params).items()
        if k in ("prior", "regularization", "objective", "fit_window", "fit_tasks", "fit_min_tasks")
        or k.startswith(("fit_", "max_", "min_", "near_", "walk_"))
    }
    inputs = {"history": canonical(settings.history), "index": settings_key(settings)}
    text = json.dumps([ROWS_FORMAT, fit_settings, inputs], sort_keys=True)
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
