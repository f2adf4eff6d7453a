"""One exception tree for the whole tool; only ``cli/`` prints these and picks exit codes.

::

    KnowingPRError                 message + optional hint (exit 1: a runtime failure)
    ├── UsageError                 bad flags or arguments (exit 2)
    │   └── InvalidPackRoot        not exactly 64 lowercase hex characters
    ├── ConfigError                `.knowing-pr.yml` is invalid (exit 2)
    ├── RepoError                  not a repository, unknown revision, history not fetched
    │                              (shallow or partial clone), no commit to start from (exit 2)
    ├── StoreError                 SQLite store unusable (locked, full, corrupt)
    │   └── StoreCorrupt           integrity check failed; the caller moves it aside
    ├── GitHubError                the GitHub API refused or failed
    │   └── GitHubAuthError        missing or invalid token, missing permissions
    └── ReplayMismatch             a recomputed pack differs from the recorded one
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "GitHubAuthError",
    "GitHubError",
    "InvalidPackRoot",
    "KnowingPRError",
    "ReplayMismatch",
    "RepoError",
    "StoreCorrupt",
    "StoreError",
    "SymbolNotFound",
    "UsageError",
]


class KnowingPRError(Exception):
    """Base of every error the tool raises on purpose."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(KnowingPRError):
    exit_code = 2


class InvalidPackRoot(UsageError):
    pass


class SymbolNotFound(UsageError):
    """``why`` / ``explain_symbol`` named a symbol the index does not hold (exit code 2)."""


class ConfigError(KnowingPRError):
    exit_code = 2


class RepoError(KnowingPRError):
    """The repository or a revision the user named cannot be used as given: an input error."""

    exit_code = 2


class StoreError(KnowingPRError):
    pass


class StoreCorrupt(StoreError):
    pass


class GitHubError(KnowingPRError):
    pass


class GitHubAuthError(GitHubError):
    pass


class ReplayMismatch(KnowingPRError):
    def __init__(self, message: str, added: list[str], removed: list[str]) -> None:
        super().__init__(message)
        self.added = added
        self.removed = removed
