"""``ActionSettings`` + the event + collaborators → a pack, the files, the comment; an exit status.

``run_action`` holds the order of effects and the fallback ladder described in
``knowing_pr.action``; ``main()`` and the ``build_pack_with_pipeline`` / default publisher
wiring are the real collaborators.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, TextIO

from knowing_pr.action.checkout import ensure_commits, ensure_merge_base
from knowing_pr.action.outputs import (
    HANDOFF_FILENAME,
    MANIFEST_FILENAME,
    PACK_JSON_FILENAME,
    _install_log_handler,
    _remove_log_handler,
    _write_atomic,
    append_summary,
    pack_json,
    replay_manifest,
    write_outputs,
)
from knowing_pr.action.review_settings import (
    committed_config_path,
    open_review_workspace,
    settings_change_note,
    with_settings_note,
)
from knowing_pr.action.settings import (
    ActionSettings,
    PullRequestContext,
    _flag,
    _number,
    _sha,
    read_event,
)
from knowing_pr.action.since import SINCE_RESERVE, Since, previous_comment_body, since_previous_push
from knowing_pr.errors import ConfigError, GitHubError, KnowingPRError
from knowing_pr.github import (
    COMMENT_MARKER,
    CommentForbidden,
    CommentTooLarge,
    UpsertResult,
    pack_root_marker,
)
from knowing_pr.model import Pack
from knowing_pr.render.comment import MAX_REQUEST_LINE_BYTES, with_request_line
from knowing_pr.render.reviewers import reviewers_output
from knowing_pr.render.since import with_since
from knowing_pr.replay import comment_record, request_record

__all__ = ["PackBuilder", "Publisher", "build_pack_with_pipeline", "main", "run_action"]

_PACK_ROOT = re.compile(r"[0-9a-f]{64}")
#: bytes the comment body leaves for the hidden request line (and the blank line before it)
REQUEST_LINE_RESERVE = MAX_REQUEST_LINE_BYTES + 3
#: bytes the comment body leaves for the line saying the PR changes the settings file
SETTINGS_NOTE_RESERVE = 1024

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
        settings_commit: str | None = None,
        author: str | None = None,
    ) -> tuple[Pack, str, str]: ...


class Publisher(Protocol):
    def upsert_comment(self, body: str, pack_root: str) -> UpsertResult: ...

    def our_comment_body(self) -> str | None: ...

    def pull_head_sha(self) -> str: ...


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
    git_env = {**os.environ, **env}
    ensure_commits(settings.workspace, [base, head], depth=settings.fetch_depth, env=git_env)
    ensure_merge_base(
        settings.workspace,
        base,
        head,
        deepen=settings.fetch_depth,
        rounds=settings.deepen_rounds,
        env=git_env,
    )
    task = context.task_text() if settings.task_from_pr else None
    committed = committed_config_path(settings, base, head)  # the base's settings, never the PR's
    settings_commit = base if committed else None
    note = settings_change_note(settings.workspace, committed, base, head) if committed else None
    previous = _previous_body(settings, context, publisher_factory)
    pack, summary, body = build_pack(
        workspace=settings.workspace,
        base=base,
        head=head,
        budget_tokens=settings.budget_tokens,
        task=task,
        config_path=settings.config_path,
        output_format=settings.output_format,
        max_comment_bytes=settings.max_comment_bytes
        - REQUEST_LINE_RESERVE
        - (SETTINGS_NOTE_RESERVE if note is not None else 0)
        - (SINCE_RESERVE if previous is not None else 0),
        settings_commit=settings_commit,
        **({"author": context.author} if context.author else {}),
    )
    if note is not None:
        log.warning("%s", note)
        body, summary = with_settings_note(body, note), with_settings_note(summary, note)
    manifest = settings.out_dir / MANIFEST_FILENAME
    recorded = replay_manifest(pack, settings.budget_tokens, task)
    _write_atomic(settings.out_dir / PACK_JSON_FILENAME, pack_json(pack))
    _write_atomic(manifest, json.dumps(recorded, indent=2, sort_keys=True) + "\n")
    record = request_record(recorded, task_from="pr", config=settings.config_in_repository)
    line_record = comment_record(record)
    since = None
    if previous is not None and context.number is not None:
        since = since_previous_push(
            settings, git_env, previous, pack, number=context.number, settings_commit=settings_commit
        )
    body = _finished(body, since, line_record)
    if settings.git_notes:
        _write_note(settings, str(record["head"]), record, git_env)
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
    _set_outputs(settings, {"reviewers": reviewers_output(pack.summary.reviewers if pack.summary else [])})
    url = ""
    try:
        if settings.comment and context.number is not None:
            publisher = publisher_factory(settings, context.number)
            url = _publish(settings, publisher, pack, body, shrink_comment, line_record, since)
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
    line_record: Mapping[str, Any],
    since: Since | None = None,
) -> str:
    """Upsert the comment; a forbidden write degrades to a warning (the summary has the pack)."""
    try:
        try:
            result = publisher.upsert_comment(body, pack.pack_root)
        except CommentTooLarge:
            log.warning("the comment was too large for GitHub; posting a shorter one")
            reserve = REQUEST_LINE_RESERVE + (SINCE_RESERVE if since is not None else 0)
            smaller = shrink_comment(pack, settings.max_comment_bytes // 2 - reserve)
            result = publisher.upsert_comment(_finished(smaller, since, line_record), pack.pack_root)
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


def _previous_body(
    settings: ActionSettings,
    context: PullRequestContext,
    publisher_factory: Callable[[ActionSettings, int], Publisher],
) -> str | None:
    """Our comment as the previous push left it (None: none, or no comment is written)."""
    if not (settings.since_previous_push and settings.comment and context.number is not None):
        return None
    return previous_comment_body(publisher_factory, settings, context.number)


def _finished(body: str, since: Since | None, line_record: Mapping[str, Any]) -> str:
    """The body opening with the "since the previous push" section, the hidden lines at its end."""
    if since is not None:
        body = with_since(body, since.section, since.record)
    return with_request_line(body, line_record)


def _write_note(
    settings: ActionSettings, head: str, record: Mapping[str, Any], env: Mapping[str, str]
) -> None:
    """The request record (with every parameter) as a git note on the head commit, pushed; a
    refusal is a warning (the comment's hidden line still records the request)."""
    from knowing_pr.action.notes import NoteError, publish_note

    try:
        publish_note(
            settings.workspace, head, record, env=env, token=settings.token, server_url=settings.server_url
        )
    except NoteError as exc:
        log.warning(
            "could not write the git note (%s). Hint: the job needs `permissions: contents: write`",
            str(exc).replace(settings.token, "***") if settings.token else exc,
        )


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
    settings_commit: str | None = None,
    author: str | None = None,
) -> tuple[Pack, str, str]:
    """The real ``PackBuilder``: pipeline + renderer (imported here, on first use). With
    ``settings_commit`` the settings file (``config_path`` inside the workspace, else
    ``.knowing-pr.yml``) is read as committed there, never from the work tree."""
    from knowing_pr.config import removed_setting_warnings
    from knowing_pr.pipeline import PrRequest, build_pr_pack
    from knowing_pr.render import render_comment, render_pack

    workspace_state = open_review_workspace(workspace, config_path, budget_tokens, settings_commit)
    for warning in removed_setting_warnings(workspace_state.settings):
        log.warning("knowing-pr: %s", warning)
    workspace_state.show_progress()  # the Action's log shows the long steps of a first index
    # Tokens are counted on the markdown the comment shows; `format` adds a rendering below it.
    try:
        request = PrRequest(base=base, head=head, task=task, fmt="markdown", author=author)
        pack = build_pr_pack(workspace_state, request)
    finally:
        workspace_state.end_progress()
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
