"""One REST request + the retry policy → its answer, or one of our errors (the PyGithub transport).

``ApiClient`` owns the PyGithub client (imported on first use, so importing this module is
cheap), runs every request under ``RetryPolicy`` and maps failures to ``knowing_pr.errors``:
5xx, 429, timeouts and 403 rate limits are retried with exponential backoff, honouring
``Retry-After`` / ``X-RateLimit-Reset`` but never beyond ``RetryPolicy.max_total_wait_s`` in
total; 401, 404, 422 and other 403s are not. The token never appears in a message.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from knowing_pr.errors import GitHubAuthError, GitHubError

if TYPE_CHECKING:
    from github import Github

__all__ = ["ApiClient", "CommentForbidden", "CommentTooLarge", "NotFound", "RetryPolicy"]

log = logging.getLogger("knowing_pr.github")
T = TypeVar("T")


class CommentForbidden(GitHubError):
    """The token may not comment here (fork PR, read-only token); fall back to the summary."""


class CommentTooLarge(GitHubError):
    """The body is over GitHub's limit; the caller shrinks it and tries once more."""


class NotFound(GitHubError):
    """404: the pull request (or a comment between list and edit) is gone, or is not visible."""


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    max_total_wait_s: float = 60.0
    base_backoff_s: float = 1.0


@dataclass(frozen=True)
class _Failure:
    error: GitHubError
    retryable: bool
    wait_hint_s: float = 0.0


class ApiClient:
    """The transport one pull request's requests share: the client, retries, error mapping.

    Subclasses say what a rejected token (401) or a refusal (403) means for what they do."""

    UNAUTHORIZED_HINT = (
        "check the `github-token` input or the GITHUB_TOKEN secret: it may be expired, "
        "revoked, or meant for another GitHub host"
    )
    FORBIDDEN_HINT = (
        "the token may not write here: fork pull requests and read-only tokens get "
        "'Resource not accessible by integration'; grant `permissions: pull-requests: write`, "
        "or split the workflow in two: the pull request's workflow makes the pack with no "
        "token and uploads it as an artifact, and a `workflow_run` workflow in the base "
        "repository posts it"
    )

    def __init__(
        self,
        *,
        token: str | None,
        api_url: str,
        repository: str,
        pr_number: int,
        retry: RetryPolicy | None = None,
        timeout_s: int = 15,
        seconds_between_writes: float | None = 1.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._token = token or None
        self.api_url = api_url
        self.repository = repository
        self.pr_number = pr_number
        self.retry = retry or RetryPolicy()
        self._timeout_s = max(1, timeout_s)
        self._seconds_between_writes = seconds_between_writes
        self._sleep = sleep
        self._client: Github | None = None
        self._retries = 0
        self._waited_s = 0.0

    def __repr__(self) -> str:  # never show the token
        return f"{type(self).__name__}({self.repository}#{self.pr_number} via {self.api_url})"

    # -- transport ------------------------------------------------------------------------------

    def _github(self) -> Github:
        if self._client is None:
            from github import Auth, Github

            self._client = Github(
                auth=Auth.Token(self._token) if self._token else None,
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
                GitHubAuthError("the GitHub token was rejected (401)", hint=self.UNAUTHORIZED_HINT),
                False,
            )
        if status == 429 or (status == 403 and _is_rate_limited(message, headers)):
            return _Failure(
                GitHubError(said, hint="rate limited by GitHub"), True, _rate_limit_wait_s(headers)
            )
        if status == 403:
            return _Failure(
                CommentForbidden(said, hint=self.FORBIDDEN_HINT),
                False,
            )
        if status == 404:
            return _Failure(
                NotFound(
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
