"""Comment body + PackRoot → one sticky pull-request comment (``CommentPublisher``).

A comment is ours only when its body **starts** with our marker line and its author is the bot
that writes ours (``is_our_comment``): another workflow's ``github-actions[bot]`` comment that
quotes the marker further down, or anyone else's comment, is never edited or deleted, and
``replay --pr`` reads request lines from ours only. Ours are found across every page of the
pull request's comments; an unchanged body is not rewritten; retried creates are de-duplicated
(the transport, ``client.ApiClient``, retries a POST on 5xx itself).

The bot's login comes from ``GET /user``. An Actions ``GITHUB_TOKEN`` (an installation
token) gets 403 there; the login is then taken to be ``github-actions[bot]``, the author of
every comment such a token writes. A GitHub App token must pass ``bot_login`` explicitly.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from knowing_pr.errors import GitHubAuthError, GitHubError
from knowing_pr.github.client import (
    ApiClient,
    CommentForbidden,
    CommentTooLarge,
    NotFound,
    RetryPolicy,
)
from knowing_pr.render.comment import COMMENT_MARKER  # one definition, shared with the renderer

if TYPE_CHECKING:
    from github.IssueComment import IssueComment

__all__ = [
    "ACTIONS_BOT_LOGIN",
    "COMMENT_MARKER",
    "CommentPublisher",
    "GITHUB_MAX_COMMENT_BYTES",
    "UpsertResult",
    "is_our_comment",
    "mark_body",
    "pack_root_marker",
    "starts_with_marker",
]

ACTIONS_BOT_LOGIN = "github-actions[bot]"
#: GitHub caps a comment at 65,536 characters; as bytes the cap holds under every reading
GITHUB_MAX_COMMENT_BYTES = 65536

_PACK_ROOT = re.compile(r"[0-9a-f]{64}")
_PACK_ROOT_MARKER = re.compile(r"<!-- knowing-pr:pack-root=([0-9a-f]{64}) -->")
_MINIMIZED_QUERY = "query($ids: [ID!]!) { nodes(ids: $ids) { ... on IssueComment { id isMinimized } } }"

log = logging.getLogger("knowing_pr.github")


@dataclass(frozen=True)
class UpsertResult:
    action: Literal["created", "updated", "unchanged"]
    url: str
    comment_id: int
    deleted_duplicates: int = 0
    #: requests repeated after a transient failure, and the seconds slept between them
    retries: int = 0
    waited_s: float = 0.0


@dataclass(frozen=True)
class _Seen:
    """One comment of ours as listed (oldest first by ``created_at``, then id)."""

    id: int
    body: str
    url: str
    node_id: str
    created_s: float
    handle: IssueComment


def starts_with_marker(body: str) -> bool:
    """The body's first line is our marker (GitHub may hand back ``\r\n`` line ends)."""
    first = body.split("\n", 1)[0]
    return first.rstrip("\r") == COMMENT_MARKER


def is_our_comment(body: str | None, author: str | None, bots: Collection[str]) -> bool:
    """A comment is ours when one of ``bots`` wrote it and it starts with our marker line."""
    return author is not None and author in bots and starts_with_marker(body or "")


def pack_root_marker(pack_root: str) -> str:
    return f"<!-- knowing-pr:pack-root={pack_root} -->"


def mark_body(body: str, pack_root: str) -> str:
    """The body with our hidden markers on its first lines (added only where missing)."""
    if not _PACK_ROOT.fullmatch(pack_root):
        raise GitHubError(
            f"not a PackRoot: {pack_root[:80]!r}", hint="a PackRoot is 64 lowercase hex characters"
        )
    found = _PACK_ROOT_MARKER.search(body)
    if found and found.group(1) != pack_root:
        raise GitHubError("the comment body carries another pack's PackRoot marker")
    head = [pack_root_marker(pack_root)] if found is None else []
    if not starts_with_marker(body):  # the first line is what makes the comment ours
        head.insert(0, COMMENT_MARKER)
    return "\n".join([*head, body]) if head else body


class CommentPublisher(ApiClient):
    """Upserts the knowing-pr comment of one pull request."""

    def __init__(
        self,
        *,
        token: str | None,
        api_url: str,
        repository: str,
        pr_number: int,
        retry: RetryPolicy | None = None,
        timeout_s: int = 15,
        bot_login: str | None = None,
        seconds_between_writes: float | None = 1.0,
        max_body_bytes: int = GITHUB_MAX_COMMENT_BYTES,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not token:
            raise GitHubAuthError(
                "no GitHub token was given, so the pull-request comment cannot be written",
                hint="pass the `github-token` input (default: ${{ github.token }}) and give the job "
                "`permissions: pull-requests: write`",
            )
        super().__init__(
            token=token,
            api_url=api_url,
            repository=repository,
            pr_number=pr_number,
            retry=retry,
            timeout_s=timeout_s,
            seconds_between_writes=seconds_between_writes,
            sleep=sleep,
        )
        self._bot_login = bot_login
        self._max_body_bytes = max_body_bytes

    # -- public ---------------------------------------------------------------------------------

    def upsert_comment(self, body: str, pack_root: str) -> UpsertResult:
        """Create, edit or leave alone our one comment so that it carries ``body``."""
        marked = mark_body(body, pack_root)
        size = len(marked.encode("utf-8"))
        if size > self._max_body_bytes:
            raise CommentTooLarge(f"the comment is {size} bytes, over the {self._max_body_bytes}-byte limit")
        login = self.bot_login()
        ours = self._our_comments(login)
        deleted = self._delete_all(ours[1:])
        if ours:
            keep = ours[0]
            if _PACK_ROOT_MARKER.search(keep.body) and keep.body == marked:
                return self._result("unchanged", keep, deleted)
            try:
                self._call("edit the comment", lambda: keep.handle.edit(marked))
                return self._result("updated", keep, deleted)
            except NotFound:
                log.debug("comment %s vanished before the edit; creating a new one", keep.id)
        return self._create(marked, login, deleted)

    def our_comment_body(self) -> str | None:
        """The body of our comment, the one ``upsert_comment`` edits (None: there is none yet)."""
        ours = self._our_comments(self.bot_login())
        return ours[0].body if ours else None

    def bot_login(self) -> str:
        """The login whose comments are ours (``GET /user``, or the Actions bot on a 403)."""
        if self._bot_login is None:
            try:
                self._bot_login = self._call(
                    "read the authenticated user", lambda: self._github().get_user().login
                )
            except CommentForbidden:
                log.debug("GET /user is forbidden for this token; assuming %s", ACTIONS_BOT_LOGIN)
                self._bot_login = ACTIONS_BOT_LOGIN
        return self._bot_login

    def pull_head_sha(self) -> str:
        """The head commit GitHub records for the pull request (to check a handed-over artifact)."""
        sha: str = self._call(
            "read the pull request",
            lambda: self._github().get_repo(self.repository).get_pull(self.pr_number).head.sha,
        )
        return sha

    # -- comments -------------------------------------------------------------------------------

    def _our_comments(self, login: str) -> list[_Seen]:
        def listed() -> list[IssueComment]:
            issue = self._github().get_repo(self.repository).get_issue(self.pr_number)
            return list(issue.get_comments())

        comments = self._call("list the pull request's comments", listed)
        ours = [
            _Seen(c.id, c.body or "", c.html_url, c.node_id, c.created_at.timestamp(), c)
            for c in comments
            if is_our_comment(c.body, c.user.login if c.user is not None else None, (login,))
        ]
        hidden = self._minimized_node_ids([c.node_id for c in ours])
        return sorted((c for c in ours if c.node_id not in hidden), key=lambda c: (c.created_s, c.id))

    def _minimized_node_ids(self, node_ids: list[str]) -> set[str]:
        """REST does not show minimised comments; ask GraphQL, and treat a failure as "none"."""
        if not node_ids:
            return set()
        try:
            _, data = self._call(
                "check for minimised comments",
                lambda: self._github().requester.graphql_query(_MINIMIZED_QUERY, {"ids": node_ids}),
            )
        except GitHubAuthError:
            raise
        except GitHubError as exc:
            log.debug("could not check for minimised comments: %s", exc.message)
            return set()
        nodes = (data.get("data") or {}).get("nodes") or []
        return {n["id"] for n in nodes if isinstance(n, dict) and n.get("isMinimized")}

    def _create(self, marked: str, login: str, deleted: int) -> UpsertResult:
        retries_before = self._retries

        def post() -> IssueComment:
            return self._github().get_repo(self.repository).get_issue(self.pr_number).create_comment(marked)

        created = self._call("create the comment", post)
        if self._retries == retries_before:
            return UpsertResult(
                "created", created.html_url, created.id, deleted, self._retries, self._waited_s
            )
        # A retried POST may have been applied more than once: keep the oldest of ours.
        try:
            ours = self._our_comments(login)
            deleted += self._delete_all(ours[1:])
        except GitHubError as exc:
            log.warning("could not remove duplicate comments after a retried create: %s", exc.message)
            ours = []
        if not ours:
            return UpsertResult(
                "created", created.html_url, created.id, deleted, self._retries, self._waited_s
            )
        keep = ours[0]
        if keep.body != marked:
            self._call("edit the comment", lambda: keep.handle.edit(marked))
        return self._result("created", keep, deleted)

    def _delete_all(self, extra: list[_Seen]) -> int:
        deleted = 0
        for seen in extra:
            with contextlib.suppress(NotFound):  # already gone is as good as deleted
                self._call("delete a duplicate comment", seen.handle.delete)
            deleted += 1
        return deleted

    def _result(
        self, action: Literal["created", "updated", "unchanged"], seen: _Seen, deleted: int
    ) -> UpsertResult:
        return UpsertResult(action, seen.url, seen.id, deleted, self._retries, self._waited_s)
