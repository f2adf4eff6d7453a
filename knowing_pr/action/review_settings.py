"""The Action's settings + the base and head commits → which settings the review uses (the
base commit's), and the one line that says what the pull request would change in them.

A pull request is the code under review: its own ``.knowing-pr.yml`` must not decide what its
review shows (an ``exclude`` that hides the call sites it breaks, more workers, longer
timeouts). So a settings file that the base or the head commits is read as a git blob of the
base commit, never from the work tree (where the head is checked out): a file only the head
has counts as absent (the defaults). A settings file no commit has, or one outside the
workspace, was made or named by the workflow itself (the ``config`` input), is the workflow
author's, and is read from disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from knowing_pr.action.settings import ActionSettings
from knowing_pr.errors import ConfigError, KnowingPRError

if TYPE_CHECKING:
    from knowing_pr.pipeline import Workspace

__all__ = ["committed_config_path", "open_review_workspace", "settings_change_note", "with_settings_note"]

#: the note names at most this many characters of settings (and of the file's path)
MAX_LISTED_CHARS = 300
#: a pull request's settings file longer than this is not read for the note
MAX_HEAD_CONFIG_CHARS = 1 << 20
_DEFAULT_CONFIG = ".knowing-pr.yml"  # config.CONFIG_FILENAME (not imported: keeps this module light)


def open_review_workspace(
    workspace: Path, config_path: Path | None, budget_tokens: int, settings_commit: str | None
) -> Workspace:
    """The workspace a review packs in: with ``settings_commit`` the settings file (``config_path``
    inside the workspace, else ``.knowing-pr.yml``) as committed there, never the work tree's;
    without, the workflow's own file from disk (``committed_config_path``)."""
    from knowing_pr.pipeline import open_workspace

    if settings_commit is not None:
        config = config_path.relative_to(workspace).as_posix() if config_path else None
        return open_workspace(workspace, config=config, budget=budget_tokens, settings_at=settings_commit)
    return open_workspace(workspace, config=str(config_path) if config_path else None, budget=budget_tokens)


def committed_config_path(settings: ActionSettings, base: str, head: str) -> str | None:
    """The repository-relative settings file to read from the base commit; None when the file is
    the workflow's own (outside the workspace, or committed in neither commit): read from disk."""
    path = _DEFAULT_CONFIG if settings.config_path is None else settings.config_in_repository
    if path is None:
        return None
    from knowing_pr.git import open_repo

    repo = open_repo(settings.workspace)
    commits = (repo.resolve(base), repo.resolve(head))
    return path if any(repo.entries_at(commit, [path]) for commit in commits) else None


def settings_change_note(workspace: Path, path: str, base: str, head: str) -> str | None:
    """One line when ``path`` differs between ``base`` and ``head``: the settings the pull request
    would change (by the names people write), and that the base's were used; None otherwise."""
    from knowing_pr.config import Settings, load_settings
    from knowing_pr.git import open_repo
    from knowing_pr.pipeline.committed import committed_config_text, settings_changes

    repo = open_repo(workspace)
    base_sha, head_sha = repo.resolve(base), repo.resolve(head)
    before_text = committed_config_text(repo, base_sha, path)
    try:
        after_text = committed_config_text(repo, head_sha, path)
    except ConfigError:
        return _note(path, "it is not a regular file")
    if before_text == after_text:
        return None
    before = Settings() if before_text is None else load_settings(text=before_text)
    if after_text is not None and not _plain_yaml(after_text):
        return _note(path, "it does not load as settings")
    try:
        after = Settings() if after_text is None else load_settings(text=after_text)
    except KnowingPRError:  # its own message is the pull request's text: not repeated here
        return _note(path, "it does not load as settings")
    return _note(path, _listed(settings_changes(before, after)))


def _plain_yaml(text: str) -> bool:
    """The head's settings text is small and has no anchors or aliases (an alias bomb of a few
    hundred bytes expands to gigabytes): checked on the event stream, which nothing expands."""
    if len(text) > MAX_HEAD_CONFIG_CHARS:
        return False
    import yaml

    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                return False
    except yaml.YAMLError:
        return False
    return True


def _listed(names: list[str]) -> str:
    """The changed settings' names, cut to ``MAX_LISTED_CHARS`` with a count of the rest."""
    if not names:
        return "no setting"
    shown: list[str] = []
    for name in names:
        if len(", ".join([*shown, name])) > MAX_LISTED_CHARS:
            break
        shown.append(name)
    rest = len(names) - len(shown)
    return ", ".join(shown) + (f" and {rest} more" if rest else "")


def _note(path: str, what: str) -> str:
    return f"This PR changes {path[:MAX_LISTED_CHARS]} ({what}); this review used the base's settings."


def with_settings_note(body: str, note: str) -> str:
    """``body`` with ``note`` as a quoted line under its heading (the hidden lines stay first)."""
    lines = body.split("\n")
    at = next((i + 1 for i, line in enumerate(lines[:8]) if line.startswith("#")), None)
    if at is None:
        at = next((i for i, line in enumerate(lines) if not line.startswith("<!--")), len(lines))
    return "\n".join([*lines[:at], "", f"> ⚠️ {note}", *lines[at:]])
