"""Our previous comment on the pull request + the pack just built → the comment's opening
section, "Since the previous push (abc1234): …", and the request record it was compared with.

The previous push's pack is never stored: its request is the hidden request line of our comment
(the one the upsert edits: marker first line, written by our bot), and the pack is rebuilt from
it as ``knowing-pr replay --verify`` rebuilds it (``pipeline.packdiff.compare_with_record``).
The comment then carries that record in a hidden *since line*: a re-run of the same push (the
comment already names this head) compares with the same previous pack, so the body does not
change, and ``knowing-pr diff A B --pr N`` finds both packs' requests in the comment.

Never a failure: a previous head that is not in the checkout (a force-push, a shallow fetch)
and cannot be fetched, or a pack that cannot be rebuilt here (other settings, another tool
version), gives one honest line instead of the comparison; a comment that cannot be read gives
no section at all. The first push has no section.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from knowing_pr.action.checkout import fetch_missing
from knowing_pr.action.review_settings import open_review_workspace
from knowing_pr.action.settings import ActionSettings
from knowing_pr.errors import GitHubAuthError, KnowingPRError, UsageError
from knowing_pr.model import Pack
from knowing_pr.render.comment import MAX_REQUEST_LINE_BYTES, read_request_lines
from knowing_pr.render.since import read_since_lines, since_section, since_unavailable
from knowing_pr.replay import validate_record

__all__ = ["SINCE_RESERVE", "SINCE_SECTION_BYTES", "Since", "previous_comment_body", "since_previous_push"]

#: bytes of the comment's "Since the previous push" section (its lists are shortened to fit)
SINCE_SECTION_BYTES = 4096
#: bytes the comment body leaves for the section and the hidden since line (and blank lines)
SINCE_RESERVE = SINCE_SECTION_BYTES + 4 + MAX_REQUEST_LINE_BYTES + 3

log = logging.getLogger("knowing_pr.action")


@dataclass(frozen=True)
class Since:
    """The opening section of the comment and the request record of the pack it compares with."""

    section: str
    record: dict[str, Any]


def previous_comment_body(
    publisher_factory: Callable[[ActionSettings, int], Any], settings: ActionSettings, number: int
) -> str | None:
    """The body of our comment on the pull request (the one the upsert edits), None when there is
    none yet or it cannot be read (then the comment has no "since" section: a warning says why)."""
    try:
        body: str | None = publisher_factory(settings, number).our_comment_body()
    except GitHubAuthError as exc:  # the comment's write fails the same way, and says so
        log.debug("could not read the previous comment: %s", exc.message)
        return None
    except KnowingPRError as exc:
        log.warning(
            "could not read the previous comment (%s); no 'since the previous push' section", exc.message
        )
        return None
    return body


def since_previous_push(
    settings: ActionSettings,
    env: Mapping[str, str],
    previous_body: str,
    pack: Pack,
    *,
    number: int,
    settings_commit: str | None,
) -> Since | None:
    """The section for the comment that replaces ``previous_body``; None when that comment names
    no pack to compare with (not one of ours, or the same push's with no earlier one)."""
    record = _compared_record(previous_body, pack)
    if record is None:
        return None
    head = str(record["head"])
    wanted = [sha for sha in (head, record.get("base")) if sha]
    missing = fetch_missing(settings.workspace, wanted, depth=settings.fetch_depth, env=env)
    if head in missing:
        return Since(
            since_unavailable(
                head, "is not in this checkout (force-pushed away, or not fetched), so nothing is compared."
            ),
            record,
        )
    if missing:
        return Since(
            since_unavailable(
                head, "was built on a base that is not in this checkout, so nothing is compared."
            ),
            record,
        )
    try:
        comparison = _compare(settings, env, record, pack, number, settings_commit)
    except KnowingPRError as exc:
        log.warning(
            "could not rebuild the previous push's pack (%s)%s",
            exc.message,
            f" (hint: {exc.hint})" if exc.hint else "",
        )
        return Since(
            since_unavailable(head, "could not be rebuilt here (see the job log), so nothing is compared."),
            record,
        )
    except Exception as exc:  # noqa: BLE001 - a bug here must not cost the comment its pack
        log.debug("internal error while comparing with the previous push", exc_info=True)
        log.warning("could not compare with the previous push (internal error: %s)", type(exc).__name__)
        return Since(
            since_unavailable(head, "could not be rebuilt here (see the job log), so nothing is compared."),
            record,
        )
    log.info("compared with the previous push's pack %s (at %s)", str(record["pack_root"])[:12], head[:12])
    return Since(since_section(comparison, head, SINCE_SECTION_BYTES), record)


def _compared_record(body: str, pack: Pack) -> dict[str, Any] | None:
    """The request record to compare with: the comment's own request, or, when the comment is
    this same push's (a re-run), the record it was itself compared with."""
    own = _valid(read_request_lines(body))
    if own is None:
        return None
    if own["head"] != pack.commit:
        return own
    return _valid(read_since_lines(body))


def _valid(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last record that passes ``validate_record`` (a comment is anyone's text)."""
    for data in reversed(records):
        try:
            return validate_record(data)
        except UsageError:
            continue
    return None


def _compare(
    settings: ActionSettings,
    env: Mapping[str, str],
    record: Mapping[str, Any],
    pack: Pack,
    number: int,
    settings_commit: str | None,
) -> Any:
    from knowing_pr.github import PullRequestReader
    from knowing_pr.github.pulls import PullTarget
    from knowing_pr.pipeline.packdiff import compare_with_record

    # the workspace the review packs in: the same settings file, read at the same commit, so the
    # previous pack's parameters are matched with the ones in force
    ws = open_review_workspace(
        settings.workspace, settings.config_path, settings.budget_tokens, settings_commit
    )
    target = PullTarget(settings.api_url, settings.repository, number, settings.token or None)
    return compare_with_record(ws, record, PullRequestReader(target), pack)
