"""A repository + a notes ref → the notes attached to its commits; a remote's name → its URL.

``write_note`` replaces a commit's note (``pr --record note``; the Action writes its notes with
the git CLI and pushes them), and a clone gets them with
``git fetch origin refs/notes/<name>:refs/notes/<name>``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowing_pr.git.lazy import lazy_module

if TYPE_CHECKING:
    import pygit2
else:
    pygit2 = lazy_module("pygit2")

__all__ = ["read_notes", "remote_url", "write_note"]

#: a note's text is read up to this many bytes (a note of ours is a few kilobytes)
MAX_NOTE_BYTES = 1 << 20
#: who writes a note when the repository has no user.name / user.email configured
NOTES_AUTHOR = "knowing-pr"
NOTES_EMAIL = "knowing-pr@localhost"


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


def write_note(repo: pygit2.Repository, ref: str, sha: str, text: str) -> None:
    """Make ``text`` the note of commit ``sha`` under ``ref`` (a commit on that ref, by the
    repository's configured identity, else knowing-pr's). ``pygit2.GitError`` when it cannot."""
    try:
        signature = repo.default_signature
    except (KeyError, pygit2.GitError):
        signature = pygit2.Signature(NOTES_AUTHOR, NOTES_EMAIL)
    repo.create_note(text, signature, signature, sha, ref, True)


def remote_url(repo: pygit2.Repository, name: str) -> str | None:
    """The fetch URL of remote ``name``, None when there is no such remote."""
    try:
        remote = repo.remotes[name]
    except (KeyError, ValueError, pygit2.GitError):
        return None
    url = remote.url
    return str(url) if url else None
