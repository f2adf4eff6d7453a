"""A commit + a repository-relative settings path → the settings committed there (a git blob,
never the work tree); two settings → the names of what differs between them.

Where the code under review is not the user's own (the Action on a pull request, the hook's
background worker), the settings come from a commit, not from a file on disk: the Action reads
the base commit's ``.knowing-pr.yml`` (the head is the code under review, and a pull request
must not decide what its own review shows), the hook worker the one of the commit it indexes.
A blob is never followed anywhere: a settings file committed as a symbolic link is refused.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from knowing_pr.config import CONFIG_FILENAME, Settings, load_settings
from knowing_pr.errors import ConfigError
from knowing_pr.git import MODE_BLOB, MODE_EXECUTABLE, GitRepo

__all__ = ["committed_config_text", "committed_settings", "settings_changes"]

#: a setting's dotted name → the key a person writes in ``.knowing-pr.yml``, where they differ
_WRITTEN_AS = {"index.extra_excludes": "exclude", "pack.budget_tokens": "budget"}


def committed_config_text(repo: GitRepo, commit: str, path: str = CONFIG_FILENAME) -> str | None:
    """The text of ``path`` at ``commit`` (None when the commit has no such file)."""
    entry = repo.entries_at(commit, [path]).get(path)
    if entry is None:
        return None
    if entry.mode not in (MODE_BLOB, MODE_EXECUTABLE):
        raise ConfigError(
            f"{path} at {commit[:12]} is not a regular file (a symbolic link or a submodule)",
            hint="commit the settings as a plain file; a link is never followed",
        )
    try:
        return repo.read_blob(entry.blob_id).decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path} at {commit[:12]} is not UTF-8 text") from None


def committed_settings(repo: GitRepo, revision: str, path: str | None = None) -> Settings:
    """The settings committed at ``revision`` (``path``, default ``.knowing-pr.yml``); the defaults
    when the commit has no such file."""
    name = path or CONFIG_FILENAME
    text = committed_config_text(repo, repo.resolve(revision), name)
    return Settings() if text is None else load_settings(text=text)


def settings_changes(before: Settings, after: Settings) -> list[str]:
    """The settings ``after`` sets differently from ``before``, by the names people write
    (``exclude``, ``index.workers``, ``rank.alpha``), in the order of ``Settings``."""
    changed: list[str] = []
    for section in dataclasses.fields(Settings):
        if not section.compare:  # not a setting (``removed_keys``: what the file named that is gone)
            continue
        old, new = getattr(before, section.name), getattr(after, section.name)
        if old == new:
            continue
        if dataclasses.is_dataclass(old):
            changed += [_written_as(f"{section.name}.{name}") for name in _differing_fields(old, new)]
        else:
            changed.append(section.name)
    return changed


def _differing_fields(old: Any, new: Any) -> list[str]:
    return [f.name for f in dataclasses.fields(old) if getattr(old, f.name) != getattr(new, f.name)]


def _written_as(name: str) -> str:
    return _WRITTEN_AS.get(name, name)
