"""Task description (+ stack trace, + diff) + store → seeds → ``Pack`` and ``TaskAnalysis``
(seed 002's ForTask and ExplainSymbol; seed 001's resolve → discover → score → compose).

The file list is the data flow:

- ``keywords.py``, ``entities.py``, ``traces.py``, ``equivalence.py``: resolve the task text
  (three keyword tiers, named entities and change type, stack frames, equivalence classes);
- ``channels.py``, ``fusion.py``: discover seeds by channel and fuse them (weighted RRF), and
  fuse the walk's order with the seed order;
- ``analysis.py``: the two stages above as one ``TaskAnalysis`` (``analyse_task``);
- ``pack.py``: score + pack through ``engine.build_pack`` (``build_task_pack``), the final
  fusion, ``task_seeds`` for a PR's title and body;
- ``folder.py``: compose the pack folder (``write_task_folder``);
- ``explain.py``: ``why`` — where a symbol stands or where it dropped out.

This module is the public surface; it re-exports the names other packages use.
"""

from __future__ import annotations

from knowing_pr.task.analysis import TaskAnalysis, analyse_task, read_error_file
from knowing_pr.task.channels import TaskParams
from knowing_pr.task.explain import describe_explanation, explain_symbol
from knowing_pr.task.pack import (
    build_task_pack,
    final_order,
    normalise_task,
    task_seeds,
    write_task_folder,
)

__all__ = [
    "TaskAnalysis",
    "TaskParams",
    "analyse_task",
    "build_task_pack",
    "describe_explanation",
    "explain_symbol",
    "final_order",
    "normalise_task",
    "read_error_file",
    "task_seeds",
    "write_task_folder",
]
