"""Git objects as plain data → frozen records: tree entries, file changes, line-range diffs, commits.

What ``knowing_pr.git`` hands out, free of pygit2: shas are 40-hex ``str``, paths are
repository-relative POSIX ``str`` (bytes that are not UTF-8 decoded with ``surrogateescape`` by
``decode_path``, so ``path.encode("utf-8", "surrogateescape")`` gives them back), and modes are
git's tree-entry mode bits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "CommitAuthor",
    "CommitInfo",
    "FileChange",
    "FileDiff",
    "LineRange",
    "MODE_BLOB",
    "MODE_EXECUTABLE",
    "MODE_GITLINK",
    "MODE_SYMLINK",
    "MODE_TREE",
    "MAX_SUBJECT_CHARS",
    "TreeEntry",
    "commit_subject",
    "decode_path",
    "is_utf8",
]

#: git's mode bits of tree entries (as stored in trees, see git's ``cache.h``)
MODE_TREE = 0o040000
MODE_BLOB = 0o100644
MODE_EXECUTABLE = 0o100755
MODE_SYMLINK = 0o120000
MODE_GITLINK = 0o160000

#: 1-based inclusive (first line, last line)
LineRange = tuple[int, int]


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One non-tree entry of a commit's tree (blob, executable, symlink or submodule gitlink)."""

    path: str
    #: blob id; for a submodule (mode 0o160000) the sha of the commit it points to
    blob_id: str
    mode: int
    #: bytes of the blob (for a symlink: length of the link text); 0 for a submodule
    size: int


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file changed between two trees; status is one of A, D, M, R, T."""

    status: str
    old_path: str | None
    new_path: str | None
    old_blob: str | None
    new_blob: str | None
    new_mode: int | None


@dataclass(frozen=True, slots=True)
class FileDiff:
    """Changed line ranges of one file: 1-based inclusive (start, end) pairs."""

    status: str
    old_path: str | None
    new_path: str | None
    #: lines of the new file that were added or modified
    added: list[LineRange]
    #: lines of the old file that were deleted or modified
    removed: list[LineRange]
    #: where lines were deleted without a replacement, blank lines alone aside: the new file's
    #: line before the gap (0 at the top); not part of equality, so records compare by their ranges
    deleted_at: list[int] = field(default_factory=list, compare=False)
    #: the old file's lines of each gap of ``deleted_at``, in its order
    deleted_ranges: list[LineRange] = field(default_factory=list, compare=False)


@dataclass(frozen=True, slots=True)
class CommitInfo:
    """One commit of a history walk with the files it changed against its first parent."""

    sha: str
    #: committer time, seconds since the epoch
    time: int
    parents: list[str]
    #: (status, old_path, new_path) per changed file
    changes: list[tuple[str, str | None, str | None]]
    #: a shallow clone cut the history here: the real parents are missing, ``changes`` is empty
    shallow_boundary: bool = False
    #: ``changes`` are without rename detection (it both adds and deletes files, and the walk was
    #: asked to defer renames): ``GitRepo.with_renames`` gives the record with them
    renames_pending: bool = False
    #: the message's subject (``commit_subject``): repository text, never rendered raw
    subject: str = ""
    #: with ``renames_pending``: (status, path, blob id, mode) of each file deleted ("D", its old
    #: blob) or added ("A", its new blob), what ``git/renames.py`` pairs; not part of equality
    sides: tuple[tuple[str, str, str, int], ...] = field(default=(), compare=False, repr=False)

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1


#: the most characters of a commit's subject kept
MAX_SUBJECT_CHARS = 200


def commit_subject(message: str) -> str:
    """A commit message's subject as ``git log --format=%s`` prints it (its first paragraph, lines
    joined by spaces), whitespace collapsed, at most ``MAX_SUBJECT_CHARS`` characters. As git
    does, blank lines before it are skipped and a line of spaces, tabs or a carriage return alone
    ends it (a ``\r\n`` message, a line of spaces between subject and body)."""
    lines = message.split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip(_GIT_SPACE)), len(lines))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip(_GIT_SPACE)), len(lines))
    return " ".join(" ".join(lines[start:end]).split())[:MAX_SUBJECT_CHARS]


#: what git counts as white space where it looks for a blank line (its ``isspace``)
_GIT_SPACE = " \t\n\r"


def decode_path(raw: bytes) -> str:
    """Path bytes from a tree or a diff → ``str``, bytes that are not UTF-8 kept as surrogates."""
    return raw.decode("utf-8", "surrogateescape")


def is_utf8(path: str) -> bool:
    """Whether a path from ``decode_path`` was valid UTF-8 (no bytes kept as surrogates): only such
    a path can be stored (SQLite text is UTF-8)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class CommitAuthor:
    """A commit's author (mailmap applied), its committer time and how many files it changed
    against its first parent (every file of the tree for a root commit)."""

    sha: str
    name: str
    email: str
    time: int
    files_changed: int
