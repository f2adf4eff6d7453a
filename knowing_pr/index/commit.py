"""A commit of a git repository → the store brought to that commit: ``index_commit``, the write
path's entry. A store already at the commit with the same settings answers at once; otherwise the
run (``run.py``: diff → classify → parse → resolve → store → roots → history → cache → fit → meta,
in one transaction) is loaded and does the work. Damage found before writing or by a query moves
the file aside and rebuilds, once.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from knowing_pr.config import Settings, default_db_path
from knowing_pr.errors import StoreCorrupt
from knowing_pr.index.fileinputs import refresh_file_inputs
from knowing_pr.index.history import WALK_META, walk_meta
from knowing_pr.index.parse import Progress
from knowing_pr.index.report import IndexReport, settings_key
from knowing_pr.store import Store, is_damage
from knowing_pr.store.commitwords import COMMITS_HEAD_META
from knowing_pr.store.filedata import RANK_INPUTS_BLOB, inputs_tag
from knowing_pr.store.history import META_PREFIX as HISTORY_META_PREFIX
from knowing_pr.store.opening import move_aside_or_fail, open_store

if TYPE_CHECKING:
    from knowing_pr.git import GitRepo
    from knowing_pr.index.run import IndexRun

__all__ = ["index_commit"]


def index_commit(
    repo: GitRepo,
    settings: Settings,
    *,
    rev: str | None = None,
    full: bool = False,
    db_path: Path | None = None,
    progress: Progress | None = None,
    defer_refit: bool = False,
) -> IndexReport:
    """Bring the store to ``rev`` (default HEAD): incremental from the indexed commit when it
    can be, full otherwise. Everything is written in one transaction. ``defer_refit`` (the hook
    path): an incremental run keeps the file model's weights even when a refit is due
    (``filefit.refit_if_due`` does it later)."""
    t0 = time.perf_counter()
    target = repo.resolve(rev) if rev else repo.head_commit()
    path = db_path or default_db_path(repo.git_dir)
    store, recovered = open_store(path)
    try:
        with _no_cycle_collection():
            current = None if full else _up_to_date(store, settings, target, recovered, defer_refit)
            if current is not None:
                return current
            return _run(repo, settings, target, full, progress, t0, defer_refit).index(store, recovered)
    except Exception as exc:
        if not isinstance(exc, StoreCorrupt) and not is_damage(exc):
            raise  # disk full, locked, read-only, bugs: not the file's fault
        # damage found before writing or by a query: move the file aside and rebuild, once
        store.close()
        moved = move_aside_or_fail(path)
        store = Store.open(path)
        return _run(repo, settings, target, True, progress, t0, defer_refit).index(store, moved.name)
    finally:
        store.close()


def _up_to_date(
    store: Store, settings: Settings, target: str | None, recovered: str | None, defer_refit: bool
) -> IndexReport | None:
    """The report of a run with nothing to do (the store is at ``target`` with these settings),
    else None. An up-to-date store from before the ranking's copy of the file inputs existed
    gets it once (one tag read otherwise); the hook's runs leave it to the idle worker."""
    previous = store.indexed_commit
    if previous != (target or None) or not store.graph_root:
        return None
    if store.get_meta("settings_key") != settings_key(settings) or _history_params_changed(store, settings):
        return None
    if _commit_subjects_missing(store, settings):
        return None
    if not defer_refit and settings.files.enabled:
        tag = inputs_tag(store.graph_root, target)
        if store.blob_tag(RANK_INPUTS_BLOB) != tag:
            with store.transaction():
                refresh_file_inputs(store, tag)
        _fit_if_pending(store, settings)
    return IndexReport(target, previous, store.graph_root or "", "up-to-date", recovered_from=recovered)


def _commit_subjects_missing(store: Store, settings: Settings) -> bool:
    """Whether the past commits' subjects (``store/commitwords.py``) are not those of the mined
    history (a store from before the table): the run fills them in."""
    mined = store.get_meta(HISTORY_META_PREFIX + "mined_head")
    return settings.history.enabled and bool(mined) and store.get_meta(COMMITS_HEAD_META) != mined


def _history_params_changed(store: Store, settings: Settings) -> bool:
    """Whether the mined history was mined with other parameters than ``settings`` asks (the
    run then mines it again: a pack's history is the one its recorded parameters give)."""
    params = settings.history
    if not params.enabled or not store.get_meta(HISTORY_META_PREFIX + "mined_head"):
        return False
    mined_with = {
        "half_life_days": repr(params.half_life_days),
        "max_files_per_commit": str(params.max_files_per_commit),
        **dict(zip(WALK_META, walk_meta(params), strict=True)),
    }
    return any(store.get_meta(HISTORY_META_PREFIX + k) != v for k, v in mined_with.items())


def _fit_if_pending(store: Store, settings: Settings) -> None:
    """The file model fitted at the store's head when a hook's run deferred it (or the fit's
    settings changed): a pack never ranks with a model fitted at another commit."""
    from knowing_pr.index.filefit import fit_pending, refit_if_due

    if fit_pending(store, settings):
        with store.transaction():
            refit_if_due(store, settings)


def _run(
    repo: GitRepo,
    settings: Settings,
    target: str | None,
    full: bool,
    progress: Progress | None,
    t0: float,
    defer_refit: bool,
) -> IndexRun:
    """The run that brings the store to ``target`` (its phases and their imports load only now:
    a command on an up-to-date store never needs them)."""
    from knowing_pr.index.run import IndexRun

    return IndexRun(repo, settings, target, full, progress, t0, defer_refit)


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """The cyclic garbage collector paused while a run builds its records: a full index makes
    millions of small objects with almost no cycles, and the collector's passes over them took a
    fifth of the time (bench/ab_speed.py); reference counting still frees everything. Forked
    parse workers inherit the pause."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
