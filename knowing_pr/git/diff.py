"""pygit2 diff deltas and patches → status letters, paths and records (``FileChange``, ``FileDiff``).

Statuses are git's letters A, D, M, R, T (a copy, never asked for, reads as an add); renames
are found with git's similarity measure at the caller's threshold; changed lines become
1-based inclusive ranges, touching ones merged.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from knowing_pr.git.lazy import lazy_module
from knowing_pr.git.records import MODE_GITLINK, FileChange, FileDiff, LineRange, decode_path

if TYPE_CHECKING:
    import pygit2
else:
    pygit2 = lazy_module("pygit2")

__all__ = ["delta_paths", "file_change", "file_diff", "find_renames", "merge_ranges"]


@functools.cache
def _status_letters() -> dict[int, str]:
    status = pygit2.enums.DeltaStatus
    return {
        status.ADDED: "A",
        status.DELETED: "D",
        status.MODIFIED: "M",
        status.RENAMED: "R",
        status.TYPECHANGE: "T",
        # COPIED only appears when copy detection is asked for, which it never is here.
        status.COPIED: "A",
    }


def delta_paths(delta: pygit2.DiffDelta) -> tuple[str, str | None, str | None]:
    """(status letter, old path, new path) with None for the side that does not exist."""
    status = _status_letters().get(delta.status, "M")
    old_path = None if status == "A" else decode_path(delta.old_file.raw_path)
    new_path = None if status == "D" else decode_path(delta.new_file.raw_path)
    return status, old_path, new_path


def file_change(delta: pygit2.DiffDelta) -> FileChange:
    """One delta of a tree diff → its status, paths, blob ids and new mode."""
    status, old_path, new_path = delta_paths(delta)
    return FileChange(
        status=status,
        old_path=old_path,
        new_path=new_path,
        old_blob=None if old_path is None else str(delta.old_file.id),
        new_blob=None if new_path is None else str(delta.new_file.id),
        new_mode=None if new_path is None else int(delta.new_file.mode),
    )


def file_diff(patch: pygit2.Patch) -> FileDiff:
    """One patch of a zero-context tree diff → its changed line ranges (none for binary files and
    submodules)."""
    delta = patch.delta
    status, old_path, new_path = delta_paths(delta)
    added: list[LineRange] = []
    removed: list[LineRange] = []
    deleted_at: list[int] = []
    deleted_ranges: list[LineRange] = []
    gitlink = MODE_GITLINK in (delta.old_file.mode, delta.new_file.mode)
    if not delta.is_binary and not gitlink:
        for hunk in patch.hunks:
            if hunk.new_lines > 0:
                added.append((hunk.new_start, hunk.new_start + hunk.new_lines - 1))
            if hunk.old_lines > 0:
                old_range = (hunk.old_start, hunk.old_start + hunk.old_lines - 1)
                removed.append(old_range)
                if hunk.new_lines == 0 and any(line.raw_content.strip() for line in hunk.lines):
                    deleted_at.append(hunk.new_start)
                    deleted_ranges.append(old_range)
    return FileDiff(
        status, old_path, new_path, merge_ranges(added), merge_ranges(removed), deleted_at, deleted_ranges
    )


def find_renames(diff: pygit2.Diff, rename_threshold: int) -> None:
    """Pair deleted and added files at least ``rename_threshold`` percent similar as renames, in place."""
    diff.find_similar(
        flags=pygit2.enums.DiffFind.FIND_RENAMES,
        rename_threshold=rename_threshold,
    )


def merge_ranges(ranges: list[LineRange]) -> list[LineRange]:
    """Sorted ranges with touching or overlapping neighbours joined."""
    merged: list[LineRange] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
