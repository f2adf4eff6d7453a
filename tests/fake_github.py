"""Scripted faults + in-memory repositories → a real GitHub REST stand-in on 127.0.0.1.

A ``ThreadingHTTPServer`` on an ephemeral port, run in a daemon thread, that answers the
REST (and the one GraphQL) calls PyGithub makes for a sticky PR comment::

    GET    /user                                   the authenticated user (403 for an Actions token)
    GET    /repos/{o}/{r}
    GET    /repos/{o}/{r}/pulls/{n}
    GET    /repos/{o}/{r}/issues/{n}
    GET    /repos/{o}/{r}/issues/{n}/comments      paginated: per_page, page, a Link header
    POST   /repos/{o}/{r}/issues/{n}/comments      create (422 over 65,536 characters)
    PATCH  /repos/{o}/{r}/issues/comments/{id}     edit
    DELETE /repos/{o}/{r}/issues/comments/{id}
    POST   /graphql                                ``nodes(ids:)`` → ``isMinimized`` per comment

Usage::

    with FakeGitHub(token="t0k", user_login="knowing-bot") as gh:
        gh.add_pull("o/r", 7, head_sha="b" * 40, base_sha="a" * 40)
        gh.script("POST", "/repos/o/r/issues/7/comments", Fault(status=502), Fault(status=502))
        ...                                         # point PyGithub at gh.base_url
        assert gh.count("POST", "/repos/o/r/issues/7/comments") == 3

A ``Fault`` replaces the next matching response: a status with a JSON body and headers, a
delay (longer than the client's timeout to simulate one), and ``apply=True`` to perform the
real request first and only then answer with the fault (a POST that is applied, then reported
as failed, is how naive retries duplicate comments). Faults for one (method, path pattern) are
consumed in order; patterns are ``fnmatch`` globs on the path without the query string.
"""

from __future__ import annotations

import fnmatch
import json
import re
import threading
import time
import urllib.parse
import zlib
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = [
    "ACTIONS_BOT_LOGIN",
    "Fault",
    "FakeComment",
    "FakeGitHub",
    "FakePull",
    "RequestRecord",
    "action_env",
]

ACTIONS_BOT_LOGIN = "github-actions[bot]"
GITHUB_MAX_COMMENT_CHARS = 65536
_EPOCH_S = 1_700_000_000


@dataclass(frozen=True)
class Fault:
    """One scripted answer; ``status=None`` means "answer normally" (with ``delay_s``/``apply``)."""

    status: int | None = None
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    apply: bool = False


@dataclass
class FakeComment:
    id: int
    body: str
    user: str
    created_s: int
    updated_s: int
    minimized: bool = False

    @property
    def node_id(self) -> str:
        return f"IC_kwfake{self.id}"


@dataclass
class FakePull:
    number: int
    title: str
    body: str
    head_sha: str
    base_sha: str
    head_repo: str
    comments: list[FakeComment] = field(default_factory=list)


@dataclass(frozen=True)
class RequestRecord:
    method: str
    path: str
    query: str
    status: int
    authorized: bool


def _iso(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


class FakeGitHub:
    """The server, its state and its request log; use as a context manager."""

    def __init__(
        self,
        *,
        token: str = "test-token",
        user_login: str | None = ACTIONS_BOT_LOGIN,
        page_size: int = 100,
        anonymous_reads: bool = False,
    ) -> None:
        self.token = token
        #: answer GET requests without a token, as GitHub does for a public repository
        self.anonymous_reads = anonymous_reads
        #: login returned by GET /user; ``None`` answers 403 like an Actions GITHUB_TOKEN does
        self.user_login = user_login
        self.page_size = page_size
        self.repos: dict[str, dict[int, FakePull]] = {}
        self.log: list[RequestRecord] = []
        self._faults: dict[tuple[str, str], deque[Fault]] = {}
        self._lock = threading.RLock()
        self._next_comment_id = 1000
        self._clock_s = _EPOCH_S
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> FakeGitHub:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # -- state ----------------------------------------------------------------------------------

    def add_repo(self, full_name: str) -> None:
        with self._lock:
            self.repos.setdefault(full_name, {})

    def add_pull(
        self,
        full_name: str,
        number: int,
        *,
        title: str = "A change",
        body: str = "",
        head_sha: str = "b" * 40,
        base_sha: str = "a" * 40,
        head_repo: str | None = None,
    ) -> FakePull:
        with self._lock:
            self.add_repo(full_name)
            pull = FakePull(number, title, body, head_sha, base_sha, head_repo or full_name)
            self.repos[full_name][number] = pull
            return pull

    def add_comment(
        self, full_name: str, number: int, body: str, *, user: str, minimized: bool = False
    ) -> FakeComment:
        with self._lock:
            pull = self.repos[full_name][number]
            comment = FakeComment(self._new_id(), body, user, self._tick(), self._clock_s, minimized)
            pull.comments.append(comment)
            return comment

    def comments(self, full_name: str, number: int) -> list[FakeComment]:
        with self._lock:
            return list(self.repos[full_name][number].comments)

    def _new_id(self) -> int:
        self._next_comment_id += 1
        return self._next_comment_id

    def _tick(self) -> int:
        self._clock_s += 1
        return self._clock_s

    # -- faults and log -------------------------------------------------------------------------

    def script(self, method: str, path_pattern: str, *faults: Fault) -> None:
        """Queue answers for the next requests whose method and path match."""
        with self._lock:
            self._faults.setdefault((method.upper(), path_pattern), deque()).extend(faults)

    def next_fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for (fault_method, pattern), queue in self._faults.items():
                if fault_method == method and queue and fnmatch.fnmatchcase(path, pattern):
                    return queue.popleft()
            return None

    def record(self, entry: RequestRecord) -> None:
        with self._lock:
            self.log.append(entry)

    def count(self, method: str | None = None, path_pattern: str = "*") -> int:
        """Requests seen (any status) whose method and path match."""
        with self._lock:
            return sum(
                1
                for r in self.log
                if (method is None or r.method == method.upper())
                and fnmatch.fnmatchcase(r.path, path_pattern)
            )

    def writes(self) -> int:
        return sum(self.count(m) for m in ("POST", "PATCH", "DELETE")) - self.count("POST", "/graphql")

    # -- JSON views -----------------------------------------------------------------------------

    def comment_json(self, full_name: str, number: int, comment: FakeComment) -> dict[str, Any]:
        base = self.base_url
        return {
            "id": comment.id,
            "node_id": comment.node_id,
            "url": f"{base}/repos/{full_name}/issues/comments/{comment.id}",
            "html_url": f"https://github.example/{full_name}/pull/{number}#issuecomment-{comment.id}",
            "issue_url": f"{base}/repos/{full_name}/issues/{number}",
            "body": comment.body,
            "user": {"login": comment.user, "id": zlib.crc32(comment.user.encode()), "type": "Bot"},
            "created_at": _iso(comment.created_s),
            "updated_at": _iso(comment.updated_s),
            "author_association": "NONE",
        }

    def pull_json(self, full_name: str, pull: FakePull) -> dict[str, Any]:
        base = self.base_url
        return {
            "number": pull.number,
            "state": "open",
            "title": pull.title,
            "body": pull.body,
            "url": f"{base}/repos/{full_name}/pulls/{pull.number}",
            "html_url": f"https://github.example/{full_name}/pull/{pull.number}",
            "head": {"sha": pull.head_sha, "ref": "feature", "repo": {"full_name": pull.head_repo}},
            "base": {"sha": pull.base_sha, "ref": "main", "repo": {"full_name": full_name}},
        }

    def issue_json(self, full_name: str, pull: FakePull) -> dict[str, Any]:
        base = self.base_url
        return {
            "number": pull.number,
            "title": pull.title,
            "body": pull.body,
            "state": "open",
            "url": f"{base}/repos/{full_name}/issues/{pull.number}",
            "comments_url": f"{base}/repos/{full_name}/issues/{pull.number}/comments",
            "comments": len(pull.comments),
            "pull_request": {"url": f"{base}/repos/{full_name}/pulls/{pull.number}"},
        }


_REPO = r"/repos/(?P<repo>[^/]+/[^/]+)"
_ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    ("GET", re.compile(r"/user"), "get_user"),
    ("POST", re.compile(r"/graphql"), "graphql"),
    ("GET", re.compile(_REPO), "get_repo"),
    ("GET", re.compile(_REPO + r"/pulls/(?P<number>\d+)"), "get_pull"),
    ("GET", re.compile(_REPO + r"/issues/(?P<number>\d+)"), "get_issue"),
    ("GET", re.compile(_REPO + r"/issues/(?P<number>\d+)/comments"), "list_comments"),
    ("POST", re.compile(_REPO + r"/issues/(?P<number>\d+)/comments"), "create_comment"),
    ("PATCH", re.compile(_REPO + r"/issues/comments/(?P<id>\d+)"), "edit_comment"),
    ("DELETE", re.compile(_REPO + r"/issues/comments/(?P<id>\d+)"), "delete_comment"),
]

Reply = tuple[int, Any, dict[str, str]]


def _not_found() -> Reply:
    return 404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, {}


class _Api:
    """The endpoint logic: request → (status, JSON body, headers); state changes under the lock."""

    def __init__(self, fake: FakeGitHub) -> None:
        self.fake = fake

    def dispatch(self, method: str, path: str, query: dict[str, list[str]], payload: Any) -> Reply:
        for route_method, pattern, name in _ROUTES:
            match = pattern.fullmatch(path)
            if route_method == method and match:
                handler = getattr(self, name)
                with self.fake._lock:
                    return handler(query=query, payload=payload, **match.groupdict())  # type: ignore[no-any-return]
        return _not_found()

    def _pull(self, repo: str, number: str) -> FakePull | None:
        return self.fake.repos.get(repo, {}).get(int(number))

    def _find_comment(self, repo: str, comment_id: str) -> tuple[FakePull, FakeComment] | None:
        for pull in self.fake.repos.get(repo, {}).values():
            for comment in pull.comments:
                if comment.id == int(comment_id):
                    return pull, comment
        return None

    def get_user(self, **_: Any) -> Reply:
        if self.fake.user_login is None:
            return 403, {"message": "Resource not accessible by integration"}, {}
        return 200, {"login": self.fake.user_login, "id": 1, "type": "Bot"}, {}

    def graphql(self, payload: Any, **_: Any) -> Reply:
        ids = (payload or {}).get("variables", {}).get("ids", [])
        by_node = {
            c.node_id: c for pulls in self.fake.repos.values() for p in pulls.values() for c in p.comments
        }
        nodes = [{"id": i, "isMinimized": by_node[i].minimized} if i in by_node else None for i in ids]
        return 200, {"data": {"nodes": nodes}}, {}

    def get_repo(self, repo: str, **_: Any) -> Reply:
        if repo not in self.fake.repos:
            return _not_found()
        return (
            200,
            {"full_name": repo, "name": repo.split("/")[1], "url": f"{self.fake.base_url}/repos/{repo}"},
            {},
        )

    def get_pull(self, repo: str, number: str, **_: Any) -> Reply:
        pull = self._pull(repo, number)
        return (200, self.fake.pull_json(repo, pull), {}) if pull else _not_found()

    def get_issue(self, repo: str, number: str, **_: Any) -> Reply:
        pull = self._pull(repo, number)
        return (200, self.fake.issue_json(repo, pull), {}) if pull else _not_found()

    def list_comments(self, repo: str, number: str, query: dict[str, list[str]], **_: Any) -> Reply:
        pull = self._pull(repo, number)
        if pull is None:
            return _not_found()
        per_page = min(int(query.get("per_page", ["30"])[0]), self.fake.page_size)
        page = int(query.get("page", ["1"])[0])
        items = pull.comments[(page - 1) * per_page : page * per_page]
        body = [self.fake.comment_json(repo, pull.number, c) for c in items]
        last_page = max(1, -(-len(pull.comments) // per_page))
        headers = {}
        if page < last_page:
            url = f"{self.fake.base_url}/repos/{repo}/issues/{pull.number}/comments"
            headers["Link"] = (
                f'<{url}?per_page={per_page}&page={page + 1}>; rel="next", '
                f'<{url}?per_page={per_page}&page={last_page}>; rel="last"'
            )
        return 200, body, headers

    def create_comment(self, repo: str, number: str, payload: Any, **_: Any) -> Reply:
        pull = self._pull(repo, number)
        if pull is None:
            return _not_found()
        body = (payload or {}).get("body")
        if not isinstance(body, str) or not body:
            return (
                422,
                {"message": "Validation Failed", "errors": [{"field": "body", "code": "missing_field"}]},
                {},
            )
        if len(body) > GITHUB_MAX_COMMENT_CHARS:
            return 422, _too_long(), {}
        login = self.fake.user_login or ACTIONS_BOT_LOGIN
        comment = FakeComment(self.fake._new_id(), body, login, self.fake._tick(), self.fake._clock_s)
        pull.comments.append(comment)
        return 201, self.fake.comment_json(repo, pull.number, comment), {}

    def edit_comment(self, repo: str, id: str, payload: Any, **_: Any) -> Reply:
        found = self._find_comment(repo, id)
        if found is None:
            return _not_found()
        pull, comment = found
        body = (payload or {}).get("body")
        if not isinstance(body, str):
            return 422, {"message": "Validation Failed"}, {}
        if len(body) > GITHUB_MAX_COMMENT_CHARS:
            return 422, _too_long(), {}
        comment.body = body
        comment.updated_s = self.fake._tick()
        return 200, self.fake.comment_json(repo, pull.number, comment), {}

    def delete_comment(self, repo: str, id: str, **_: Any) -> Reply:
        found = self._find_comment(repo, id)
        if found is None:
            return _not_found()
        pull, comment = found
        pull.comments.remove(comment)
        return 204, None, {}


def _too_long() -> dict[str, Any]:
    return {
        "message": "Validation Failed",
        "errors": [
            {
                "resource": "IssueComment",
                "code": "unprocessable",
                "field": "data",
                "message": "Body is too long (maximum is 65536 characters)",
            }
        ],
    }


def _handler_for(fake: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    api = _Api(fake)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
            return

        def _authorized(self) -> bool:
            header = self.headers.get("Authorization", "")
            scheme, _, value = header.partition(" ")
            return scheme.lower() in ("token", "bearer") and value == fake.token

        def _serve(self) -> None:
            parsed = urllib.parse.urlsplit(self.path)
            path, query = parsed.path, urllib.parse.parse_qs(parsed.query)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            payload = json.loads(raw) if raw else None
            method = self.command
            authorized = self._authorized()
            anonymous = fake.anonymous_reads and method == "GET" and not self.headers.get("Authorization")
            if not authorized and not anonymous:
                reply: Reply = 401, {"message": "Bad credentials"}, {}
            else:
                reply = self._answer(method, path, query, payload)
            fake.record(RequestRecord(method, path, parsed.query, reply[0], authorized))
            self._send(reply)

        def _answer(self, method: str, path: str, query: dict[str, list[str]], payload: Any) -> Reply:
            fault = fake.next_fault(method, path)
            if fault is None:
                return api.dispatch(method, path, query, payload)
            reply = (
                api.dispatch(method, path, query, payload) if fault.apply or fault.status is None else None
            )
            if fault.delay_s:
                time.sleep(fault.delay_s)
            if fault.status is None:
                assert reply is not None
                return reply
            body = fault.body if fault.body is not None else {"message": f"scripted {fault.status}"}
            return fault.status, body, dict(fault.headers)

        def _send(self, reply: Reply) -> None:
            status, body, headers = reply
            data = b"" if body is None else json.dumps(body).encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client timed out and hung up; the request was still applied

        do_GET = do_POST = do_PATCH = do_DELETE = _serve

    return Handler


def action_env(
    runner: Any, workspace: Any, *, repository: str, api_url: str, token: str, **extra: str
) -> dict[str, str]:
    """What a GitHub runner gives the Action for a ``pull_request`` event written to
    ``runner/event.json``: the event, the repository, this stand-in API, the workspace, the
    output file, a temp directory and the token; ``extra`` adds or overrides variables."""
    return {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(runner / "event.json"),
        "GITHUB_REPOSITORY": repository,
        "GITHUB_API_URL": api_url,
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_OUTPUT": str(runner / "output"),
        "RUNNER_TEMP": str(runner / "temp"),
        "GITHUB_TOKEN": token,
        **extra,
    }
