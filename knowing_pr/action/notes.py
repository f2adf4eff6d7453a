"""A pack's request record + the checkout → a git note on the head commit under
``refs/notes/knowing-pr``, pushed to ``origin`` (so any clone can replay the pack by its hash
after ``git fetch origin refs/notes/knowing-pr:refs/notes/knowing-pr``).

The note holds one JSON record per line (``replay.note_text``): a commit can carry several
packs (budgets, re-runs). The push is retried after a fresh fetch when another run pushed
first. A checkout without stored credentials (``persist-credentials: false``) gets the token
as an ``http.<server>/.extraheader`` through ``GIT_CONFIG_*`` variables, never on a command
line. Nothing here fails the run: the caller logs a warning and goes on.
"""

from __future__ import annotations

import base64
import logging
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from knowing_pr.replay import NOTES_REF, note_text

__all__ = ["NoteError", "publish_note"]

log = logging.getLogger("knowing_pr.action")

#: the identity of the notes commit when the runner has none configured
_BOT_NAME = "github-actions[bot]"
_BOT_EMAIL = "41898282+github-actions[bot]@users.noreply.github.com"
_ATTEMPTS = 3


class NoteError(Exception):
    """The note could not be written or pushed; the message says which step and why."""


def publish_note(
    workspace: Path,
    head: str,
    record: Mapping[str, Any],
    *,
    env: Mapping[str, str],
    token: str | None = None,
    server_url: str = "https://github.com",
) -> None:
    """Add ``record`` to the head commit's note and push the notes ref; ``NoteError`` when the
    push is refused (no `contents: write`) or keeps losing the race."""
    git_env = _git_env(workspace, env, token, server_url)
    for attempt in range(1, _ATTEMPTS + 1):
        _git(workspace, ["fetch", "--no-tags", "origin", f"+{NOTES_REF}:{NOTES_REF}"], git_env, check=False)
        shown = _git(
            workspace, ["notes", f"--ref={NOTES_REF}", "show", "--end-of-options", head], git_env, check=False
        )
        text = note_text(shown.stdout if shown.returncode == 0 else None, record)
        _git(
            workspace,
            ["notes", f"--ref={NOTES_REF}", "add", "-f", "-F", "-", "--end-of-options", head],
            git_env,
            stdin=text,
        )
        pushed = _git(
            workspace, ["push", "--no-verify", "origin", f"{NOTES_REF}:{NOTES_REF}"], git_env, check=False
        )
        if pushed.returncode == 0:
            log.info("git note written on %s (%s)", head[:12], NOTES_REF)
            return
        said = pushed.stderr.strip().splitlines()[-1:] or ["(no message)"]
        if not _lost_a_race(pushed.stderr) or attempt == _ATTEMPTS:
            raise NoteError(f"pushing {NOTES_REF} failed: {said[0][:300]}")
        log.debug("the notes ref moved on the remote; fetching and trying again")
    raise NoteError(f"pushing {NOTES_REF} failed")  # pragma: no cover - the loop returns or raises


def _lost_a_race(stderr: str) -> bool:
    lowered = stderr.lower()
    return "non-fast-forward" in lowered or "fetch first" in lowered or "stale info" in lowered


def _git_env(workspace: Path, env: Mapping[str, str], token: str | None, server_url: str) -> dict[str, str]:
    git_env = {**env, "GIT_TERMINAL_PROMPT": "0"}
    for key, value in (
        ("GIT_AUTHOR_NAME", _BOT_NAME),
        ("GIT_AUTHOR_EMAIL", _BOT_EMAIL),
        ("GIT_COMMITTER_NAME", _BOT_NAME),
        ("GIT_COMMITTER_EMAIL", _BOT_EMAIL),
    ):
        git_env.setdefault(key, value)
    origin = _git(workspace, ["remote", "get-url", "origin"], git_env, check=False).stdout.strip()
    server = server_url.rstrip("/") + "/"
    key = f"http.{server}.extraheader"
    stored = _git(workspace, ["config", "--get-all", key], git_env, check=False).stdout.strip()
    if token and origin.startswith(server) and not stored:
        credentials = base64.b64encode(f"x-access-token:{token}".encode()).decode("ascii")
        index = int(git_env.get("GIT_CONFIG_COUNT", "0") or 0)
        git_env[f"GIT_CONFIG_KEY_{index}"] = key
        git_env[f"GIT_CONFIG_VALUE_{index}"] = f"AUTHORIZATION: basic {credentials}"
        git_env["GIT_CONFIG_COUNT"] = str(index + 1)
    return git_env


def _git(
    workspace: Path, args: list[str], env: Mapping[str, str], *, check: bool = True, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    try:
        result = subprocess.run(
            ["git", "-C", str(workspace), *args],
            env=dict(env),
            input=stdin,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NoteError(f"git {args[0]} failed: {exc}") from None
    if check and result.returncode != 0:
        raise NoteError(f"git {' '.join(args[:2])} failed: {result.stderr.strip()[:300]}")
    return result
