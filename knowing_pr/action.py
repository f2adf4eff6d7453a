"""The GitHub Actions environment → a pack, a sticky PR comment, the job summary, step outputs.

``knowing-pr action`` reads everything from the environment (``action.yml`` passes each input
through ``env:``, never through a shell line), so ``run_action(env)`` is the whole entry
point. Collaborators are injected: ``build_pack`` (the pipeline) and ``publisher_factory``
(the GitHub boundary); ``main()`` wires the real ones.

Order of effects, so that a failure late in the run loses as little as possible::

    settings → event → missing commits fetched → pack built
      → manifest file (+ the comment handoff file) → job summary → outputs
      → comment (403: warning and summary only; 422: one smaller comment) → comment-url output

The fallback ladder is comment → job summary → artifact (the manifest directory). With
``fail-on-error: false`` (the default) every error becomes an annotation and the step exits
0; with ``true`` it exits 1. Untrusted text (PR titles, paths, error messages) reaches the
log only as an escaped annotation or inside ``::stop-commands::``.

Two-workflow pattern (fork PRs): a ``pull_request`` run with a read-only token writes
``pr-comment.json`` next to the manifest and uploads that directory as an artifact; a
``workflow_run`` run downloads it into the same place and only posts it, after checking that
the pull request's head is still the commit the artifact was built for (docs/action.md).
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TextIO

from knowing_pr.errors import ConfigError, GitHubError, KnowingPRError, RepoError
from knowing_pr.github import (
    COMMENT_MARKER,
    CommentForbidden,
    CommentTooLarge,
    UpsertResult,
    pack_root_marker,
)
from knowing_pr.model import Pack

__all__ = [
    "ActionSettings",
    "PackBuilder",
    "Publisher",
    "PullRequestContext",
    "WorkflowCommandFormatter",
    "append_summary",
    "build_pack_with_pipeline",
    "ensure_commits",
    "main",
    "read_event",
    "run_action",
    "write_outputs",
]

HANDOFF_FILENAME = "pr-comment.json"
MANIFEST_FILENAME = "pack.json"
_FORMATS = ("markdown", "json", "xml")
_PACK_ROOT = re.compile(r"[0-9a-f]{64}")
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_NULL_SHA = "0" * 40
_LOGGERS = ("knowing_pr.action", "knowing_pr.github")

log = logging.getLogger("knowing_pr.action")


# -- collaborators -------------------------------------------------------------------------------


class PackBuilder(Protocol):
    """Builds the pack; returns (pack, markdown for the job summary, comment body)."""

    def __call__(
        self,
        *,
        workspace: Path,
        base: str,
        head: str,
        budget_tokens: int,
        task: str | None,
        config_path: Path | None,
        output_format: str,
        max_comment_bytes: int,
    ) -> tuple[Pack, str, str]: ...


class Publisher(Protocol):
    def upsert_comment(self, body: str, pack_root: str) -> UpsertResult: ...

    def pull_head_sha(self) -> str: ...


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
    #: commits fetched per missing revision in a shallow checkout before unshallowing
    fetch_depth: int = 50
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
        )

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
    value = _text(env, name)
    if value is not None and (value.startswith("-") or any(c.isspace() or ord(c) < 32 for c in value)):
        raise ConfigError(f"{name} is not a commit or ref name: {value[:40]!r}")
    return value


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
            base=str(inputs["base"]) if inputs.get("base") else None,
            head=str(inputs["head"]) if inputs.get("head") else None,
        )
    return PullRequestContext(number=None, base=_sha(event.get("before")), head=_sha(event.get("after")))


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


# -- git: shallow checkouts ----------------------------------------------------------------------


def ensure_commits(workspace: Path, revisions: Sequence[str], *, depth: int, env: Mapping[str, str]) -> None:
    """Fetch (then unshallow) until every revision is a local commit, or raise ``RepoError``."""
    git_env = {**env, "GIT_TERMINAL_PROMPT": "0"}
    missing = [r for r in revisions if not _has_commit(workspace, r, git_env)]
    if not missing:
        return
    log.info("fetching %d commit(s) missing from the checkout", len(missing))
    _git(workspace, ["fetch", "--no-tags", f"--depth={depth}", "origin", *missing], git_env)
    missing = [r for r in missing if not _has_commit(workspace, r, git_env)]
    if missing and _git(workspace, ["rev-parse", "--is-shallow-repository"], git_env).strip() == "true":
        log.info("deepening the shallow checkout")
        _git(workspace, ["fetch", "--no-tags", "--unshallow", "origin"], git_env)
        missing = [r for r in missing if not _has_commit(workspace, r, git_env)]
    if missing:
        raise RepoError(
            f"commit {missing[0][:40]} is not in the checkout and could not be fetched",
            hint="set `fetch-depth: 0` on actions/checkout so the base and head commits are present",
        )


def _has_commit(workspace: Path, revision: str, env: Mapping[str, str]) -> bool:
    result = subprocess.run(
        ["git", "-C", str(workspace), "cat-file", "-e", f"{revision}^{{commit}}"],
        env=dict(env),
        capture_output=True,
        check=False,
        timeout=60,
    )
    return result.returncode == 0


def _git(workspace: Path, args: list[str], env: Mapping[str, str]) -> str:
    """Run git; a failure is logged at debug level and yields "" (the caller re-checks)."""
    try:
        result = subprocess.run(
            ["git", "-C", str(workspace), *args],
            env=dict(env),
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.debug("git %s failed: %s", args[0], exc)
        return ""
    if result.returncode != 0:
        log.debug("git %s exited %d: %s", args[0], result.returncode, result.stderr.strip()[:500])
        return ""
    return result.stdout


# -- files: manifest, summary, outputs -----------------------------------------------------------


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def pack_json(pack: Pack) -> str:
    """The pack as the JSON contract (the renderer's JSON)."""
    from knowing_pr.render import render_pack

    return render_pack(pack, "json")


def append_summary(path: Path, markdown: str, *, max_bytes: int) -> int:
    """Append to the job summary, cut at a line boundary to stay within ``max_bytes``."""
    existing = path.stat().st_size if path.exists() else 0
    text = _truncate_markdown(markdown, max(0, max_bytes - existing))
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text if text.endswith("\n") else text + "\n")
    return len(text.encode("utf-8"))


def _truncate_markdown(markdown: str, max_bytes: int) -> str:
    data = markdown.encode("utf-8")
    if len(data) + 1 <= max_bytes:
        return markdown
    note = "\n\n_… truncated to fit the job summary; the full pack is in the manifest artifact._\n"
    reserve = len(note.encode("utf-8")) + 64
    cut = data[: max(0, max_bytes - reserve)].decode("utf-8", errors="ignore")
    cut = cut[: cut.rfind("\n") + 1] if "\n" in cut else ""
    closers = ""
    fence = _open_fence(cut)
    if fence:
        closers += fence + "\n"
    closers += "</details>\n" * max(0, cut.count("<details>") - cut.count("</details>"))
    return cut + closers + note


def _open_fence(markdown: str) -> str | None:
    """The fence that is still open at the end of ``markdown``, if any."""
    open_fence: str | None = None
    for line in markdown.splitlines():
        stripped = line.lstrip()
        run = re.match(r"(`{3,}|~{3,})", stripped)
        if not run:
            continue
        marker = run.group(1)
        if open_fence is None:
            open_fence = marker
        elif (
            marker[0] == open_fence[0]
            and len(marker) >= len(open_fence)
            and not stripped[len(marker) :].strip()
        ):
            open_fence = None
    return open_fence


def write_outputs(path: Path, outputs: Mapping[str, str]) -> None:
    """Append step outputs with the heredoc syntax and a random delimiter per value."""
    lines = []
    for name, value in outputs.items():
        delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
        while delimiter in value:
            delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
        lines.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(lines))


# -- logging as workflow commands ----------------------------------------------------------------


class WorkflowCommandFormatter(logging.Formatter):
    """Levels → ``::error::`` / ``::warning::`` / ``::debug::``; plain lines are neutralised.

    Annotation data is escaped (``%``, CR, LF), so a message stays one command; an info line
    that contains ``::`` is wrapped in ``::stop-commands::`` with a random token, so nothing in
    it can be read as a workflow command.
    """

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if record.levelno >= logging.ERROR:
            return "::error::" + _escape_data(text)
        if record.levelno >= logging.WARNING:
            return "::warning::" + _escape_data(text)
        if record.levelno < logging.INFO:
            return "::debug::" + _escape_data(text)
        if "::" in text:
            token = secrets.token_hex(16)
            return f"::stop-commands::{token}\n{text}\n::{token}::"
        return text


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _install_log_handler(out: TextIO) -> logging.Handler:
    """Send our loggers (only) to ``out`` as workflow commands for the duration of a run."""
    handler = logging.StreamHandler(out)
    handler.setFormatter(WorkflowCommandFormatter("%(message)s"))
    handler.setLevel(logging.DEBUG)
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
        logger.propagate = False  # a root handler would print each line a second time, unescaped
    return handler


def _remove_log_handler(handler: logging.Handler) -> None:
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        logger.removeHandler(handler)
        logger.propagate = True
        logger.setLevel(logging.NOTSET)


# -- the run -------------------------------------------------------------------------------------


def run_action(
    env: Mapping[str, str],
    *,
    build_pack: PackBuilder | None = None,
    publisher_factory: Callable[[ActionSettings, int], Publisher] | None = None,
    shrink_comment: Callable[[Pack, int], str] | None = None,
    out: TextIO | None = None,
) -> int:
    """Run the action; the exit status follows ``fail-on-error`` (errors → 1, else always 0)."""
    handler = _install_log_handler(out or sys.stdout)
    try:
        fail_on_error = _flag(env, "KNOWING_PR_FAIL_ON_ERROR", False)
    except ConfigError:
        fail_on_error = True  # a policy we cannot read is not a reason to hide an error
    try:
        settings = ActionSettings.from_env(env)
        fail_on_error = settings.fail_on_error
        _run(
            settings,
            env,
            build_pack or build_pack_with_pipeline,
            publisher_factory or _default_publisher,
            shrink_comment or _shrink_comment,
        )
        return 0
    except KnowingPRError as exc:
        _report_failure(exc.message, exc.hint, fail_on_error)
        return 1 if fail_on_error else 0
    except Exception as exc:  # noqa: BLE001 - a bug must not fail a check that only informs
        log.debug("internal error", exc_info=True)
        _report_failure(f"internal error: {exc.__class__.__name__}", "please report this", fail_on_error)
        return 1 if fail_on_error else 0
    finally:
        _remove_log_handler(handler)


def _report_failure(message: str, hint: str | None, fail_on_error: bool) -> None:
    text = f"knowing-pr: {message}" + (f" (hint: {hint})" if hint else "")
    if fail_on_error:
        log.error("%s", text)
    else:
        log.warning("%s", text)


def _run(
    settings: ActionSettings,
    env: Mapping[str, str],
    build_pack: PackBuilder,
    publisher_factory: Callable[[ActionSettings, int], Publisher],
    shrink_comment: Callable[[Pack, int], str],
) -> None:
    context = read_event(settings)
    handoff = settings.out_dir / HANDOFF_FILENAME
    if settings.event_name == "workflow_run" and handoff.is_file():
        _post_handoff(settings, context, handoff, publisher_factory)
        return
    base, head = settings.base or context.base, settings.head or context.head
    if not base or not head:
        raise ConfigError(
            f"no base and head commits for a {settings.event_name or 'local'} event",
            hint="run on pull_request, or set the `base` and `head` inputs",
        )
    ensure_commits(settings.workspace, [base, head], depth=settings.fetch_depth, env={**os.environ, **env})
    pack, summary, body = build_pack(
        workspace=settings.workspace,
        base=base,
        head=head,
        budget_tokens=settings.budget_tokens,
        task=context.task_text() if settings.task_from_pr else None,
        config_path=settings.config_path,
        output_format=settings.output_format,
        max_comment_bytes=settings.max_comment_bytes,
    )
    manifest = settings.out_dir / MANIFEST_FILENAME
    _write_atomic(manifest, pack_json(pack))
    if context.number is not None:
        handoff_data = {"number": context.number, "head_sha": head, "pack_root": pack.pack_root, "body": body}
        _write_atomic(handoff, json.dumps(handoff_data, sort_keys=True))
    if settings.summary_path is not None:
        append_summary(settings.summary_path, summary, max_bytes=settings.max_summary_bytes)
    log.info("PackRoot %s: %d of %d tokens", pack.pack_root, pack.tokens_used, pack.token_budget)
    _set_outputs(
        settings,
        {"pack-root": pack.pack_root, "tokens-used": str(pack.tokens_used), "manifest-path": str(manifest)},
    )
    url = ""
    try:
        if settings.comment and context.number is not None:
            publisher = publisher_factory(settings, context.number)
            url = _publish(settings, publisher, pack, body, shrink_comment)
        elif settings.comment:
            log.info("no pull request in this %s event: the pack is in the job summary", settings.event_name)
    finally:
        _set_outputs(settings, {"comment-url": url})


def _publish(
    settings: ActionSettings,
    publisher: Publisher,
    pack: Pack,
    body: str,
    shrink_comment: Callable[[Pack, int], str],
) -> str:
    """Upsert the comment; a forbidden write degrades to a warning (the summary has the pack)."""
    try:
        try:
            result = publisher.upsert_comment(body, pack.pack_root)
        except CommentTooLarge:
            log.warning("the comment was too large for GitHub; posting a shorter one")
            smaller = shrink_comment(pack, settings.max_comment_bytes // 2)
            result = publisher.upsert_comment(smaller, pack.pack_root)
    except CommentForbidden as exc:
        log.warning(
            "could not comment on the pull request (%s); the pack is in the job summary and the "
            "manifest artifact. Hint: %s",
            exc.message,
            exc.hint,
        )
        if settings.summary_path is not None:
            note = "\n> knowing-pr could not comment on this pull request (the token may not write here).\n"
            append_summary(settings.summary_path, note, max_bytes=settings.max_summary_bytes)
        return ""
    log.info("comment %s: %s", result.action, result.url)
    return result.url


def _post_handoff(
    settings: ActionSettings,
    context: PullRequestContext,
    handoff: Path,
    publisher_factory: Callable[[ActionSettings, int], Publisher],
) -> None:
    """workflow_run half of the two-workflow pattern: post a comment built by the PR's run."""
    data = _load_handoff(handoff, settings.max_comment_bytes)
    if context.head is not None and data["head_sha"] != context.head:
        raise GitHubError("the handed-over pack was built for another commit than this workflow run's head")
    publisher = publisher_factory(settings, data["number"])
    if publisher.pull_head_sha() != data["head_sha"]:
        raise GitHubError(
            f"pull request #{data['number']} has moved on since the pack was built; not commenting"
        )
    url = ""
    try:
        result = publisher.upsert_comment(data["body"], data["pack_root"])
        url = result.url
        log.info("comment %s: %s", result.action, result.url)
    finally:
        _set_outputs(settings, {"pack-root": data["pack_root"], "comment-url": url})


def _load_handoff(path: Path, max_body_bytes: int) -> dict[str, Any]:
    """Read and validate ``pr-comment.json`` (written by an untrusted run: check every field)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise ConfigError(f"{HANDOFF_FILENAME} is not valid JSON") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{HANDOFF_FILENAME} must be a JSON object")
    number, head, root, body = (data.get(k) for k in ("number", "head_sha", "pack_root", "body"))
    valid = (
        _number(number) is not None
        and isinstance(number, int)
        and isinstance(head, str)
        and _sha(head) is not None
        and isinstance(root, str)
        and _PACK_ROOT.fullmatch(root) is not None
        and isinstance(body, str)
        and len(body.encode("utf-8")) <= max_body_bytes
    )
    if not valid:
        raise ConfigError(f"{HANDOFF_FILENAME} is malformed (number, head_sha, pack_root, body)")
    return data


def _set_outputs(settings: ActionSettings, outputs: Mapping[str, str]) -> None:
    if settings.output_path is not None:
        write_outputs(settings.output_path, outputs)


# -- default wiring ------------------------------------------------------------------------------


def _default_publisher(settings: ActionSettings, pr_number: int) -> Publisher:
    from knowing_pr.github import CommentPublisher

    return CommentPublisher(
        token=settings.token,
        api_url=settings.api_url,
        repository=settings.repository,
        pr_number=pr_number,
        max_body_bytes=settings.max_comment_bytes,
    )


def _shrink_comment(pack: Pack, max_bytes: int) -> str:
    """A smaller comment: the renderer's at ``max_bytes``, else a fixed minimal one."""
    from knowing_pr.render import render_comment

    text = render_comment(pack, max_bytes=max_bytes)
    if len(text.encode("utf-8")) <= max_bytes:
        return text
    return "\n".join(
        [
            COMMENT_MARKER,
            pack_root_marker(pack.pack_root),
            "### knowing-pr",
            "",
            f"PackRoot `{pack.pack_root}` · {len(pack.symbols)} symbols · "
            f"{pack.tokens_used} of {pack.token_budget} tokens",
            "",
            "The pack is too large for a comment: it is in this run's job summary and manifest artifact.",
        ]
    )


def build_pack_with_pipeline(
    *,
    workspace: Path,
    base: str,
    head: str,
    budget_tokens: int,
    task: str | None,
    config_path: Path | None,
    output_format: str,
    max_comment_bytes: int,
) -> tuple[Pack, str, str]:
    """The real ``PackBuilder``: pipeline + renderer (imported here, on first use)."""
    from knowing_pr.pipeline import build_pr_pack, open_workspace
    from knowing_pr.render import render_comment, render_pack

    workspace_state = open_workspace(workspace, config=str(config_path) if config_path else None)
    workspace_state.settings = workspace_state.settings.with_budget(budget_tokens)
    # Tokens are counted on the markdown the comment shows; `format` adds a rendering below it.
    pack = build_pr_pack(workspace_state, base=base, head=head, fmt="markdown", task=task)
    summary = render_pack(pack, "markdown")
    if output_format != "markdown":
        summary += "\n\n" + _fenced(render_pack(pack, output_format), output_format)
    return pack, summary, render_comment(pack, max_bytes=max_comment_bytes)


def _fenced(text: str, info: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"<details><summary>{info}</summary>\n\n{fence}{info}\n{text}\n{fence}\n\n</details>"


def main() -> int:
    """``knowing-pr action``: the real environment and collaborators."""
    return run_action(os.environ)
