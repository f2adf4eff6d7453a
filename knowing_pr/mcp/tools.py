"""A tool's arguments → one bounded answer: the text an agent reads, a small structured summary
that carries the PackRoot (or, for the map and the stats, the graph root), or a structured error.

No MCP here: ``server.py`` registers these functions with the SDK. Each one opens the workspace
(the settings are re-read, so a ``.knowing-pr.yml`` edit applies to the next call), brings the
index up to HEAD through the pipeline, and returns an ``Answer``. Every ``KnowingPRError`` and
every unexpected exception becomes ``Answer.error``: a bad call never ends the server.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knowing_pr.errors import KnowingPRError, UsageError

if TYPE_CHECKING:
    from knowing_pr.model import Pack
    from knowing_pr.pipeline import Workspace
    from knowing_pr.store import Store

__all__ = ["FORMATS", "MAX_BUDGET", "MIN_BUDGET", "Answer", "Toolbox"]

FORMATS = ("markdown", "json", "xml")
MIN_BUDGET = 500
MAX_BUDGET = 200_000
_MAX_TEXT_ARGUMENT = 20_000
_MAX_PATHS = 2_000


@dataclass(frozen=True)
class Answer:
    """What a tool returns: ``text`` for the agent, ``data`` for programs, ``is_error``."""

    text: str
    data: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False

    @classmethod
    def error(cls, exc: BaseException) -> Answer:
        if isinstance(exc, KnowingPRError):
            kind, message, hint = type(exc).__name__, exc.message, exc.hint
        else:
            kind, message, hint = "InternalError", f"{type(exc).__name__}: {exc}"[:500], "please report this"
        text = f"knowing-pr: error: {message}" + (f"\nhint: {hint}" if hint else "")
        return cls(text, {"error": {"kind": kind, "message": message, "hint": hint}}, True)


#: a full cycle collection after every this many answers (the server runs with the collector off)
COLLECT_EVERY = 64


class Toolbox:
    """The server's tools over one repository (``repo``, ``db``, ``config`` as on the command line)."""

    def __init__(
        self, repo: str | os.PathLike[str] = ".", *, db: str | None = None, config: str | None = None
    ) -> None:
        self.repo = os.fspath(repo)
        self.db = db
        self.config = config
        #: one idle read-only connection held for the server's life: each call's own connection
        #: then never is the last one to close, so closing it does not checkpoint the WAL
        #: (an fsync: ~30 ms of a warm answer)
        self._held: Store | None = None
        self._answers = 0

    # -- the tools ------------------------------------------------------------------------------

    def pack_pr(
        self,
        base: str | None = None,
        head: str | None = None,
        files: Sequence[str] | None = None,
        budget: int | None = None,
        task: str | None = None,
        format: str = "markdown",  # noqa: A002 - the name agents see
    ) -> Answer:
        return self._answer(lambda: self._pr(base, head, files, budget, task, format))

    def pack_files(self, paths: Sequence[str], budget: int | None = None, format: str = "markdown") -> Answer:  # noqa: A002
        return self._answer(lambda: self._files(paths, budget, format))

    def pack_task(self, description: str, budget: int | None = None, format: str = "markdown") -> Answer:  # noqa: A002
        return self._answer(lambda: self._task(description, budget, format))

    def explain_symbol(self, symbol: str, task: str, budget: int | None = None) -> Answer:
        return self._answer(lambda: self._why(symbol, task, budget))

    def replay_pack(
        self,
        pack_root: str,
        verify: bool = False,
        pr: str | None = None,
        format: str = "markdown",  # noqa: A002
    ) -> Answer:
        return self._answer(lambda: self._replay(pack_root, verify, pr, format))

    def pack_diff(
        self,
        before: str,
        after: str,
        pr: str | None = None,
        format: str = "markdown",  # noqa: A002
    ) -> Answer:
        return self._answer(lambda: self._diff(before, after, pr, format))

    def repo_map(
        self, profile: str = "default", query: str | None = None, budget: int | None = None
    ) -> Answer:
        return self._answer(lambda: self._map(profile, query, budget))

    def index_stats(self) -> Answer:
        return self._answer(self._stats)

    # -- implementations ------------------------------------------------------------------------

    def _pr(
        self,
        base: str | None,
        head: str | None,
        files: Sequence[str] | None,
        budget: int | None,
        task: str | None,
        fmt: str,
    ) -> Answer:
        from knowing_pr import pipeline

        paths = _paths(files or [], "files", allow_empty=True)
        ws = self._workspace(budget)
        request = pipeline.PrRequest(
            base=_revision(base, "base"),
            head=_revision(head, "head"),
            files=tuple(paths),
            task=_text(task, "task", required=False),
            fmt=_format(fmt),
        )
        return _pack_answer(pipeline.build_pr_pack(ws, request), request.fmt)

    def _files(self, paths: Sequence[str], budget: int | None, fmt: str) -> Answer:
        from knowing_pr import pipeline

        ws = self._workspace(budget)
        chosen = _format(fmt)
        return _pack_answer(pipeline.build_files_pack(ws, _paths(paths, "paths"), fmt=chosen), chosen)

    def _task(self, description: str, budget: int | None, fmt: str) -> Answer:
        from knowing_pr import pipeline

        ws = self._workspace(budget)
        chosen = _format(fmt)
        run = pipeline.build_task_pack(
            ws, pipeline.TaskRequest(str(_text(description, "description")), fmt=chosen)
        )
        return _pack_answer(run.pack, chosen)

    def _why(self, symbol: str, task: str, budget: int | None) -> Answer:
        from knowing_pr import pipeline
        from knowing_pr.render.why import describe_explanation

        ws = self._workspace(budget)
        data = pipeline.explain_symbol(
            ws, pipeline.TaskRequest(str(_text(task, "task"))), str(_text(symbol, "symbol"))
        )
        limit = _char_limit(ws.settings.pack.budget_tokens, ws.settings.pack.chars_per_token)
        summary = {
            key: data.get(key)
            for key in ("pack_root", "commit", "query", "status", "rank", "total_ranked", "score", "verdict")
        }
        return Answer(_bounded(describe_explanation(data), limit), summary)

    def _replay(self, pack_root: str, verify: bool, pr: str | None, fmt: str) -> Answer:
        from knowing_pr import pipeline

        if not isinstance(verify, bool):
            raise UsageError("verify must be true or false")
        ws = self._workspace(None)
        request = pipeline.ReplayRequest(
            str(_text(pack_root, "pack_root")),
            verify,
            fmt=_format(fmt),
            pr=_text(pr, "pr", required=False),
            quiet=verify,  # the verdict: the pack is the answer of a replay without verify
        )
        code, text = pipeline.replay(ws, request)
        data: dict[str, Any] = {
            "pack_root": request.pack_root,
            "verified": code == 0 if verify else None,
            "matches": code == 0,
        }
        if ws.warnings:  # e.g. a token not sent to a pull request's host
            data["warnings"] = list(ws.warnings)
            text += "".join(f"\n\nknowing-pr: warning: {warning}" for warning in ws.warnings)
        return Answer(text, data)  # a mismatch is an answer (``matches``: false), not a failure

    def _diff(self, before: str, after: str, pr: str | None, fmt: str) -> Answer:
        from knowing_pr import pipeline
        from knowing_pr.pipeline.packdiff import DIFF_FORMATS

        if fmt not in DIFF_FORMATS:
            raise UsageError(f"format must be one of {', '.join(DIFF_FORMATS)}, got {str(fmt)[:40]!r}")
        ws = self._workspace(None)
        request = pipeline.DiffRequest(
            str(_text(before, "before")), str(_text(after, "after")), fmt, _text(pr, "pr", required=False)
        )
        comparison = pipeline.diff_packs(ws, request)
        limit = _char_limit(ws.settings.pack.budget_tokens, ws.settings.pack.chars_per_token)
        text = _bounded(pipeline.render_diff(comparison, fmt), limit)
        data = comparison.as_dict()
        if ws.warnings:
            data["warnings"] = list(ws.warnings)
            text += "".join(f"\n\nknowing-pr: warning: {warning}" for warning in ws.warnings)
        return Answer(text, data)

    def _map(self, profile: str, query: str | None, budget: int | None) -> Answer:
        from knowing_pr import pipeline

        ws = self._workspace(budget)
        request = pipeline.MapRequest(
            str(_text(profile, "profile")),
            _text(query, "query", required=False),
            ws.settings.pack.budget_tokens,
        )
        text = pipeline.build_map(ws, request)
        stats = _store_state(ws)
        return Answer(text, {**stats, "profile": request.profile, "tokens": _tokens(text, ws)})

    def _stats(self) -> Answer:
        from knowing_pr import pipeline

        stats = pipeline.store_stats(self.repo, db=self.db, config=self.config)
        stats.pop("store_path", None)  # a machine path says nothing to an agent
        return Answer(pipeline.describe_stats(stats), stats)

    # -- helpers --------------------------------------------------------------------------------

    def _workspace(self, budget: int | None) -> Workspace:
        from knowing_pr import pipeline

        ws = pipeline.open_workspace(self.repo, db=self.db, config=self.config, budget=_budget(budget))
        self._hold(ws.db_path)
        return ws

    def _hold(self, db_path: Path) -> None:
        from knowing_pr.errors import StoreError
        from knowing_pr.store import Store

        if self._held is not None and self._held.path == db_path:
            return
        self.close()
        if db_path.is_file():
            try:
                # opened in a tool call's worker thread, closed when the server stops
                self._held = Store.open(db_path, readonly=True, any_thread=True)
            except (StoreError, OSError):
                self._held = None

    def close(self) -> None:
        if self._held is not None:
            self._held.close()
            self._held = None

    def _answer(self, work: Callable[[], Answer]) -> Answer:
        """``work``'s answer, or its failure as one. The cycle collector waits while it runs: an
        answer allocates enough for many young-generation passes over the server's kept state,
        and leaves little cyclic garbage (bench/mcp_garbage.py; the JSON text is written without
        the standard encoder's cycles, ``render.jsontext``). ``knowing-pr mcp`` runs with the
        collector off (``cli``): every ``COLLECT_EVERY``-th answer ends with a full collection,
        and no collection lands inside the others."""
        import gc

        collecting = gc.isenabled()
        gc.disable()
        try:
            return work()
        except Exception as exc:  # noqa: BLE001 - every failure is an answer, never a crash
            return Answer.error(exc)
        finally:
            self._answers += 1
            if self._answers % COLLECT_EVERY == 0:
                gc.collect()
            if collecting:
                gc.enable()


def _pack_answer(pack: Pack, fmt: str) -> Answer:
    from knowing_pr.render import render_pack

    data = {
        "pack_root": pack.pack_root,
        "mode": pack.mode,
        "commit": pack.commit,
        "graph_root": pack.graph_root,
        "token_budget": pack.token_budget,
        "tokens_used": pack.tokens_used,
        "symbols": len(pack.symbols),
        "format": fmt,
    }
    return Answer(render_pack(pack, fmt), data)


def _store_state(ws: Workspace) -> dict[str, Any]:
    from knowing_pr.store.opening import open_store

    store, _ = open_store(ws.db_path)
    try:
        return {"commit": store.indexed_commit, "graph_root": store.graph_root}
    finally:
        store.close()


def _tokens(text: str, ws: Workspace) -> int:
    return math.ceil(len(text) / ws.settings.pack.chars_per_token)


def _char_limit(budget: int, chars_per_token: float) -> int:
    return int(budget * chars_per_token)


def _bounded(text: str, limit: int) -> str:
    """``text`` cut at a line boundary to at most ``limit`` characters, with a note when cut."""
    if len(text) <= limit:
        return text
    note = "\n[cut to the token budget]"
    cut = text[: max(0, limit - len(note))]
    return cut[: cut.rfind("\n") + 1 if "\n" in cut else len(cut)].rstrip("\n") + note


def _budget(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_BUDGET <= value <= MAX_BUDGET:
        raise UsageError(
            f"budget must be a whole number of tokens from {MIN_BUDGET:,} to {MAX_BUDGET:,}, got {value!r}"[
                :200
            ]
        )
    return value


def _format(value: Any) -> str:
    if value not in FORMATS:
        raise UsageError(f"format must be one of {', '.join(FORMATS)}, got {str(value)[:40]!r}")
    return str(value)


def _text(value: Any, name: str, *, required: bool = True) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise UsageError(f"{name} is required")
        return None
    if not isinstance(value, str) or len(value) > _MAX_TEXT_ARGUMENT or "\0" in value:
        raise UsageError(f"{name} must be text of at most {_MAX_TEXT_ARGUMENT:,} characters")
    return value


def _revision(value: Any, name: str) -> str | None:
    from knowing_pr.git.revisions import revision_problem

    text = _text(value, name, required=False)
    problem = None if text is None else revision_problem(text)
    if text is not None and problem is not None:
        raise UsageError(f"{name} is not a commit or ref name: {text[:40]!r} ({problem})")
    return text


def _paths(values: Any, name: str, *, allow_empty: bool = False) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise UsageError(f"{name} must be a list of repository-relative paths")
    if not values and not allow_empty:
        raise UsageError(f"{name} must name at least one path")
    if len(values) > _MAX_PATHS or not all(isinstance(v, str) for v in values):
        raise UsageError(f"{name} must be at most {_MAX_PATHS:,} paths, each a string")
    return list(values)
