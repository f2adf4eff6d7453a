"""Repository path + revisions → commits, trees, blobs, diffs and history records (the pygit2 boundary).

This package is the only place that imports pygit2. Everything it hands out is plain data: shas
as 40-hex ``str``, repository-relative POSIX paths as ``str`` (path bytes that are not UTF-8 are
decoded with ``surrogateescape``, so ``path.encode("utf-8", "surrogateescape")`` gives the bytes
back), and small frozen records.

It reads git objects only: never the working tree, never ``.gitattributes`` filters or textconv
(blobs are read raw), and it never writes refs, the index or the working tree.

Errors become :class:`knowing_pr.errors.RepoError` with a hint: not a repository, unknown
revision, objects missing because the clone is shallow (or partial).

Modules: ``records`` (the plain records and mode bits), ``repo`` (``GitRepo``: open, revisions,
trees, blobs, diffs), ``diff`` (pygit2 deltas and patches → records), ``walk`` (history walk →
``CommitInfo``), ``renames`` (the history's own rename measure), ``notes`` (git notes and remote
URLs, read only), ``lazy`` (pygit2 loaded on first use), ``served`` (a reader process that answers a fresh command's questions while it
imports the rest; ``open_repo`` hands it out).
"""

from __future__ import annotations

import os

from knowing_pr.git.records import (
    MODE_BLOB,
    MODE_EXECUTABLE,
    MODE_GITLINK,
    MODE_SYMLINK,
    MODE_TREE,
    CommitInfo,
    FileChange,
    FileDiff,
    LineRange,
    TreeEntry,
    is_utf8,
)
from knowing_pr.git.repo import GitRepo

__all__ = [
    "MODE_BLOB",
    "MODE_EXECUTABLE",
    "MODE_GITLINK",
    "MODE_SYMLINK",
    "MODE_TREE",
    "CommitInfo",
    "FileChange",
    "FileDiff",
    "GitRepo",
    "LineRange",
    "TreeEntry",
    "is_utf8",
    "open_repo",
]


def open_repo(path: str | os.PathLike[str]) -> GitRepo:
    """The repository containing ``path``: the reader's view when one was started for that path
    (``served.start_reader``), else ``GitRepo.open``."""
    from knowing_pr.git.served import served_repo

    served = served_repo(os.fspath(path))
    return served if served is not None else GitRepo.open(path)
