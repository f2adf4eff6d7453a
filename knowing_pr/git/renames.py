"""The files one commit deletes and adds → which of them are renames, by this module's own measure.

Neither git's nor libgit2's rename detection is used for the history: each has its own similarity
measure, which may change from one version to the next, and the mined history must be a function
of the repository only. The rules (docs/history.md, "Renames"):

1. **Exact**: a deleted and an added file with the same blob id and the same kind (a regular file,
   executable or not, or a symbolic link) are a rename; where one blob id has several files on
   a side, a deleted file takes the first (by path) added file of the same base name, then the
   rest pair in path order. Empty files, submodules and paths that are not UTF-8 are never
   renames.
2. **Similar**: of the regular text files left, a pair is a rename when the lines they share make
   at least ``rule.threshold`` percent of the larger blob: ``Σ_{l ∈ L(old) ∩ L(new)} (len(l) + 1) /
   max(size(old), size(new))``, ``L`` the distinct non-empty lines of a blob (bytes compared
   exactly; a line counts once however often it repeats), sizes in bytes. Pairs are taken best
   first (score, then same base name, then old path, then new path), each file at most once.
   Binary files (a NUL byte in their first ``BINARY_SNIFF_BYTES``), files over ``rule.max_bytes``
   and files with no non-empty line are paired by the exact rule only. When the deleted × added files
   left exceed ``rule.max_pairs``, no similar pair is looked for (git's rename limit does the
   same): a move of thousands of edited files is counted as deletions and additions.

The rule's three numbers are the history's settings (``history.rename_threshold``,
``rename_max_pairs``, ``rename_max_bytes``; they enter the PackRoot). No blob is read for the
exact rule (the ids come with the changes). For the other, a score of ``threshold`` needs ``100 · (smaller size + 1) ≥ threshold · larger size``: sizes come from the
object headers, and only blobs with a partner of a size in that range are read, each once.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from knowing_pr.git.records import MODE_GITLINK, MODE_SYMLINK, is_utf8

__all__ = [
    "BINARY_SNIFF_BYTES",
    "RenameRule",
    "BlobSource",
    "Side",
    "apply_renames",
    "pair_renames",
]

#: (path, blob id, mode) of a file a commit deletes or adds
Side = tuple[str, str, int]
#: one change as ``CommitInfo.changes`` holds it
Change = tuple[str, str | None, str | None]

#: a blob with a NUL byte in this many first bytes is binary (git's own sniff length)
BINARY_SNIFF_BYTES = 8000


@dataclass(frozen=True)
class RenameRule:
    """When a deleted and an added file of one commit are one file moved (module docstring)."""

    #: the shared lines' share of the larger blob, in percent, that makes a similar pair a rename
    threshold: int = 50
    #: more deleted × added files than this (after the exact pairs): no similar pair is looked for
    max_pairs: int = 250_000
    #: larger blobs are paired by blob id only
    max_bytes: int = 1 << 20


#: git's id of the empty blob (SHA-1 and SHA-256)
_EMPTY_BLOBS = frozenset(
    {
        "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
        "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813",
    }
)


class BlobSource(Protocol):
    """Where the measure reads blobs (``GitRepo``'s object database)."""

    def size(self, blob_id: str) -> int:
        """The blob's size in bytes (-1: not readable here)."""

    def read(self, blob_id: str) -> bytes | None:
        """The blob's bytes (None: not readable here)."""


def pair_renames(
    deleted: Sequence[Side],
    added: Sequence[Side],
    blobs: BlobSource,
    rule: RenameRule,
) -> list[tuple[str, str]]:
    """(old path, new path) of every rename among one commit's ``deleted`` and ``added`` files by
    ``rule``, sorted; a blob ``blobs`` cannot read is paired by its id only."""
    old_left = [side for side in deleted if _candidate(side)]
    new_left = [side for side in added if _candidate(side)]
    pairs = _exact_pairs(old_left, new_left)
    paired_old = {old for old, _ in pairs}
    paired_new = {new for _, new in pairs}
    old_left = [side for side in old_left if side[0] not in paired_old and side[2] != MODE_SYMLINK]
    new_left = [side for side in new_left if side[0] not in paired_new and side[2] != MODE_SYMLINK]
    if old_left and new_left and len(old_left) * len(new_left) <= rule.max_pairs:
        pairs += _similar_pairs(old_left, new_left, blobs, rule)
    return sorted(pairs)


def apply_renames(changes: Sequence[Change], pairs: Sequence[tuple[str, str]]) -> list[Change]:
    """``changes`` with each paired deletion made a rename (in its place) and the paired addition
    dropped."""
    if not pairs:
        return list(changes)
    new_of = dict(pairs)
    renamed_to = set(new_of.values())
    out: list[Change] = []
    for status, old, new in changes:
        if status == "D" and old in new_of:
            out.append(("R", old, new_of[old]))
        elif not (status == "A" and new in renamed_to):
            out.append((status, old, new))
    return out


def _candidate(side: Side) -> bool:
    """Whether a file may be half of a rename: not a submodule, not empty, its path UTF-8 (the
    index stores no other path: such a rename is a deletion or an addition to it anyway)."""
    path, blob, mode = side
    return _kind(mode) is not None and blob not in _EMPTY_BLOBS and is_utf8(path)


def _kind(mode: int) -> str | None:
    """What a blob of ``mode`` may pair with: a file with a file, a link with a link, a submodule
    with nothing."""
    if mode == MODE_GITLINK:
        return None
    return "link" if mode == MODE_SYMLINK else "file"


def _base(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _exact_pairs(deleted: Sequence[Side], added: Sequence[Side]) -> list[tuple[str, str]]:
    by_blob: dict[tuple[str, str | None], list[str]] = {}
    for path, blob, mode in added:
        by_blob.setdefault((blob, _kind(mode)), []).append(path)
    olds: dict[tuple[str, str | None], list[str]] = {}
    for path, blob, mode in deleted:
        key = (blob, _kind(mode))
        if key in by_blob:
            olds.setdefault(key, []).append(path)
    pairs: list[tuple[str, str]] = []
    for key in sorted(olds, key=lambda k: (k[0], k[1] or "")):
        new_paths = sorted(by_blob[key])
        by_base: dict[str, deque[str]] = {}
        for new in new_paths:  # each base's new paths in order: the first unused one is at the front
            by_base.setdefault(_base(new), deque()).append(new)
        used: set[str] = set()
        left: list[str] = []
        for old in sorted(olds[key]):
            same = by_base.get(_base(old))
            if same:
                used.add(same[0])
                pairs.append((old, same.popleft()))
            else:
                left.append(old)
        pairs += zip(left, [new for new in new_paths if new not in used], strict=False)
    return pairs


def _lines(data: bytes | None) -> frozenset[bytes] | None:
    """The distinct non-empty lines of a text blob (None: binary, unreadable or without a line)."""
    if data is None or b"\0" in data[:BINARY_SNIFF_BYTES]:
        return None
    lines = frozenset(data.splitlines()) - {b""}
    return lines or None


def _similar_pairs(
    deleted: Sequence[Side],
    added: Sequence[Side],
    blobs: BlobSource,
    rule: RenameRule,
) -> list[tuple[str, str]]:
    threshold = rule.threshold
    news = sorted(
        (size, path, blob) for path, blob, _ in added if 0 < (size := blobs.size(blob)) <= rule.max_bytes
    )
    sizes = [size for size, _, _ in news]
    lines: dict[str, frozenset[bytes] | None] = {}

    def lines_of(blob: str) -> frozenset[bytes] | None:
        if blob not in lines:
            lines[blob] = _lines(blobs.read(blob))
        return lines[blob]

    scored: list[tuple[float, bool, str, str]] = []
    for old_path, old_blob, _ in sorted(deleted):
        size = blobs.size(old_blob)
        if not 0 < size <= rule.max_bytes:
            continue
        # 100 · (smaller + 1) ≥ threshold · larger bounds the score: sizes outside cannot reach it
        low = bisect_left(sizes, -(-threshold * size // 100) - 1)
        high = bisect_right(sizes, 100 * (size + 1) // max(threshold, 1))
        if low >= high:
            continue
        old_lines = lines_of(old_blob)
        if old_lines is None:
            continue
        for new_size, new_path, new_blob in news[low:high]:
            new_lines = lines_of(new_blob)
            if new_lines is None:
                continue
            common = old_lines & new_lines
            shared = sum(map(len, common)) + len(common)  # the common lines' bytes, newlines counted
            larger = max(size, new_size)
            if shared * 100 >= threshold * larger:
                scored.append((-shared / larger, _base(old_path) != _base(new_path), old_path, new_path))
    scored.sort()
    used_old: set[str] = set()
    used_new: set[str] = set()
    pairs: list[tuple[str, str]] = []
    for _, _, old_path, new_path in scored:
        if old_path not in used_old and new_path not in used_new:
            used_old.add(old_path)
            used_new.add(new_path)
            pairs.append((old_path, new_path))
    return pairs
