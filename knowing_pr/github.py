"""Comment body + PackRoot → one sticky pull-request comment, through PyGithub (its only home).

The comment is found again by a hidden marker **and** its author, across every page of the
pull request's comments; an unchanged body is not rewritten; retried creates are
de-duplicated. PyGithub is imported inside the methods, so importing this module is cheap.

Errors (all from ``knowing_pr.errors``)::

    GitHubError                      the API refused or failed (404 PR, retries exhausted, …)
    ├── GitHubAuthError              missing token, or the token was rejected (401)
    ├── CommentForbidden             403 that is not a rate limit: fork PR, read-only token
    └── CommentTooLarge              422 "body is too long", or over the byte cap locally

Retries are ours, not urllib3's (PyGithub's default retry repeats a POST on 5xx and
duplicates comments): 5xx, 429, timeouts and 403 rate limits are retried with exponential
backoff, honouring ``Retry-After`` / ``X-RateLimit-Reset`` but never beyond
``RetryPolicy.max_total_wait_s`` in total; 401, 404, 422 and other 403s are not.

The bot's login comes from ``GET /user``. An Actions ``GITHUB_TOKEN`` (an installation
token) gets 403 there; the login is then taken to be ``github-actions[bot]``, the author of
every comment such a token writes. A GitHub App token must pass ``bot_login`` explicitly.

One module for the one client of the REST API (a little over the style's ~400 lines): its
retry, redaction and error classification apply to every call it makes.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from knowing_pr.errors import GitHubAuthError, GitHubError
from knowing_pr.render.comment import COMMENT_MARKER  # one definition, shared with the renderer

if TYPE_CHECKING:
    from github import Github
    from github.IssueComment import IssueComment

__all__ = [
    "ACTIONS_BOT_LOGIN",
    "COMMENT_MARKER",
    "CommentForbidden",
    "CommentPublisher",
    "CommentTooLarge",
    "GITHUB_MAX_COMMENT_BYTES",
    "RetryPolicy",
    "UpsertResult",
    "mark_body",
    "pack_root_marker",
]

ACTIONS_BOT_LOGIN = "github-actions[bot]"
#: GitHub caps a comment at 65,536 characters; as bytes the cap holds under every reading
GITHUB_MAX_COMMENT_BYTES = 65536

_PACK_ROOT = re.compile(r"[0-9a-f]{64}")
_PACK_ROOT_MARKER = re.compile(r"<!-- knowing-pr:pack-root=([0-9a-f]{64}) -->")
_MINIMIZED_QUERY = "query($ids: [ID!]!) { nodes(ids: $ids) { ... on IssueComment { id isMinimized } } }"

log = logging.getLogger(__name__)
T = TypeVar("T")


class CommentForbidden(GitHubError):
    """The token may not comment here (fork PR, read-only token); fall back to the summary."""


class CommentTooLarge(GitHubError):
    """The body is over GitHub's limit; the caller shrinks it and tries once more."""


class _NotFound(GitHubError):
    """404: the pull request (or a comment between list and edit) is gone."""


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    max_total_wait_s: float = 60.0
    base_backoff_s: float = 1.0


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


@dataclass(frozen=True)
class _Failure:
    error: GitHubError
    retryable: bool
    wait_hint_s: float = 0.0


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
    head = [m for m in (COMMENT_MARKER, pack_root_marker(pack_root)) if m not in body]
    return "\n".join([*head, body]) if head else body


class CommentPublisher:
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
        self._token = token
        self.api_url = api_url
        self.repository = repository
        self.pr_number = pr_number
        self.retry = retry or RetryPolicy()
        self._timeout_s = max(1, timeout_s)
        self._bot_login = bot_login
        self._seconds_between_writes = seconds_between_writes
        self._max_body_bytes = max_body_bytes
        self._sleep = sleep
        self._client: Github | None = None
        self._retries = 0
        self._waited_s = 0.0

    def __repr__(self) -> str:  # never show the token
        return f"CommentPublisher({self.repository}#{self.pr_number} via {self.api_url})"

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
            except _NotFound:
                log.debug("comment %s vanished before the edit; creating a new one", keep.id)
        return self._create(marked, login, deleted)

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
            if COMMENT_MARKER in (c.body or "") and c.user is not None and c.user.login == login
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
            with contextlib.suppress(_NotFound):  # already gone is as good as deleted
                self._call("delete a duplicate comment", seen.handle.delete)
            deleted += 1
        return deleted

    def _result(
        self, action: Literal["created", "updated", "unchanged"], seen: _Seen, deleted: int
    ) -> UpsertResult:
        return UpsertResult(action, seen.url, seen.id, deleted, self._retries, self._waited_s)

    # -- transport ------------------------------------------------------------------------------

    def _github(self) -> Github:
        if self._client is None:
            from github import Auth, Github

            self._client = Github(
                auth=Auth.Token(self._token),
                base_url=self.api_url.rstrip("/"),
                timeout=self._timeout_s,
                retry=None,
                per_page=100,
                user_agent="knowing-pr",
                seconds_between_requests=None,
                seconds_between_writes=self._seconds_between_writes,
                lazy=True,
            )
        return self._client

    def _call(self, what: str, request: Callable[[], T]) -> T:
        """Run one API request under the retry policy; map failures to our errors."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return request()
            except Exception as exc:  # noqa: BLE001 - classified below, re-raised if unknown
                failure = self._classify(exc, what)
                if failure is None:
                    raise
            if not failure.retryable:
                raise failure.error
            if attempt >= self.retry.max_attempts:
                failure.error.hint = f"gave up after {attempt} attempts"
                raise failure.error
            wait_s = max(self.retry.base_backoff_s * 2 ** (attempt - 1), failure.wait_hint_s)
            if self._waited_s + wait_s > self.retry.max_total_wait_s:
                limit_s = self.retry.max_total_wait_s
                failure.error.hint = (
                    f"gave up: waiting {wait_s:.0f} s more would pass the {limit_s:.0f} s limit"
                )
                raise failure.error
            log.debug("%s failed (%s); retrying in %.2f s", what, failure.error.message, wait_s)
            self._sleep(wait_s)
            self._waited_s += wait_s
            self._retries += 1

    def _classify(self, exc: Exception, what: str) -> _Failure | None:
        import requests
        from github.GithubException import GithubException

        if isinstance(exc, requests.RequestException):
            kind = "timed out" if isinstance(exc, requests.Timeout) else "could not be reached"
            return _Failure(
                GitHubError(self._redact(f"{what}: the GitHub API {kind} ({self.api_url})")), True
            )
        if not isinstance(exc, GithubException):
            return None
        return self._classify_status(exc.status, _message(exc.data), _lower_keys(exc.headers), what)

    def _classify_status(self, status: int, message: str, headers: Mapping[str, str], what: str) -> _Failure:
        said = self._redact(f"{what}: GitHub answered {status}" + (f" ({message})" if message else ""))
        if status == 401:
            return _Failure(
                GitHubAuthError(
                    "the GitHub token was rejected (401)",
                    hint="check the `github-token` input or the GITHUB_TOKEN secret: it may be expired, "
                    "revoked, or meant for another GitHub host",
                ),
                False,
            )
        if status == 429 or (status == 403 and _is_rate_limited(message, headers)):
            return _Failure(
                GitHubError(said, hint="rate limited by GitHub"), True, _rate_limit_wait_s(headers)
            )
        if status == 403:
            return _Failure(
                CommentForbidden(
                    said,
                    hint="the token may not write here: fork pull requests and read-only tokens get "
                    "'Resource not accessible by integration'; grant `permissions: pull-requests: write`, "
                    "or use the two-workflow pattern in docs/action.md",
                ),
                False,
            )
        if status == 404:
            return _Failure(
                _NotFound(
                    f"pull request #{self.pr_number} not found in {self.repository}",
                    hint="the pull request may have been deleted, or the token cannot see this repository",
                ),
                False,
            )
        if status == 422:
            error: GitHubError = CommentTooLarge(said) if "too long" in message.lower() else GitHubError(said)
            return _Failure(error, False)
        return _Failure(GitHubError(said), status >= 500)

    def _redact(self, text: str) -> str:
        return text.replace(self._token, "***") if self._token else text


def _message(data: Any) -> str:
    """GitHub's message plus any per-field error messages, on one line."""
    if not isinstance(data, dict):
        return ""
    parts = [str(data.get("message") or "")]
    for item in data.get("errors") or []:
        if isinstance(item, dict) and item.get("message"):
            parts.append(str(item["message"]))
        elif isinstance(item, str):
            parts.append(item)
    return "; ".join(p for p in parts if p).replace("\n", " ")[:300]


def _lower_keys(headers: Mapping[str, Any] | None) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in (headers or {}).items()}


def _is_rate_limited(message: str, headers: Mapping[str, str]) -> bool:
    lowered = message.lower()
    return "rate limit" in lowered or "retry-after" in headers or headers.get("x-ratelimit-remaining") == "0"


def _rate_limit_wait_s(headers: Mapping[str, str]) -> float:
    """Seconds GitHub asked us to wait: ``Retry-After``, else until ``X-RateLimit-Reset``."""
    retry_after = headers.get("retry-after", "")
    if retry_after.isdigit():
        return float(retry_after)
    reset = headers.get("x-ratelimit-reset", "")
    if reset.isdigit() and headers.get("x-ratelimit-remaining") == "0":
        return max(0.0, float(reset) - time.time())
    return 0.0
