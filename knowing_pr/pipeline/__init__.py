"""One typed function per user operation, composing the stages (git → … → render → publish).

- ``workspace``: a repository, its settings and its store; ``index`` and ``stats``;
- ``change``: a diff → the change's files, deleted definitions and their former callers;
- ``basedefs``: a diff → the changed files' definitions at the base (parsed in a fork, or by
  the git reader of a fresh ``pr``);
- ``pr``: ``pr`` and ``files`` packs; ``task``: ``task`` packs and the pack folder;
  ``why``: where a symbol stands in a task's ranking; ``whyfile``: where a file stands in a
  change's ranked file list; ``map``: CONTEXT.md;
- ``verify``: ``replay`` and ``--verify``; ``packdiff``: two PackRoots → what moved between
  them; ``records``: where a pack's request is recorded (the
  store, git notes, a pull request's comments); ``export``: the whole graph.

Every reader first compares the store's commit with HEAD and catches up (hooks are hints, not
the source of truth). Nothing here reads argv: ``cli/`` adapts the command line to these.
The names below are imported from their module on first use (``_HOMES``), so a command pays
only for the operation it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowing_pr import lazy_attributes

if TYPE_CHECKING:
    from knowing_pr.pipeline.export import export_graph
    from knowing_pr.pipeline.map import MapRequest, build_map
    from knowing_pr.pipeline.packdiff import DiffRequest, diff_packs, render_diff
    from knowing_pr.pipeline.pr import PrRequest, build_files_pack, build_pr_pack
    from knowing_pr.pipeline.publish import record_pack
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

#: each public name → the module that defines it, imported on first use: a command loads only
#: the operation it runs (``pr`` never imports the task, map, export or replay code)
_HOMES = {
    "export_graph": "export",
    "MapRequest": "map",
    "build_map": "map",
    "DiffRequest": "packdiff",
    "diff_packs": "packdiff",
    "render_diff": "packdiff",
    "PrRequest": "pr",
    "build_files_pack": "pr",
    "build_pr_pack": "pr",
    "record_pack": "publish",
    "TaskRequest": "task",
    "TaskRun": "task",
    "build_task_pack": "task",
    "write_task_folder": "task",
    "ReplayRequest": "verify",
    "replay": "verify",
    "explain_symbol": "why",
    "explain_file": "whyfile",
    "Workspace": "workspace",
    "describe_index_report": "workspace",
    "describe_stats": "workspace",
    "ensure_fresh": "workspace",
    "open_workspace": "workspace",
    "refit_file_model": "workspace",
    "store_stats": "workspace",
    "update_index": "workspace",
}


__getattr__ = lazy_attributes(__name__, _HOMES)


__all__ = [
    "DiffRequest",
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
    "diff_packs",
    "ensure_fresh",
    "explain_file",
    "explain_symbol",
    "export_graph",
    "open_workspace",
    "record_pack",
    "refit_file_model",
    "render_diff",
    "replay",
    "store_stats",
    "update_index",
    "write_task_folder",
]
