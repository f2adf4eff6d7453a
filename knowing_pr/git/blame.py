"""A commit + a file's line ranges → which commits last changed those lines; commits → their
authors (through a mailmap) and how many files they changed (the pygit2 side of ``history/reviewers.py``).

``blame_ranges`` runs one libgit2 blame per file over the span of the asked ranges (``min_line``
to ``max_line``: libgit2 stops walking once every line of the span is attributed) and keeps the
lines inside the ranges. libgit2 has no ``--ignore-revs``: the caller drops the lines of ignored
commits instead of passing them to older ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from knowing_pr.git.lazy import lazy_module
from knowing_pr.git.records import CommitAuthor, LineRange

if TYPE_CHECKING:
    import pygit2

    from knowing_pr.git.repo import GitRepo
else:
    pygit2 = lazy_module("pygit2")

__all__ = ["CommitAuthor", "blame_ranges", "commit_authors", "commits_between"]


def blame_ranges(
    repo: GitRepo, commit: str, path: str, ranges: Sequence[LineRange], *, oldest: str | None = None
) -> list[tuple[int, int, str]]:
    """The lines of ``ranges`` (1-based, inclusive) of ``path`` as of ``commit`` as (first line,
    last line, sha of the commit that last changed them), in line order; empty when the file is
    not in ``commit`` or cannot be blamed. With ``oldest``, the walk stops there: lines older
    than it are left out (the walk back to a file's first commit is most of a blame's time)."""
    if not ranges:
        return []
    low = min(start for start, _ in ranges)
    high = max(end for _, end in ranges)
    stop = oldest if oldest is not None and repo.has_commit(oldest) else None
    try:
        blame = repo._repo.blame(
            path, newest_commit=repo.resolve(commit), oldest_commit=stop, min_line=low, max_line=high
        )
    except (KeyError, ValueError, pygit2.GitError):
        return []
    out: list[tuple[int, int, str]] = []
    for hunk in blame:
        if stop is not None and (hunk.boundary or str(hunk.final_commit_id) == stop):
            continue
        first = hunk.final_start_line_number
        last = first + hunk.lines_in_hunk - 1
        for start, end in ranges:
            if max(first, start) <= min(last, end):
                out.append((max(first, start), min(last, end), str(hunk.final_commit_id)))
    return sorted(out)


def commits_between(repo: GitRepo, base: str, head: str, limit: int) -> list[str]:
    """The commits of ``head`` that ``base`` does not have (a change's own), newest first, at most
    ``limit``."""
    try:
        walker = repo._repo.walk(repo._repo[repo.resolve(head)].id, pygit2.enums.SortMode.TOPOLOGICAL)
        walker.hide(repo._repo[repo.resolve(base)].id)
        out: list[str] = []
        for commit in walker:
            if len(out) >= limit:
                break
            out.append(str(commit.id))
        return out
    except (KeyError, ValueError, pygit2.GitError):
        return []


def commit_authors(
    repo: GitRepo, shas: Iterable[str], mailmap_text: bytes | None = None
) -> dict[str, CommitAuthor]:
    """Each commit's author as the mailmap (the text of a ``.mailmap``, when given) names them; a
    commit missing from the object database (a shallow clone) is left out."""
    mailmap = _mailmap(mailmap_text)
    out: dict[str, CommitAuthor] = {}
    for sha in sorted(set(shas)):
        try:
            commit = repo._repo[sha]
        except (KeyError, ValueError, pygit2.GitError):
            continue
        if not isinstance(commit, pygit2.Commit):
            continue
        name, email = commit.author.name, commit.author.email
        if mailmap is not None:
            name, email = mailmap.resolve(name, email)
        out[sha] = CommitAuthor(sha, name, email, int(commit.commit_time), _files_changed(commit))
    return out


def _files_changed(commit: pygit2.Commit) -> int:
    try:
        if commit.parents:
            return len(commit.parents[0].tree.diff_to_tree(commit.tree))
        return len(commit.tree.diff_to_tree(swap=True))
    except (KeyError, pygit2.GitError):
        return 0


def _mailmap(text: bytes | None) -> pygit2.Mailmap | None:
    """The repository's ``.mailmap``; None when there is none or libgit2 cannot read it (a NUL
    byte): people then keep the addresses they committed with, and the pack is still made."""
    if not text:
        return None
    try:
        return pygit2.Mailmap.from_buffer(text.decode("utf-8", "replace"))
    except (ValueError, pygit2.GitError):
        return None
