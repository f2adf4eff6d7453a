"""bench/get_issue_reports.py speaks to the GitHub API with a token: the token goes to the API
given and nowhere else (a redirect to another server, a plain-http API that is not this machine),
and only this repository's own fix references are followed. Real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

sys.path.append(str(Path(__file__).resolve().parents[1] / "bench"))  # the script imports its siblings
from get_issue_reports import _may_carry_token, get  # noqa: E402


class _Recorder(BaseHTTPRequestHandler):
    """Answers every GET with ``redirect_to`` (a 302) when set, else a JSON object; records the
    Authorization header each request carried."""

    seen: list[str | None]
    redirect_to: str | None = None

    def do_GET(self) -> None:  # noqa: N802 (the handler's name)
        self.seen.append(self.headers.get("Authorization"))
        if self.redirect_to:
            self.send_response(302)
            self.send_header("Location", self.redirect_to + self.path)
            self.end_headers()
            return
        body = json.dumps({"number": 12}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _server(redirect_to: str | None = None) -> tuple[HTTPServer, list[str | None]]:
    seen: list[str | None] = []
    handler = type("Handler", (_Recorder,), {"seen": seen, "redirect_to": redirect_to})
    server = HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, seen


@pytest.fixture
def servers() -> Iterator[list[HTTPServer]]:
    made: list[HTTPServer] = []
    yield made
    for server in made:
        server.shutdown()
        server.server_close()


def _url(server: HTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def test_the_token_reaches_the_api_but_not_a_server_it_redirects_to(servers) -> None:  # type: ignore[no-untyped-def]
    elsewhere, seen_elsewhere = _server()
    api, seen_api = _server(redirect_to=_url(elsewhere))
    servers += [elsewhere, api]
    assert get(_url(api), "/repos/o/n/issues/12", "SECRET") == {"number": 12}
    assert seen_api == ["Bearer SECRET"]
    assert seen_elsewhere == [None]


def test_only_githubs_api_over_https_or_this_machine_is_sent_the_token() -> None:
    assert _may_carry_token("https://api.github.com")
    assert _may_carry_token("http://127.0.0.1:8080")
    assert not _may_carry_token("http://api.github.com")
    assert not _may_carry_token("http://example.com/api")
    assert not _may_carry_token("https://example.com/api")  # only GitHub's API, however it is reached
