"""One typed function per user operation, composing the stages (git → … → render → publish).

- ``workspace``: a repository, its settings and its store; ``index`` and ``stats``;
- ``change``: a diff → the change's files, deleted definitions and their former callers;
- ``pr``: ``pr`` and ``files`` packs; ``task``: ``task`` packs and the pack folder;
  ``why``: where a symbol stands in a task's ranking; ``whyfile``: where a file stands in a
  change's ranked file list; ``map``: CONTEXT.md;
- ``verify``: ``replay`` and ``--verify``; ``export``: the whole graph.

Every reader first compares the store's commit with HEAD and catches up (hooks are hints, not
the source of truth). Nothing here reads argv: ``cli.py`` adapts the command line to these.
"""

from __future__ import annotations

from knowing_pr.pipeline.export import export_graph
from knowing_pr.pipeline.map import MapRequest, build_map
from knowing_pr.pipeline.pr import PrRequest, build_files_pack, build_pr_pack
from knowing_pr.pipeline.task import TaskRequest, TaskRun, build_task_pack, write_task_folder
from knowing_pr.pipeline.verify import ReplayRequest, replay
from knowing_pr.pipeline.why import explain_symbol
from knowing_pr.pipeline.whyfile import explain_file
from knowing_pr.pipeline.workspace import (
    Workspace,
    describe_index_report,
    describe_stats,
    ensure_fresh,
    open_workspace,
    refit_file_model,
    store_stats,
    update_index,
)

__all__ = [
    "MapRequest",
    "PrRequest",
    "ReplayRequest",
    "TaskRequest",
    "TaskRun",
    "Workspace",
    "build_files_pack",
    "build_map",
    "build_pr_pack",
    "build_task_pack",
    "describe_index_report",
    "describe_stats",
    "ensure_fresh",
    "explain_file",
    "explain_symbol",
    "export_graph",
    "open_workspace",
    "refit_file_model",
    "replay",
    "store_stats",
    "update_index",
    "write_task_folder",
]
