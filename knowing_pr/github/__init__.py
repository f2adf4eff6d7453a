"""The GitHub REST boundary, through PyGithub (its only home): one sticky comment written, a pull
request's comments and text read.

- ``client``: ``ApiClient``, the transport every request goes through: the PyGithub client
  (imported on first use, so importing this package is cheap), the retry policy and the error
  mapping;
- ``comments``: ``CommentPublisher``, comment body + PackRoot → one sticky pull-request comment;
- ``pulls``: ``PullRequestReader`` (a pull request's comments, title and body) and
  ``pull_target`` (``replay --pr`` → which pull request on which API).

Errors (all from ``knowing_pr.errors``)::

    GitHubError                      the API refused or failed (404 PR, retries exhausted, …)
    ├── GitHubAuthError              missing token, or the token was rejected (401)
    ├── CommentForbidden             403 that is not a rate limit: fork PR, read-only token
    ├── CommentTooLarge              422 "body is too long", or over the byte cap locally
    └── NotFound                     404: no such pull request, or the token cannot see it

Retries are ours, not urllib3's (PyGithub's default retry repeats a POST on 5xx and
duplicates comments): 5xx, 429, timeouts and 403 rate limits are retried with exponential
backoff, honouring ``Retry-After`` / ``X-RateLimit-Reset`` but never beyond
``RetryPolicy.max_total_wait_s`` in total; 401, 404, 422 and other 403s are not.
"""

from __future__ import annotations

from knowing_pr.github.client import ApiClient, CommentForbidden, CommentTooLarge, NotFound, RetryPolicy
from knowing_pr.github.comments import (
    ACTIONS_BOT_LOGIN,
    COMMENT_MARKER,
    GITHUB_MAX_COMMENT_BYTES,
    CommentPublisher,
    UpsertResult,
    is_our_comment,
    mark_body,
    pack_root_marker,
)
from knowing_pr.github.pulls import (
    PullRequestReader,
    PullTarget,
    check_pull_reference,
    pull_target,
    repository_of_remote,
)

__all__ = [
    "ACTIONS_BOT_LOGIN",
    "COMMENT_MARKER",
    "GITHUB_MAX_COMMENT_BYTES",
    "ApiClient",
    "CommentForbidden",
    "CommentPublisher",
    "CommentTooLarge",
    "NotFound",
    "PullRequestReader",
    "PullTarget",
    "RetryPolicy",
    "UpsertResult",
    "is_our_comment",
    "mark_body",
    "pack_root_marker",
    "check_pull_reference",
    "pull_target",
    "repository_of_remote",
]
