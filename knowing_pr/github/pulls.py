"""A pull request (repository + number) → its comments' bodies and its title and body, read
through the REST API (``PullRequestReader``); a ``--pr`` value + the environment + the origin
remote → which pull request on which API (``pull_target``).

Reading needs no token on a public repository. ``GITHUB_TOKEN`` or ``GH_TOKEN`` is sent only to
the API it belongs to: ``GITHUB_API_URL`` when set (GitHub Enterprise Server sets its own), else
https://api.github.com. A pull request on any other host is read anonymously, and
``PullTarget.anonymous_because`` says why (a URL given to ``replay --pr`` or to the MCP
``replay_pack`` tool may come from anyone, and must not carry the token away).

Which API a pull request is read from: a number is in ``GITHUB_REPOSITORY`` (or the ``origin``
remote's repository) on ``GITHUB_API_URL``, else on the remote's host; a URL is on its own host,
through ``GITHUB_API_URL`` when that host is the API's or ``GITHUB_SERVER_URL``'s.
"""

from __future__ import annotations

import dataclasses
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass

from knowing_pr.errors import UsageError
from knowing_pr.github.client import ApiClient
from knowing_pr.github.comments import ACTIONS_BOT_LOGIN

__all__ = [
    "COMMENT_BOT_ENV",
    "DEFAULT_API_URL",
    "PullRequestReader",
    "PullTarget",
    "comment_bots",
    "pull_target",
    "repository_of_remote",
    "token_home",
]

DEFAULT_API_URL = "https://api.github.com"
#: the logins, besides github-actions[bot], whose comments ``replay --pr`` reads requests from
COMMENT_BOT_ENV = "KNOWING_PR_COMMENT_BOT"
_NAME = r"[A-Za-z0-9_.-]{1,100}"
_REPOSITORY = re.compile(rf"{_NAME}/{_NAME}")
_PULL_PATH = re.compile(rf"/({_NAME})/({_NAME})/pull/(\d{{1,9}})(?:/.*)?")
_SCP_REMOTE = re.compile(rf"[^@/]+@([^:/]+):/?({_NAME})/({_NAME}?)(?:\.git)?/?")
_NUMBER = re.compile(r"#?(\d{1,9})")
#: a pull request's comments are read up to this many (100 per page)
MAX_COMMENTS = 3000


@dataclass(frozen=True)
class PullTarget:
    """One pull request on one API, and the token to read it with (None: anonymous)."""

    api_url: str
    repository: str
    number: int
    token: str | None
    #: why a token that was set is not sent (the API is not the one it belongs to); None otherwise
    anonymous_because: str | None = None

    def __str__(self) -> str:
        return f"{self.repository}#{self.number}"


class PullRequestReader(ApiClient):
    """Reads one pull request: its comments (every page) and its title and body."""

    UNAUTHORIZED_HINT = (
        "the token in GITHUB_TOKEN or GH_TOKEN was rejected; unset it for a public repository, "
        "or set a valid one"
    )
    FORBIDDEN_HINT = (
        "a private repository needs a token that can read it in GITHUB_TOKEN or GH_TOKEN; "
        "without one the API also limits how often it answers"
    )

    def __init__(self, target: PullTarget, **options: object) -> None:
        super().__init__(
            token=target.token,
            api_url=target.api_url,
            repository=target.repository,
            pr_number=target.number,
            **options,  # type: ignore[arg-type]
        )

    def comment_bodies(self) -> list[str]:
        """The bodies of the pull request's comments, oldest first (at most ``MAX_COMMENTS``)."""
        return [body for _, body in self.comments()]

    def comments(self) -> list[tuple[str | None, str]]:
        """(author's login, body) of the pull request's comments, oldest first (at most
        ``MAX_COMMENTS``); the login is None for a deleted account."""

        def listed() -> list[tuple[str | None, str]]:
            issue = self._github().get_repo(self.repository).get_issue(self.pr_number)
            found: list[tuple[str | None, str]] = []
            for comment in issue.get_comments():
                found.append((comment.user.login if comment.user is not None else None, comment.body or ""))
                if len(found) >= MAX_COMMENTS:
                    break
            return found

        return self._call("list the pull request's comments", listed)

    def title_and_body(self) -> tuple[str, str]:
        """The pull request's title and body as they are now."""

        def read() -> tuple[str, str]:
            pull = self._github().get_repo(self.repository).get_pull(self.pr_number)
            return pull.title or "", pull.body or ""

        return self._call("read the pull request", read)


def check_pull_reference(reference: str) -> str:
    """``--pr`` as given, if it is a pull request number (``12``, ``#12``) or URL; else a
    ``UsageError`` (refused before any work)."""
    text = reference.strip()
    if _NUMBER.fullmatch(text) and int(text.lstrip("#")) > 0:
        return text
    parsed = urllib.parse.urlsplit(text)
    if parsed.scheme in ("http", "https") and parsed.hostname and _PULL_PATH.fullmatch(parsed.path or ""):
        return text
    raise UsageError(
        f"--pr {text[:100]!r}: not a pull request number or URL",
        hint="pass --pr 12, or --pr https://github.com/OWNER/REPO/pull/12",
    )


def pull_target(reference: str, env: Mapping[str, str], origin_url: str | None) -> PullTarget:
    """``--pr`` (a number, ``#N`` or a pull-request URL) → the pull request to read.

    The repository comes from the URL, else ``GITHUB_REPOSITORY``, else the ``origin`` remote;
    the API from ``GITHUB_API_URL``, else the URL's host; the token from ``GITHUB_TOKEN`` or
    ``GH_TOKEN``."""
    text = reference.strip()
    api_env = (env.get("GITHUB_API_URL") or "").strip().rstrip("/")
    number_only = _NUMBER.fullmatch(text)
    if number_only:
        repository = (env.get("GITHUB_REPOSITORY") or "").strip()
        host = None
        if not repository:
            host, repository = repository_of_remote(origin_url) or (None, "")
        if not _REPOSITORY.fullmatch(repository):
            raise UsageError(
                f"which repository is pull request {text} in? GITHUB_REPOSITORY is not set and the "
                "origin remote does not name a GitHub repository",
                hint="pass the pull request's URL (https://github.com/OWNER/REPO/pull/N), or set "
                "GITHUB_REPOSITORY=OWNER/REPO",
            )
        api_url = api_env or _api_of_host(host)
        return _with_token(PullTarget(api_url, repository, int(number_only.group(1)), None), env)
    parsed = urllib.parse.urlsplit(text)
    path = _PULL_PATH.fullmatch(parsed.path or "")
    if parsed.scheme not in ("http", "https") or not parsed.hostname or path is None:
        raise UsageError(
            f"not a pull request number or URL: {text[:100]!r}",
            hint="pass --pr 12, or --pr https://github.com/OWNER/REPO/pull/12",
        )
    owner, name, number = path.groups()
    api_url = _api_of_url_host(_host_and_port(parsed), env)
    return _with_token(PullTarget(api_url, f"{owner}/{name}", int(number), None), env)


def comment_bots(env: Mapping[str, str]) -> tuple[str, ...]:
    """The logins whose comments carry our requests: ``github-actions[bot]`` (the Action's
    ``GITHUB_TOKEN``), plus ``KNOWING_PR_COMMENT_BOT`` (comma-separated) when the Action writes
    with another identity (a GitHub App, a personal token)."""
    extra = [name.strip() for name in (env.get(COMMENT_BOT_ENV) or "").split(",")]
    return (ACTIONS_BOT_LOGIN, *(name for name in extra if name and name != ACTIONS_BOT_LOGIN))


def token_home(env: Mapping[str, str]) -> str:
    """The API a ``GITHUB_TOKEN``/``GH_TOKEN`` belongs to: ``GITHUB_API_URL``, else the public one."""
    return (env.get("GITHUB_API_URL") or "").strip().rstrip("/") or DEFAULT_API_URL


def _with_token(target: PullTarget, env: Mapping[str, str]) -> PullTarget:
    """``target`` with the token when its API is the token's own; else anonymous, saying why."""
    name = "GITHUB_TOKEN" if (env.get("GITHUB_TOKEN") or "").strip() else "GH_TOKEN"
    token = (env.get(name) or "").strip() or None
    if token is None:
        return target
    home = token_home(env)
    if _same_api(target.api_url, home):
        return dataclasses.replace(target, token=token)
    why = (
        f"{name} is not sent to {_host_and_port(urllib.parse.urlsplit(target.api_url))}: it belongs to "
        f"{home} (GITHUB_API_URL); pull request {target} is read anonymously"
    )
    return dataclasses.replace(target, anonymous_because=why)


def _same_api(a: str, b: str) -> bool:
    """The same scheme, host, port and path (hosts compared without case)."""
    first, second = urllib.parse.urlsplit(a), urllib.parse.urlsplit(b)
    return (
        first.scheme.lower() == second.scheme.lower()
        and _host_and_port(first) == _host_and_port(second)
        and first.path.rstrip("/") == second.path.rstrip("/")
    )


def _host_and_port(parsed: urllib.parse.SplitResult) -> str:
    """``host`` or ``host:port`` (lower case, no user information) of a URL."""
    host = (parsed.hostname or "").lower()
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    try:
        port = parsed.port
    except ValueError:
        port = None
    return f"{host}:{port}" if port is not None else host


def _api_of_url_host(host: str, env: Mapping[str, str]) -> str:
    """A pull request URL's host → its API: ``GITHUB_API_URL`` when the host is that API's own or
    ``GITHUB_SERVER_URL``'s, else the public API for github.com, else GitHub Enterprise Server's."""
    api_env = (env.get("GITHUB_API_URL") or "").strip().rstrip("/")
    if api_env:
        servers = [api_env, (env.get("GITHUB_SERVER_URL") or "").strip()]
        if host in {_host_and_port(urllib.parse.urlsplit(url)) for url in servers if url}:
            return api_env
    return _api_of_host(host)


def repository_of_remote(url: str | None) -> tuple[str, str] | None:
    """A remote URL (``https://host/o/r.git``, ``git@host:o/r.git``, ``ssh://git@host/o/r``) →
    (host, ``owner/name``), None when it names no such repository (a local path, say)."""
    if not url:
        return None
    scp = _SCP_REMOTE.fullmatch(url) if "://" not in url else None
    if scp:
        host, owner, name = scp.groups()
    else:
        parsed = urllib.parse.urlsplit(url)
        parts = [p for p in (parsed.path or "").split("/") if p]
        if parsed.scheme not in ("http", "https", "ssh", "git") or not parsed.hostname or len(parts) != 2:
            return None
        host, owner, name = parsed.hostname, parts[0], parts[1]
    name = name[:-4] if name.endswith(".git") else name
    repository = f"{owner}/{name}"
    return (host, repository) if _REPOSITORY.fullmatch(repository) else None


def _api_of_host(host: str | None) -> str:
    """github.com (or no host) → the public API; any other host → GitHub Enterprise Server's."""
    if not host or host.lower() in ("github.com", "www.github.com"):
        return DEFAULT_API_URL
    return f"https://{host}/api/v3"
