"""A repository path → its settings, store and index kept at HEAD; ``index`` and ``stats``."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knowing_pr.config import STORE_ENV, Settings, default_db_path, repository_settings
from knowing_pr.errors import UsageError
from knowing_pr.git import GitRepo, open_repo
from knowing_pr.index import IndexReport, Progress, index_commit
from knowing_pr.index.fileinputs import refresh_file_inputs
from knowing_pr.store.filedata import inputs_tag
from knowing_pr.store.opening import open_store

if TYPE_CHECKING:
    from knowing_pr.index.filefit import FitReport

__all__ = [
    "Workspace",
    "describe_index_report",
    "describe_stats",
    "ensure_fresh",
    "normalize_paths",
    "open_workspace",
    "refit_file_model",
    "store_stats",
    "update_index",
]


@dataclass
class Workspace:
    """A repository, its settings and its store path, resolved once per command; ``warnings``
    collects what the command should tell the user without failing (e.g. paths left out)."""

    repo: GitRepo
    settings: Settings
    db_path: Path
    warnings: list[str] = field(default_factory=list)
    #: where the long steps of the command's index run and pack are shown (``None``: nowhere)
    progress: Progress | None = None

    def show_progress(self) -> None:
        """Show the long steps on stderr (``index/progress.py``): a bar on a terminal, lines on a pipe."""
        from knowing_pr.index.progress import progress_on_stderr

        self.progress = progress_on_stderr(self.settings.index.progress_interval_s)

    def end_progress(self) -> None:
        close = getattr(self.progress, "close", None)
        if close is not None:
            close()


def open_workspace(
    repo_path: str | os.PathLike[str],
    *,
    db: str | None = None,
    config: str | None = None,
    budget: int | None = None,
    settings_at: str | None = None,
) -> Workspace:
    """The repository at ``repo_path`` with its settings (``config``, else the repository's
    ``.knowing-pr.yml``; ``budget`` overrides the pack budget) and its store path.

    With ``settings_at`` (a revision) the settings are the ones committed at that revision
    (``config`` is then a repository-relative path, default ``.knowing-pr.yml``), read from git,
    never from the work tree (``pipeline.committed``)."""
    repo = open_repo(repo_path)
    if settings_at is not None:
        from knowing_pr.pipeline.committed import committed_settings

        settings = committed_settings(repo, settings_at, config)
    else:
        settings = repository_settings(repo.workdir, config)
    if db is not None:
        db_path = _checked_store_path("--db", db)
    elif os.environ.get(STORE_ENV):
        db_path = _checked_store_path(STORE_ENV, os.environ[STORE_ENV])
    else:
        db_path = default_db_path(repo.git_dir)
    return Workspace(repo, settings.with_budget(budget), db_path)


def _warn_of_settings(ws: Workspace, warn: Callable[[list[str]], None] | None) -> None:
    """Give ``warn`` the settings file's warnings: a removed setting it still sets is ignored."""
    if warn is not None:
        from knowing_pr.config import removed_setting_warnings

        warn(removed_setting_warnings(ws.settings))


def _checked_store_path(option: str, value: str) -> Path:
    """A store path the user named (``--db`` or ``KNOWING_PR_DB``): a store, or a file that can be
    created. An existing file that is not an SQLite database is refused, never moved aside as a
    damaged store would be: it may be anything of the user's."""
    from knowing_pr.pipeline.output import check_creatable
    from knowing_pr.store.recovery import looks_like_sqlite

    if not value:
        raise UsageError(f"{option}: the path is empty", hint="name a store file, e.g. index.sqlite")
    path = Path(value)
    if path.is_dir():
        raise UsageError(
            f"{option} {value}: is a directory", hint=f"name a file, e.g. {path / 'index.sqlite'}"
        )
    if path.exists():
        if not path.is_file():
            raise UsageError(f"{option} {value}: is not a regular file", hint="name a store file")
        if path.stat().st_size and not looks_like_sqlite(path) and not _written_by_this_tool(path):
            raise UsageError(
                f"{option} {value}: is not a knowing-pr store (not an SQLite database)",
                hint="name a new file or an existing store",
            )
        return path
    check_creatable(option, value, path.parent)
    return path


def _written_by_this_tool(path: Path) -> bool:
    """A damaged store keeps the sidecar files this tool writes beside it."""
    return any(path.with_name(path.name + suffix).exists() for suffix in (".stamp", ".writing"))


def update_index(
    repo_path: str | os.PathLike[str] = ".",
    *,
    rev: str | None = None,
    full: bool = False,
    db: str | None = None,
    config: str | None = None,
    progress: Progress | None = None,
    quiet: bool = True,
    defer_refit: bool = False,
    settings_at: str | None = None,
    warn: Callable[[list[str]], None] | None = None,
) -> IndexReport:
    """``knowing-pr index``: bring the store to ``rev`` (default HEAD), and keep the walk matrix
    of its new state. ``defer_refit`` (the hook path): keep the file model's weights and leave
    the matrix; ``refit_file_model`` does both later. ``settings_at``: the settings committed at
    that revision (the hook's worker: the commit it indexes), not the work tree's. Not ``quiet``
    (and no ``progress``): the long steps are shown on stderr. ``warn`` is given the warnings of
    the settings file (a removed setting it still sets)."""
    ws = open_workspace(repo_path, db=db, config=config, settings_at=settings_at)
    _warn_of_settings(ws, warn)
    ws.progress = progress
    if progress is None and not quiet:
        ws.show_progress()
    try:
        report = index_commit(
            ws.repo,
            ws.settings,
            rev=rev,
            full=full,
            db_path=ws.db_path,
            progress=ws.progress,
            defer_refit=defer_refit,
        )
        if not defer_refit and report.mode != "up-to-date":
            _keep_walk_matrix(ws)
    finally:
        ws.end_progress()
    return report


def _keep_walk_matrix(ws: Workspace) -> None:
    """The walk matrix of the store's state, built and kept for the next ``pr`` (``rank.keptwalk``)."""
    from knowing_pr.rank import keep_walk_matrix_of

    store, _ = open_store(ws.db_path)
    try:
        keep_walk_matrix_of(store, ws.settings)
    finally:
        store.close()


def refit_file_model(
    repo_path: str | os.PathLike[str] = ".",
    *,
    db: str | None = None,
    config: str | None = None,
    settings_at: str | None = None,
) -> FitReport:
    """The file model's refit an index run deferred, when one is due (``filefit.refit_if_due``),
    and the file ranking's inputs brought to the store's graph root (``refresh_file_inputs``),
    in a transaction of their own; then the walk matrix of that state, in one more."""
    from knowing_pr.index.filefit import refit_if_due
    from knowing_pr.rank import keep_walk_matrix_of

    ws = open_workspace(repo_path, db=db, config=config, settings_at=settings_at)
    store, _ = open_store(ws.db_path)
    try:
        with store.transaction():
            report = refit_if_due(store, ws.settings)
            graph_root = store.graph_root
            if graph_root and ws.settings.files.enabled:
                refresh_file_inputs(store, inputs_tag(graph_root, store.indexed_commit))
        keep_walk_matrix_of(store, ws.settings)
    finally:
        store.close()
    return report


def ensure_fresh(ws: Workspace, rev: str | None = None) -> IndexReport:
    """Catch the store up with HEAD (or ``rev``) before reading it."""
    return index_commit(ws.repo, ws.settings, rev=rev, db_path=ws.db_path, progress=ws.progress)


def describe_index_report(report: IndexReport) -> str:
    if report.mode == "up-to-date":
        return f"index is up to date at {(report.commit or 'an empty repository')[:12]}"
    skipped = ", ".join(f"{n} {reason}" for reason, n in sorted(report.skipped.items())) or "none"
    total_ms = report.timings_ms.get("total", 0.0)
    commit = (report.commit or "empty tree")[:12]
    return (
        f"{report.mode} index of {commit}: {report.files_parsed} files parsed, "
        f"{report.files_removed} removed, {report.files_affected} re-resolved; skipped: {skipped}; "
        f"{total_ms / 1000:.2f} s; graph root {report.graph_root[:12]}"
    )


def store_stats(
    repo_path: str | os.PathLike[str] = ".",
    *,
    db: str | None = None,
    config: str | None = None,
    warn: Callable[[list[str]], None] | None = None,
) -> dict[str, Any]:
    """``knowing-pr stats``: catch up first, then report what the store holds (``warn``: as
    ``update_index``'s)."""
    import json

    ws = open_workspace(repo_path, db=db, config=config)
    _warn_of_settings(ws, warn)
    head = ws.repo.head_commit()
    ensure_fresh(ws)
    store, _ = open_store(ws.db_path)
    try:
        counts = store.counts()
        commit = store.indexed_commit
        last_run = store.get_meta("last_run")
        stats: dict[str, Any] = {
            "commit": commit,
            "head": head,
            "fresh": commit == head,
            "graph_root": store.graph_root,
            "store_path": str(ws.db_path),
            "store_bytes": _store_bytes(ws.db_path),
            "last_run": json.loads(last_run) if last_run else None,
            "tool_version": store.get_meta("tool_version"),
            "grammar_version": store.get_meta("grammar_version"),
        }
        stats.update(counts)
        failures = json.loads(store.get_meta("analysis_failures") or "{}")
        stats["analysis_failures"] = {
            "files": len(failures),
            "references": sum(failures.values()),
            "paths": sorted(failures),
        }
        stats["file_model"] = _file_model(store.get_meta("files_model"))
        return stats
    finally:
        store.close()


def _file_model(raw: str | None) -> dict[str, Any] | None:
    """The file list's model as the index fitted it: weights, the tasks, the commit."""
    import json

    if not raw:
        return None
    try:
        model = json.loads(raw)
    except ValueError:
        return None
    return {key: model.get(key) for key in ("weights", "tasks", "fitted_at", "new_since_fit")}


def _store_bytes(path: Path) -> int:
    return sum(Path(str(path) + s).stat().st_size for s in ("", "-wal") if Path(str(path) + s).exists())


def describe_stats(stats: dict[str, Any]) -> str:
    lines = [
        f"commit      {stats['commit'] or '(empty)'} ({'fresh' if stats['fresh'] else 'STALE'})",
        f"graph root  {stats['graph_root']}",
        f"store       {stats['store_bytes'] / 1e6:.1f} MB",
        f"files       {stats['files']}  nodes {stats['nodes']}  edges {stats['edges']}",
        "languages   " + ", ".join(f"{k} {v}" for k, v in stats["files_by_language"].items()),
        "node kinds  " + ", ".join(f"{k} {v}" for k, v in stats["nodes_by_kind"].items()),
        "edge types  " + ", ".join(f"{k} {v}" for k, v in stats["edges_by_type"].items()),
        "skipped     " + (", ".join(f"{k} {v}" for k, v in stats["skipped_by_reason"].items()) or "none"),
    ]
    failed = stats.get("analysis_failures") or {}
    if failed.get("files"):
        shown = ", ".join(failed["paths"][:5]) + (" …" if failed["files"] > 5 else "")
        lines.append(
            f"degraded    {failed['files']} files: {failed['references']} references not analysed ({shown})"
        )
    model = stats.get("file_model")
    if model and model.get("weights"):
        strongest = sorted(
            ((k, v) for k, v in model["weights"].items() if k != "bias"), key=lambda item: -abs(item[1])
        )[:6]
        source = f"fitted on {model['tasks']} past commits" if model.get("tasks") else "the prior"
        lines.append(
            f"file model  {source}: " + ", ".join(f"{k} {v:+.3g}" for k, v in strongest) + " (why --change)"
        )
    run = stats.get("last_run")
    if run:
        timings = ", ".join(f"{k} {v:.0f} ms" for k, v in run.get("timings_ms", {}).items())
        lines.append(f"last run    {run.get('mode')}: {timings}")
    return "\n".join(lines)


def normalize_paths(paths: Sequence[str]) -> list[str]:
    """Repository-relative POSIX paths; refuses absolute paths and ``..`` escapes."""
    from knowing_pr.errors import UsageError

    out: set[str] = set()
    for raw in paths:
        path = raw.replace("\\", "/").strip()
        while path.startswith("./"):
            path = path[2:]
        if not path or path.startswith("/") or any(part == ".." for part in path.split("/")) or "\0" in path:
            raise UsageError(f"not a repository-relative path: {raw!r}")
        out.add(path)
    return sorted(out)
