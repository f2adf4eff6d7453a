"""One commit → the store brought to it, in one transaction: the write path.

``commit.py`` is the entry (a store already at the commit answers at once), ``run.py`` the run,
as named phases (diff → classify → parse → resolve → store → roots → history → cache → meta);
beside it ``classify`` (skip reasons), ``parse`` (isolated parsing),
``names`` (what an incremental run must re-resolve), ``roots`` (Merkle roots), ``history``
(mining and co-change edges; ``historyahead``: a mine from scratch run in a child process
beside the resolve and store phases), ``cache`` (the adjacency blob) and ``report`` (what a run
did).
Nothing here imports rank-time code.
"""

from __future__ import annotations

from knowing_pr.index.classify import classify_content, classify_entry
from knowing_pr.index.commit import index_commit
from knowing_pr.index.parse import Progress
from knowing_pr.index.report import IndexReport

__all__ = ["IndexReport", "Progress", "classify_content", "classify_entry", "index_commit"]
