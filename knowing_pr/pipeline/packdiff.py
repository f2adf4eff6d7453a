"""Two PackRoots → the two packs rebuilt from their recorded requests → what moved between them
(``knowing-pr diff``, the MCP ``pack_diff`` tool, the Action's "Since the previous push").

Each pack is found where ``replay`` finds it (``records.find_pack``: the store, git notes, a pull
request's comments) and rebuilt from the code as ``replay --verify`` rebuilds it
(``verify.rebuild_found_pack``), so nothing beyond the request is stored and a comparison never
rests on an unverified manifest. Errors, as ``replay``'s: a root that is not one, or no record of
it, or a record that cannot be rebuilt here (a commit missing, other settings) is a
``UsageError`` (exit code 2); a rebuild that yields another PackRoot is a ``ReplayMismatch``
(exit code 1).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from knowing_pr.diffing import PackComparison, compare_packs
from knowing_pr.errors import UsageError
from knowing_pr.model import Pack
from knowing_pr.pipeline.records import FoundPack, find_pack
from knowing_pr.pipeline.verify import rebuild_found_pack
from knowing_pr.pipeline.workspace import Workspace
from knowing_pr.render.display import display_name
from knowing_pr.replay import validate_pack_root

__all__ = ["DIFF_FORMATS", "DiffRequest", "compare_with_record", "diff_packs", "render_diff"]

DIFF_FORMATS = ("markdown", "json")


@dataclass(frozen=True)
class DiffRequest:
    """What ``knowing-pr diff`` was asked."""

    before: str
    after: str
    fmt: str = "markdown"
    pr: str | None = None  # a pull request number or URL whose comments may carry the requests


def diff_packs(
    ws: Workspace, request: DiffRequest, *, env: Mapping[str, str] | None = None
) -> PackComparison:
    """Rebuild both packs and compare them (``before`` → ``after``)."""
    roots = [validate_pack_root(request.before), validate_pack_root(request.after)]
    if request.fmt not in DIFF_FORMATS:
        raise UsageError(f"diff prints markdown or json, not {request.fmt!r}")
    if request.pr is not None:
        from knowing_pr.github import check_pull_reference

        check_pull_reference(request.pr)
    environment = os.environ if env is None else env
    before, after = (
        rebuild_found_pack(
            ws, root, find_pack(ws, root, pr=request.pr, env=environment, manifest_option=False)
        )
        for root in roots
    )
    return compare_packs(before, after, display_name)


def render_diff(comparison: PackComparison, fmt: str) -> str:
    from knowing_pr.render.since import comparison_json, comparison_markdown

    return comparison_json(comparison) if fmt == "json" else comparison_markdown(comparison)


def compare_with_record(ws: Workspace, record: Mapping[str, Any], pull: Any, after: Pack) -> PackComparison:
    """A pack just built compared with the pack a (validated) request record names, rebuilt
    from the code; ``pull`` (a ``PullRequestReader``, or None) gives the task text back when the
    record carries only its digest."""
    found = FoundPack("the previous comment", record=dict(record), pull=pull)
    before = rebuild_found_pack(ws, str(record["pack_root"]), found)
    return compare_packs(before, after, display_name)
