"""A repository + a notes ref → the notes attached to its commits; a remote's name → its URL.

Reads only: the notes are written by the git CLI (the Action pushes them), and a clone gets
them with ``git fetch origin refs/notes/<name>:refs/notes/<name>``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowing_pr.git.lazy import lazy_module

if TYPE_CHECKING:
    import pygit2
else:
    pygit2 = lazy_module("pygit2")

__all__ = ["read_notes", "remote_url"]

#: a note's text is read up to this many bytes (a note of ours is a few kilobytes)
MAX_NOTE_BYTES = 1 << 20


def read_notes(repo: pygit2.Repository, ref: str) -> dict[str, str] | None:
    """Annotated commit sha → the note's text, for every note under ``ref``; None when the ref
    does not exist in this clone."""
    try:
        notes = list(repo.notes(ref))  # type: ignore[call-arg]  # the stub lacks the ref argument
    except (KeyError, pygit2.GitError):
        return None
    found: dict[str, str] = {}
    for note in notes:
        try:
            blob = repo[note.id]
        except (KeyError, ValueError, pygit2.GitError):
            continue
        if isinstance(blob, pygit2.Blob) and blob.size <= MAX_NOTE_BYTES:
            found[str(note.annotated_id)] = blob.data.decode("utf-8", "replace")
    return found


def remote_url(repo: pygit2.Repository, name: str) -> str | None:
    """The fetch URL of remote ``name``, None when there is no such remote."""
    try:
        remote = repo.remotes[name]
    except (KeyError, ValueError, pygit2.GitError):
        return None
    url = remote.url
    return str(url) if url else None
