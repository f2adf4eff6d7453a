"""Two packs of the same kind → what moved between them (``compare_packs``): the change's
symbols, the call sites it leaves or updates, the tests to run and the co-changed files.

Pure over ``knowing_pr.model``: no store, no git. ``pipeline.packdiff`` rebuilds the two packs
from their recorded requests and calls this; ``render.since`` writes the result for the PR
comment, the terminal and JSON.
"""

from __future__ import annotations

from knowing_pr.diffing.packs import CallSiteKey, Moved, PackComparison, compare_packs

__all__ = ["CallSiteKey", "Moved", "PackComparison", "compare_packs"]
