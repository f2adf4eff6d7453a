"""A pack, its summary and step outputs → the manifest, ``GITHUB_STEP_SUMMARY``, ``GITHUB_OUTPUT``;
log records → workflow commands.

Files are written so a reader never sees half of one (manifest, handoff) or so that a value
cannot end its own heredoc early (outputs); the summary is cut to GitHub's size limit without
leaving a fence or a ``<details>`` open.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from knowing_pr.model import Pack
from knowing_pr.writing import check_not_a_link, open_append, write_atomic

__all__ = [
    "HANDOFF_FILENAME",
    "MANIFEST_FILENAME",
    "PACK_JSON_FILENAME",
    "WorkflowCommandFormatter",
    "append_summary",
    "pack_json",
    "replay_manifest",
    "replay_manifest_json",
    "write_outputs",
]

HANDOFF_FILENAME = "pr-comment.json"
MANIFEST_FILENAME = "manifest.json"  # the replay manifest: `knowing-pr replay ROOT --manifest FILE`
PACK_JSON_FILENAME = "pack.json"  # the same pack as the JSON contract (DESIGN.md), for other tools
_LOGGERS = ("knowing_pr.action", "knowing_pr.github")


def _write_atomic(path: Path, text: str) -> None:
    """A whole file, never through a symbolic link (``knowing_pr/writing.py``), nor into a
    directory that is one: without ``RUNNER_TEMP`` the directory is ``.knowing-pr`` in the
    checked-out pull request, which could commit it as a link."""
    check_not_a_link(path.parent)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, [text])


def _append(path: Path, text: str) -> None:
    """Append to a runner's file (summary, outputs), never through a symbolic link."""
    with os.fdopen(open_append(path), "a", encoding="utf-8") as handle:
        handle.write(text)


def pack_json(pack: Pack) -> str:
    """The pack as the JSON contract (the renderer's JSON)."""
    from knowing_pr.render import render_pack

    return render_pack(pack, "json")


def replay_manifest(pack: Pack, budget_tokens: int, task: str | None) -> dict[str, Any]:
    """The whole pack plus the request that built it (markdown, as the comment shows it; the task
    is the PR's title and body): the manifest ``knowing-pr replay PACKROOT --manifest FILE
    [--verify]`` reads in any clone, and the source of the comment's and the note's record."""
    from knowing_pr.replay import manifest_of, pr_request

    base = pack.inputs.get("base")
    request = pr_request(
        base=str(base) if base else None,
        head=str(pack.inputs.get("head") or pack.commit),
        files=[],
        budget=budget_tokens,
        fmt="markdown",
        task=task,
        author=str(pack.inputs["author"]) if pack.inputs.get("author") else None,
    )
    return manifest_of(pack, request)


def replay_manifest_json(pack: Pack, budget_tokens: int, task: str | None) -> str:
    """``replay_manifest`` as the JSON file the artifact holds."""
    import json

    return json.dumps(replay_manifest(pack, budget_tokens, task), indent=2, sort_keys=True) + "\n"


def append_summary(path: Path, markdown: str, *, max_bytes: int) -> int:
    """Append to the job summary, cut at a line boundary to stay within ``max_bytes``."""
    existing = path.stat().st_size if path.exists() else 0
    text = _truncate_markdown(markdown, max(0, max_bytes - existing))
    _append(path, text if text.endswith("\n") else text + "\n")
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
    _append(path, "".join(lines))


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
