"""A PackRoot → where its request is recorded: the clone's store (a whole manifest), git notes
under ``refs/notes/knowing-pr`` (a request record with every parameter), or a pull request's
comments through the GitHub API (the hidden request line, or the since line naming the pack the
comment was compared with: the parameters' digest only).

``find_pack`` looks in that order and stops at the first place that has it; when none has it,
the ``UsageError`` names every place it looked and what it found there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from knowing_pr.errors import GitHubError, UsageError
from knowing_pr.pipeline.workspace import Workspace
from knowing_pr.replay import NOTES_REF, records_in_note, validate_record
from knowing_pr.store.opening import open_store

__all__ = ["FoundPack", "find_pack", "pull_request_task"]

FETCH_NOTES = f"git fetch origin {NOTES_REF}:{NOTES_REF}"


@dataclass
class FoundPack:
    """Where a pack was found: a whole manifest (store) or a request record (note, comment)."""

    source: str
    manifest: dict[str, Any] | None = None
    record: dict[str, Any] | None = None
    #: the pull request the record came from (its title and body may be the task text)
    pull: Any = None
    looked: list[str] = field(default_factory=list)


def find_pack(
    ws: Workspace,
    pack_root: str,
    *,
    pr: str | None = None,
    env: Mapping[str, str] | None = None,
    manifest_option: bool = True,
) -> FoundPack:
    """The store, then git notes, then (given ``pr``) the pull request's comments; the error's hint
    names ``--manifest FILE`` when the command has that option (``manifest_option``)."""
    looked: list[str] = []
    manifest = _in_store(ws, pack_root, looked)
    if manifest is not None:
        return FoundPack("the store", manifest=manifest, looked=looked)
    record = _in_notes(ws, pack_root, looked)
    if record is not None:
        return FoundPack(f"the git note on {record['head'][:12]} ({NOTES_REF})", record=record, looked=looked)
    if pr:
        found = _in_pull_request(ws, pack_root, pr, env or {}, looked)
        if found is not None:
            return found
    else:
        looked.append("pull request comments: not searched (pass --pr N or --pr <pull request URL>)")
    raise UsageError(
        f"no record of pack {pack_root[:12]}… was found: " + "; ".join(looked),
        hint=f"fetch the notes ({FETCH_NOTES}), pass --pr with the pull request that carries the "
        "pack's comment"
        + (", or --manifest FILE with the manifest the Action uploaded" if manifest_option else ""),
    )


def _in_store(ws: Workspace, pack_root: str, looked: list[str]) -> dict[str, Any] | None:
    if not ws.db_path.exists():
        looked.append(f"the store ({ws.db_path}): there is none in this clone")
        return None
    store, _ = open_store(ws.db_path)
    try:
        found = store.load_pack(pack_root)
    finally:
        store.close()
    if found is None:
        looked.append(f"the store ({ws.db_path}): no pack with this PackRoot")
    return found


def _in_notes(ws: Workspace, pack_root: str, looked: list[str]) -> dict[str, Any] | None:
    notes = ws.repo.notes(NOTES_REF)
    if notes is None:
        looked.append(f"git notes ({NOTES_REF}): not in this clone; fetch them with `{FETCH_NOTES}`")
        return None
    invalid = 0
    for text in notes.values():
        for data in records_in_note(text):
            if data.get("pack_root") != pack_root:
                continue
            try:
                return validate_record(data)
            except UsageError:
                invalid += 1
    said = f"{len(notes)} note(s), none for this PackRoot"
    looked.append(f"git notes ({NOTES_REF}): {said}" + (f" ({invalid} invalid record(s))" if invalid else ""))
    return None


def _in_pull_request(
    ws: Workspace, pack_root: str, pr: str, env: Mapping[str, str], looked: list[str]
) -> FoundPack | None:
    from knowing_pr.github import COMMENT_MARKER, PullRequestReader, is_our_comment, pull_target
    from knowing_pr.github.pulls import comment_bots
    from knowing_pr.render.comment import read_request_lines
    from knowing_pr.render.since import read_since_lines

    target = pull_target(pr, env, ws.repo.remote_url("origin"))
    if target.anonymous_because is not None:  # said whether the pack is found there or not
        ws.warnings.append(target.anonymous_because)
        looked.append(target.anonymous_because)
    reader = PullRequestReader(target)
    where = f"pull request {target} ({target.api_url})"
    try:
        comments = reader.comments()
    except GitHubError as exc:
        looked.append(f"{where}: {exc.message}" + (f" ({exc.hint})" if exc.hint else ""))
        return None
    bots = comment_bots(env)
    bodies = [body for author, body in comments if is_our_comment(body, author, bots)]
    invalid = 0
    for body in reversed(bodies):  # the newest of ours first
        # a comment's own request, then the one it compared with (the previous push's pack)
        for data in read_request_lines(body) + read_since_lines(body):
            if data.get("pack_root") != pack_root:
                continue
            try:
                record = validate_record(data)
            except UsageError:
                invalid += 1
                continue
            return FoundPack(f"a comment on {where}", record=record, pull=reader, looked=looked)
    said = (
        f"{len(comments)} comment(s), {len(bodies)} of them the Action's (by {', '.join(bots)}, starting "
        f"with {COMMENT_MARKER}); none of those carries this PackRoot's request"
    )
    looked.append(f"{where}: {said}" + (f" ({invalid} invalid)" if invalid else ""))
    return None


def pull_request_task(found: FoundPack) -> str | None:
    """The task text a record names by its digest, rebuilt from where it came from: the pull
    request's title and body as they are now (None when that is not available)."""
    if found.pull is None or (found.record or {}).get("task_from") != "pr":
        return None
    try:
        title, body = found.pull.title_and_body()
    except GitHubError:
        return None
    return "\n\n".join(part for part in (title, body) if part) or None
