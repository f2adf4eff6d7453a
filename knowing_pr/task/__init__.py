"""Task description (+ stack trace, + diff seeds) + store → seeds (seed 001's resolve → discover;
seed 002's ForTask seeding). Nothing here ranks or packs: ``rank/`` and ``pipeline/task.py`` do.

- ``keywords.py``, ``entities.py``, ``traces.py``, ``equivalence.py``: resolve the task text
  (three keyword tiers, named entities and change type, stack frames, equivalence classes);
- ``channels.py``: discover seeds by channel and fuse them (weighted RRF, ``rank/fusion.py``);
- ``analysis.py``: the two stages above as one ``TaskAnalysis`` (``analyse_task``);
- ``seeds.py``: the normalised task text, and a PR's own text as extra seeds (``task_seeds``).
"""

from __future__ import annotations

from knowing_pr.task.analysis import TaskAnalysis, analyse_task, read_error_file
from knowing_pr.task.seeds import normalise_task, task_seeds

__all__ = ["TaskAnalysis", "analyse_task", "normalise_task", "read_error_file", "task_seeds"]
