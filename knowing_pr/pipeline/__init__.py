"""One function per user operation, composing the stages (git → … → render → publish).

``workspace`` (settings, store, index at HEAD; ``index``, ``stats``) → ``packs`` (``pr``,
``files``) → ``verify`` (``replay``) and ``tasks`` (``task``, ``why``, ``map``).

Every reader first compares the store's commit with HEAD and catches up (RELIABILITY.md
decision 1: hooks are hints, not the source of truth).
"""

from __future__ import annotations

from knowing_pr.pipeline.packs import build_files_pack, build_pr_pack, files_command, pr_command
from knowing_pr.pipeline.tasks import map_command, task_command, why_command
from knowing_pr.pipeline.verify import replay_command
from knowing_pr.pipeline.workspace import (
    Workspace,
    describe_index_report,
    describe_stats,
    ensure_fresh,
    open_workspace,
    store_stats,
    update_index,
)

__all__ = [
    "Workspace",
    "build_files_pack",
    "build_pr_pack",
    "describe_index_report",
    "describe_stats",
    "ensure_fresh",
    "files_command",
    "map_command",
    "open_workspace",
    "pr_command",
    "replay_command",
    "store_stats",
    "task_command",
    "update_index",
    "why_command",
]
