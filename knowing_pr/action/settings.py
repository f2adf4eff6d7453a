"""The Actions environment and the event file → ``ActionSettings`` and ``PullRequestContext``.

Every value is validated once, here; the event's text (titles, bodies, refs) stays untrusted.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowing_pr.errors import ConfigError
from knowing_pr.git.revisions import revision_problem

__all__ = ["ActionSettings", "PullRequestContext", "read_event"]

_FORMATS = ("markdown", "json", "xml")
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_NULL_SHA = "0" * 40


# -- settings ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ActionSettings:
    """Everything the action reads from its environment, validated once."""

    event_name: str
    event_path: Path | None
    repository: str
    api_url: str
    workspace: Path
    output_path: Path | None
    summary_path: Path | None
    runner_temp: Path | None
    token: str = field(repr=False)
    budget_tokens: int = 8000
    output_format: str = "markdown"
    comment: bool = True
    base: str | None = None
    head: str | None = None
    config_path: Path | None = None
    fail_on_error: bool = False
    task_from_pr: bool = True
    #: write the pack's request as a git note on the head commit and push it (needs a token that
    #: may push: `permissions: contents: write`)
    git_notes: bool = False
    #: open the comment with what moved since the previous push (its pack rebuilt from its request)
    since_previous_push: bool = True
    server_url: str = "https://github.com"
    #: commits fetched per missing revision in a shallow checkout before unshallowing
    fetch_depth: int = 50
    deepen_rounds: int = 3  # fetches of fetch_depth more commits to find the merge base, then unshallow
    max_summary_bytes: int = 1 << 20
    max_comment_bytes: int = 65536

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ActionSettings:
        workspace = Path(env.get("GITHUB_WORKSPACE") or os.getcwd())
        config = _text(env, "KNOWING_PR_CONFIG")
        return cls(
            event_name=_text(env, "GITHUB_EVENT_NAME") or "",
            event_path=_path(env, "GITHUB_EVENT_PATH"),
            repository=_repository(_text(env, "GITHUB_REPOSITORY") or ""),
            api_url=(_text(env, "GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
            workspace=workspace,
            output_path=_path(env, "GITHUB_OUTPUT"),
            summary_path=_path(env, "GITHUB_STEP_SUMMARY"),
            runner_temp=_path(env, "RUNNER_TEMP"),
            token=env.get("GITHUB_TOKEN", "").strip(),
            budget_tokens=_positive_int(env, "KNOWING_PR_BUDGET", 8000),
            output_format=_choice(env, "KNOWING_PR_FORMAT", _FORMATS, "markdown"),
            comment=_flag(env, "KNOWING_PR_COMMENT", True),
            base=_revision(env, "KNOWING_PR_BASE"),
            head=_revision(env, "KNOWING_PR_HEAD"),
            config_path=(workspace / config) if config else None,
            fail_on_error=_flag(env, "KNOWING_PR_FAIL_ON_ERROR", False),
            task_from_pr=_flag(env, "KNOWING_PR_TASK_FROM_PR", True),
            git_notes=_flag(env, "KNOWING_PR_GIT_NOTES", False),
            since_previous_push=_flag(env, "KNOWING_PR_SINCE_PREVIOUS_PUSH", True),
            server_url=(_text(env, "GITHUB_SERVER_URL") or "https://github.com").rstrip("/"),
        )

    @property
    def config_in_repository(self) -> str | None:
        """The settings file as a repository-relative path, when it is not the default one."""
        if self.config_path is None:
            return None
        try:
            return self.config_path.relative_to(self.workspace).as_posix()
        except ValueError:
            return None

    @property
    def out_dir(self) -> Path:
        """Where the manifest and the handoff file go (uploaded as the artifact)."""
        if self.runner_temp is not None:
            return self.runner_temp / "knowing-pr"
        return self.workspace / ".knowing-pr"


def _text(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


def _path(env: Mapping[str, str], name: str) -> Path | None:
    value = _text(env, name)
    return Path(value) if value else None


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    value = (_text(env, name) or "").lower()
    if not value:
        return default
    if value in ("true", "1", "yes", "on"):
        return True
    if value in ("false", "0", "no", "off"):
        return False
    raise ConfigError(f"{name} must be true or false, got {value[:40]!r}")


def _positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    value = _text(env, name)
    if value is None:
        return default
    if not value.isascii() or not value.isdigit() or int(value) < 1:
        raise ConfigError(
            f"{name} must be a positive whole number of tokens, got {value[:40]!r}",
            hint="for example `budget: 8000`",
        )
    return int(value)


def _choice(env: Mapping[str, str], name: str, choices: Sequence[str], default: str) -> str:
    value = (_text(env, name) or default).lower()
    if value not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(choices)}, got {value[:40]!r}")
    return value


def _revision(env: Mapping[str, str], name: str) -> str | None:
    return _checked_revision(_text(env, name), name)


def _checked_revision(value: object, name: str) -> str | None:
    """A revision from a workflow input or the event (untrusted): the value, None when absent, or
    a ``ConfigError`` naming the input (``git.revisions.revision_problem``)."""
    if value is None or value == "":
        return None
    problem = revision_problem(value)
    if problem is not None:
        shown = value[:40] if isinstance(value, str) else type(value).__name__
        raise ConfigError(f"{name} is not a commit or ref name: {shown!r} ({problem})")
    return str(value)


def _repository(value: str) -> str:
    if value and not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", value):
        raise ConfigError(f"GITHUB_REPOSITORY is not owner/name: {value[:80]!r}")
    return value


# -- the event -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PullRequestContext:
    """What the triggering event says about the pull request (all of it untrusted text)."""

    number: int | None
    base: str | None
    head: str | None
    title: str = ""
    body: str = ""
    head_repository: str | None = None
    is_fork: bool = False
    #: the pull request's author (their GitHub login): never suggested as a reviewer
    author: str | None = None

    def task_text(self) -> str | None:
        text = "\n\n".join(part for part in (self.title, self.body) if part)
        return text or None


def read_event(settings: ActionSettings) -> PullRequestContext:
    """Parse ``GITHUB_EVENT_PATH`` for the pull request number, base and head commits."""
    event = _load_event(settings.event_path)
    name = settings.event_name
    if name in ("pull_request", "pull_request_target"):
        pull = _mapping(event.get("pull_request"))
        base, head = _mapping(pull.get("base")), _mapping(pull.get("head"))
        head_repo = _mapping(head.get("repo")).get("full_name")
        base_repo = _mapping(base.get("repo")).get("full_name")
        return PullRequestContext(
            number=_number(pull.get("number")),
            base=_sha(base.get("sha")),
            head=_sha(head.get("sha")),
            title=str(pull.get("title") or ""),
            body=str(pull.get("body") or ""),
            head_repository=str(head_repo) if head_repo else None,
            is_fork=bool(head_repo and base_repo and head_repo != base_repo),
            author=_login(_mapping(pull.get("user")).get("login")),
        )
    if name == "workflow_run":
        run = _mapping(event.get("workflow_run"))
        pulls = run.get("pull_requests") or []
        first = _mapping(pulls[0]) if isinstance(pulls, list) and pulls else {}
        return PullRequestContext(
            number=_number(first.get("number")),
            base=_sha(_mapping(first.get("base")).get("sha")),
            head=_sha(run.get("head_sha")),
        )
    if name == "workflow_dispatch":
        inputs = _mapping(event.get("inputs"))
        raw_number = inputs.get("pr") or inputs.get("pr-number") or inputs.get("pr_number")
        return PullRequestContext(
            number=_number(raw_number),
            base=_checked_revision(inputs.get("base"), "the workflow_dispatch input 'base'"),
            head=_checked_revision(inputs.get("head"), "the workflow_dispatch input 'head'"),
        )
    return PullRequestContext(number=None, base=_sha(event.get("before")), head=_sha(event.get("after")))


def _login(value: Any) -> str | None:
    """A GitHub login from the event (untrusted): kept only when it has a login's characters."""
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?", value):
        return value
    return None


def _load_event(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read the event file GITHUB_EVENT_PATH: {exc.__class__.__name__}") from None
    return data if isinstance(data, dict) else {}


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value > 0:
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit() and int(value) > 0:
        return int(value)
    return None


def _sha(value: object) -> str | None:
    if isinstance(value, str) and _SHA.fullmatch(value) and value != _NULL_SHA:
        return value
    return None
