"""A commit → the history phase of an index run: the commits not mined yet mined, the state
persisted, the co-change edges rewritten, the history's predictiveness measured (called inside
the index run's one transaction):

1. load the ``HistoryState`` persisted by the previous run (tables ``hist_files`` and
   ``hist_pairs`` plus ``history_*`` meta keys) and mine only the commits it has not seen
   (``knowing_pr.history.mine_history``); ``--full`` mines from scratch. In a shallow clone
   what is there is mined, ``history_shallow`` says so, and a cached state that holds more
   commits than a fresh mine of the truncated history is kept;
2. rewrite the ``co_changed_with`` edges (origin ``<history>``) between module nodes: for
   each file, its ``cochange_max_partners`` partners with the highest confidence
   ``together / commits(file)``, kept when ``together >= min_support``; the edge's
   ``confidence`` is that ratio. They are built from counts only (no decay), so an
   incremental run and a full run write the same rows, and the adjacency blob stays a pure
   function of (tree, history);
3. measure how *predictive* the history is: replay the last ``predictiveness_window``
   first-parent commits, leave-one-out against the counts, and record the mean recall of
   the top ``predictiveness_top_k`` co-change partners (meta ``history_predictiveness``).
   The file lists of those commits are memoised in meta, so a run that adds one commit
   diffs one commit.

The rank-time side (the walk share, recency, the PR's co-change evidence and file order) is
``rank/signals.py``.

An incremental mine rewrites only the ``hist_*`` rows and the co-change edges of the files it
touched (``HistoryState.delta``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from knowing_pr.config import HistoryParams, Settings
from knowing_pr.errors import RepoError
from knowing_pr.git import GitRepo
from knowing_pr.git.renames import RenameRule
from knowing_pr.graph import module_name
from knowing_pr.history import HistoryState, cochange_edges, mine_history, predictiveness
from knowing_pr.history.mine import StartedWindow, rename_rule, start_window
from knowing_pr.history.state import AppliedCommit
from knowing_pr.index.historyahead import MineAhead, start_mine_ahead
from knowing_pr.index.historykeep import keep_state, kept_state_for
from knowing_pr.model import SymbolKind, node_id
from knowing_pr.store import Store
from knowing_pr.store.commitwords import COMMITS_HEAD_META, CommitRows, append_commits, clear_commits
from knowing_pr.store.history import HISTORY_ORIGIN, META_PREFIX, load_history, save_history

#: meta keys of the file model's recent commits (one ``recent_line`` each) and what they were
#: kept for: the head and the window (``recent_tag``; ``index/filefit.py``)
RECENT_META = "files_recent"
RECENT_HEAD_META = "files_recent_head"


def recent_tag(head: str | None, window: int) -> str:
    """``RECENT_HEAD_META``'s value for the newest ``window`` commits of ``head``'s history: rows
    kept for another head, or for another ``files.fit_window``, are not these (a store's past)."""
    return f"{head}:{window}" if head else ""


__all__ = ["HistoryUpdate", "WindowAhead", "recent_kept", "start_mine_from_scratch", "update_history"]


@dataclass(frozen=True)
class HistoryUpdate:
    """What one index run did to the history."""

    mined_head: str | None
    mined_commits: int
    shallow: bool
    kept_cached: bool
    cochange_edges: int
    predictiveness: float | None
    #: the mined state (with the commits this run applied on ``recent``), for the file model's fit
    state: HistoryState | None = field(default=None, repr=False, compare=False)
    #: the head the mine extended (``None``: mined from scratch)
    extended_from: str | None = None
    #: seconds the mine itself took (the walk, git's log read and the counts; the rest of the
    #: phase writes the state, its kept copy, the co-change edges and the commit subjects); a mine
    #: run ahead in a child process (``index/historyahead.py``) timed there
    mine_seconds: float = field(default=0.0, compare=False)
    #: a mine run ahead and taken: the seconds this phase waited for it and read it (None: mined
    #: in process)
    ahead_wait_seconds: float | None = field(default=None, compare=False)


def recent_kept(settings: Settings) -> int:
    """How many of the newest mined commits a mine keeps for the file model's fit (``recent``):
    ``files.fit_window`` when the model is fitted, else none."""
    return settings.files.fit_window if settings.files.enabled and settings.files.fit else 0


@dataclass(frozen=True)
class WindowAhead:
    """A mine from scratch started in this process (``start_mine_from_scratch(child=False)``): its
    window walked and git diffing its commits while the run resolves and stores (one core), the
    subjects' rows built while git has printed nothing new; the history step reads it."""

    window: StartedWindow
    built: CommitRows

    def drop(self) -> None:
        """Stop git if it still runs (read, or not needed after all)."""
        self.window.close()


def start_mine_from_scratch(
    repo: GitRepo, store: Store, settings: Settings, target: str, *, full: bool, child: bool
) -> MineAhead | WindowAhead | None:
    """A mine of ``target``'s history from scratch started now, when ``update_history(full=full)``
    will mine it from scratch: a full run, or a store with no history yet. ``child``: mined whole
    in a child process (``index/historyahead.py``), which opens the repository's git dir as this
    run's history step would (a served one, ``git/served.py``, walks the history with pygit2 in
    this process, on that same git dir); else only git runs ahead, its records read here by the
    history step (``WindowAhead``). ``update_history`` takes either. None for a history that is
    off or not mined from scratch, or where nothing can start."""
    if not settings.history.enabled:
        return None
    if not full and store.get_meta(META_PREFIX + "mined_head") is not None:
        return None  # a stored history: extended, or a kept state restored
    if child:
        return start_mine_ahead(repo.git_dir, repo.resolve(target), settings.history, recent_kept(settings))
    built = CommitRows()
    try:
        window = start_window(repo, target, settings.history, idle=built.build_some)
    except RepoError:
        return None  # the history step walks again and says what failed, in its place
    return WindowAhead(window, built)


# -- persistence --------------------------------------------------------------------------------


def update_history(
    repo: GitRepo,
    store: Store,
    settings: Settings,
    target: str | None,
    *,
    full: bool,
    ahead: MineAhead | WindowAhead | None = None,
) -> HistoryUpdate:
    """Mine what is new up to ``target``, persist it, rewrite the co-change edges (one transaction
    is the caller's). ``ahead``: a mine from scratch of ``target`` started earlier
    (``start_mine_from_scratch``), taken where this run mines from scratch (else dropped; a
    failed child's is mined here)."""
    params = settings.history
    if not params.enabled or target is None:
        store.delete_edges_from([HISTORY_ORIGIN])
        store.set_meta(META_PREFIX + "edges_head", "")
        _forget_commits(store)
        return HistoryUpdate(None, 0, repo.is_shallow, False, 0, None)
    keep = recent_kept(settings)
    stored = load_history(store)
    cached = stored
    if cached is not None and store.get_meta(META_PREFIX + "shallow") == "1" and not repo.is_shallow:
        cached = None  # mined in a shallow clone since deepened: the whole history is another one
    if (
        keep
        and cached is not None
        and store.get_meta(RECENT_HEAD_META) != recent_tag(cached.mined_head, keep)
    ):
        cached = None  # the file model's recent commits are not this state's: mine them again
    walked = tuple(store.get_meta(META_PREFIX + key) for key in WALK_META)
    walk_changed = cached is not None and walked != walk_meta(params)
    if walk_changed:  # mined with another window or rename rule: a mine from scratch gives other counts
        cached = None
    restored = False
    kept_commits: tuple[AppliedCommit, ...] = ()
    kept_head = ""
    if not full and not _reaches(repo, cached, target):
        found = kept_state_for(store, repo, target, HistoryState.empty(params), _kept_tag(repo, params, keep))
        if found is not None:  # a state kept for the target or an ancestor: no mine from scratch
            cached, restored, kept_commits = found.state, True, found.commits
            kept_head = cached.mined_head or ""
            store.set_meta(RECENT_META, "\n".join(found.recent))
            store.set_meta(RECENT_HEAD_META, recent_tag(cached.mined_head, keep))
    started = time.perf_counter()
    base = None if full else cached
    child = ahead if isinstance(ahead, MineAhead) and base is None else None
    taken = child.take(repo.resolve(target), params, keep) if child is not None else None
    early = ahead if isinstance(ahead, WindowAhead) and base is None else None
    if ahead is not None and early is None:
        ahead.drop()  # taken, or not a mine from scratch after all: stopped before any mine here
    if taken is not None:
        state, built, mine_seconds = taken.state, CommitRows.built_already(taken.rows), taken.seconds
    else:
        # not a child's mine (none, not a mine from scratch after all, or it failed): mined here,
        # from the records started ahead where they are this mine's (``mine_history`` checks)
        built = early.built if early is not None else CommitRows()
        state = mine_history(
            repo,
            target,
            params,
            base,
            keep_recent=keep,
            on_applied=built.add,
            idle=built.build_some,
            window=early.window if early is not None else None,
        )
        mine_seconds = time.perf_counter() - started
    if early is not None:
        early.drop()  # read to its end, or, where it did not name this mine, closed unread
    waited = time.perf_counter() - started if taken is not None else None
    if restored and (state is cached or state.extended):
        # the restored state's subjects: the extension appends to them (``_update_commits``)
        clear_commits(store.conn)
        append_commits(store.conn, kept_commits)
        store.set_meta(COMMITS_HEAD_META, kept_head)
    kept = False
    if repo.is_shallow and cached is not None and cached.mined_commits > state.mined_commits:
        # a shallow checkout saw less than the restored cache did: the cache is the better guess
        state, kept = cached, True
    # ``state is not stored``: extended, or mined again from scratch (the same head mined with
    # other settings gives other rows: they are saved, never left as the old settings' rows)
    changed = stored is None or full or restored or walk_changed or kept or state is not stored
    if restored and state.delta is not None:  # the delta is against the kept state, not the tables
        object.__setattr__(state, "delta", None)
    if changed:
        save_history(store, state, shallow=repo.is_shallow)
        for key, value in zip(WALK_META, walk_meta(params), strict=True):
            store.set_meta(META_PREFIX + key, value)
    if not state.extended and state is not cached and not kept:  # mined from scratch: keep it
        # the kept recent commits are ``keep`` long: the tag says so (another window: not taken)
        keep_state(store, state, [recent_line(c) for c in state.recent], _kept_tag(repo, params, keep))
    previous_head = cached.mined_head if cached is not None and not full else None
    # a state saved without extending the one stored (mined from scratch: other settings, or a
    # kept state) may share its head with the edges written before: they are rewritten all
    rewrite_all = full or kept or (changed and not state.extended)
    rewritten = _write_edges(store, state, params, extended=previous_head, force=rewrite_all)
    window = _commit_window(repo, store, target, params.predictiveness_window, rename_rule(params))
    score = predictiveness(state, window, params)
    store.set_meta(META_PREFIX + "predictiveness", "" if score is None else repr(round(score, 6)))
    extended_from = cached.mined_head if cached is not None and state.extended and not kept else None
    _update_commits(store, repo, state, params, extended_from, built)
    return HistoryUpdate(
        mined_head=state.mined_head,
        mined_commits=state.mined_commits,
        shallow=repo.is_shallow,
        kept_cached=kept,
        cochange_edges=rewritten,
        predictiveness=score,
        state=state,
        extended_from=extended_from,
        mine_seconds=mine_seconds,
        ahead_wait_seconds=waited,
    )


#: the meta keys (after ``history_``) of the settings that choose what a mine walks and how it
#: reads renames, in ``_window_meta``'s order
WALK_META = ("max_commits", "window_step", "renames")


def walk_meta(params: HistoryParams) -> tuple[str, ...]:
    """The settings that choose the mined window and its renames (``history/mine.py``,
    ``git/renames.py``) as meta values: a state mined with others is not the one a mine from
    scratch gives."""
    renames = f"{params.rename_threshold}/{params.rename_max_pairs}/{params.rename_max_bytes}"
    return str(params.max_commits), str(params.window_step), renames


def _forget_commits(store: Store) -> None:
    if store.get_meta(COMMITS_HEAD_META):
        clear_commits(store.conn)
        store.set_meta(COMMITS_HEAD_META, "")


def _update_commits(
    store: Store,
    repo: GitRepo,
    state: HistoryState,
    params: HistoryParams,
    extended_from: str | None,
    built: CommitRows | None,
) -> None:
    """Bring the past commits' subjects (``store/commitwords.py``) to ``state``'s head: the commits
    this run's mine applied appended when it extended the head the rows describe (none for a merge
    of commits already mined), all of them when it mined from scratch (at the rows' own head too:
    other history settings count other files); otherwise (a store from before the table, a
    shallow clone's kept cache) the history is walked again from scratch for them. ``built``: the
    rows of the commits this run's mine applied, built during it (taken where ``state`` is that
    mine's: extended or mined from scratch, its ``applied`` the commits ``built`` was told)."""
    head = state.mined_head or ""
    have = store.get_meta(COMMITS_HEAD_META) or ""
    from_scratch = bool(state.applied) and not state.extended
    if head == have and not from_scratch:
        return
    if state.extended and have and extended_from == have:  # a merge of known commits applies none
        append_commits(store.conn, state.applied, built=built)
    else:
        applied = state.applied if from_scratch else None
        if applied is None and head and repo.has_commit(head):  # a shallow clone's kept head may be gone
            applied = mine_history(repo, head, params, None).applied
        clear_commits(store.conn)
        append_commits(store.conn, applied or (), built=built if from_scratch else None)
    store.set_meta(COMMITS_HEAD_META, head)


def _reaches(repo: GitRepo, state: HistoryState | None, target: str) -> bool:
    """Whether ``state`` is at ``target`` or at an ancestor of it (a mine may extend it)."""
    if state is None or state.mined_head is None:
        return False
    head = state.mined_head
    return head == target or (repo.has_commit(head) and repo.is_ancestor(head, target))


def recent_line(commit: AppliedCommit) -> str:
    """A commit of the file model's recent list as its stored line (meta ``files_recent``)."""
    return json.dumps([commit.sha, commit.time, list(commit.touched)], separators=(",", ":"))


def _write_edges(
    store: Store, state: HistoryState, params: HistoryParams, *, extended: str | None, force: bool
) -> int:
    """Bring the co-change edges up to ``state``; the number of edges written.

    Nothing when they were last written for ``state.mined_head`` (meta ``history_edges_head``).
    After an incremental mine that extended the head the edges were written for (``extended``)
    and deleted no file, only the edges leaving the files whose stats or pairs changed are
    rewritten; otherwise (``force``, a full mine, a rescale, a deleted or renamed file, whose
    module node is gone) all of them.
    """
    written_for = store.get_meta(META_PREFIX + "edges_head")
    if not force and written_for and written_for == state.mined_head:
        return 0
    delta = state.delta
    if not force and delta is not None and not delta.removed_files and written_for == extended:
        sources = delta.touched_paths()
        reach = set(sources)
        for path in sources:
            reach.update(state.partners(path))
        edges = cochange_edges(state, _module_ids(store, reach), params, sources=sources)
        store.delete_edges_from_sources(
            HISTORY_ORIGIN, [node_id(p, module_name(p), SymbolKind.MODULE) for p in sorted(sources)]
        )
    else:
        edges = cochange_edges(state, _module_ids(store, state.files), params)
        store.delete_edges_from([HISTORY_ORIGIN])
    store.insert_edges((edge, HISTORY_ORIGIN) for edge in edges)
    store.set_meta(META_PREFIX + "edges_head", state.mined_head or "")
    return len(edges)


def _module_ids(store: Store, paths: Iterable[str]) -> dict[str, str]:
    """Module node id of each of ``paths`` that has one in the store."""
    wanted = {path: node_id(path, module_name(path), SymbolKind.MODULE) for path in paths}
    present = store.paths_of_nodes(wanted.values())  # ids only: a whole node per file is not needed
    return {path: nid for path, nid in wanted.items() if nid in present}


# -- predictiveness ------------------------------------------------------------------------------


def _commit_window(
    repo: GitRepo, store: Store, head: str, size: int, rule: RenameRule
) -> list[tuple[str, list[str]]]:
    """The last ``size`` first-parent commits of ``head`` with the paths each changed, its renames
    paired by the history's own ``rule`` (``git/renames.py``: not libgit2's measure, which may
    change with its version), a rename one path (merges have none); memoised in meta, with the
    rule, so only commits not seen before are diffed."""
    tag = _window_tag(rule, shallow=repo.is_shallow)
    remembered = store.get_meta(META_PREFIX + "window_rule") == tag
    raw = store.get_meta(META_PREFIX + "window") if remembered else None
    cached: dict[str, list[str]] = {}
    order: list[str] = []
    if raw:
        try:
            for sha, stored in json.loads(raw):
                cached[str(sha)] = [str(p) for p in stored]
                order.append(str(sha))
        except (ValueError, TypeError):
            cached, order = {}, []
    window: list[tuple[str, list[str]]] = []
    current: str | None = head
    while current is not None and len(window) < size:
        if current in cached:  # the memoised run from here on, then the commits past its end
            start = order.index(current)
            window += [(sha, cached[sha]) for sha in order[start : start + size - len(window)]]
            below = repo.parents(window[-1][0]) if len(window) < size else []
            current = below[0] if below else None
            cached = {}  # the rest of the chain lies past the memoised run
            continue
        record = repo.commit_record(current, rule)  # a merge's has no changes
        paths = sorted({p for _, old, new in record.changes for p in (new or old,) if p})
        window.append((current, paths))
        current = record.parents[0] if record.parents and not record.shallow_boundary else None
    store.set_meta(META_PREFIX + "window", json.dumps(window, separators=(",", ":")))
    store.set_meta(META_PREFIX + "window_rule", tag)
    return window


def _window_tag(rule: RenameRule, *, shallow: bool) -> str:
    """What the memoised window's paths were read with (meta ``history_window_rule``): another
    rule, a clone deepened since (a shallow boundary's record has no paths), or a store from
    before the window paired renames by its own rule, reads them again."""
    return f"own:{rule.threshold}/{rule.max_pairs}/{rule.max_bytes}" + (":shallow" if shallow else "")


def _kept_tag(repo: GitRepo, params: HistoryParams, keep: int) -> tuple[str, ...]:
    """What a kept state was mined with (``historykeep``): the walk's settings, the file model's
    window, and whether the clone was shallow (a state mined there is not a deepened clone's)."""
    return (*walk_meta(params), str(keep), "shallow" if repo.is_shallow else "whole")
