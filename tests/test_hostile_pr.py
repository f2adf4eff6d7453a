"""Hostile pull requests, commenters, hosts and inputs against the Action and ``replay --pr``
(issue 25): real repositories in tmp_path, the stand-in GitHub API, a TLS listener on 127.0.0.1.
Each test fails on 99a3a56, where the attack worked."""

from __future__ import annotations

import io
import json
import os
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fake_github import ACTIONS_BOT_LOGIN, FakeGitHub, action_env
from test_action import PR, REPO, TOKEN, FakeBuilder, Run, fast_publisher

from knowing_pr.action import run_action
from knowing_pr.action.checkout import ensure_commits
from knowing_pr.cli import main as cli_main
from knowing_pr.errors import GitHubError, RepoError, UsageError
from knowing_pr.github import COMMENT_MARKER, RetryPolicy
from knowing_pr.pipeline import open_workspace
from knowing_pr.pipeline.records import find_pack
from knowing_pr.render.comment import request_line
from knowing_pr.replay import validate_record

CANARY = "ghp_CANARY_must_stay_home_7"


@pytest.fixture
def run(tmp_path: Path, repo: Any) -> Iterator[Run]:
    """One prepared Action run (test_action.Run) against the stand-in API, an Actions token."""
    with FakeGitHub(token=TOKEN, user_login=None) as server:
        yield Run(tmp_path, repo, server)


# -- item 7: a revision from outside never reaches git as an option -------------------------------


def _dispatch_event(run: Run, base: str, head: str) -> None:
    event = {"inputs": {"pr": str(PR), "base": base, "head": head}}
    run.event_path.write_text(json.dumps(event), encoding="utf-8")


def test_a_dispatch_base_that_is_a_git_option_runs_nothing(
    run: Run, repo: Any, tmp_path: Path, make_repo: Any
) -> None:
    origin = make_repo("origin")
    origin.write("README", "origin\n")
    origin.commit("origin")
    repo.git("remote", "add", "origin", str(origin.path))
    ran = tmp_path / "upload-pack-ran"
    _dispatch_event(run, f"--upload-pack=touch {ran};", run.head)
    builder = FakeBuilder()

    status = run(builder, GITHUB_EVENT_NAME="workflow_dispatch", KNOWING_PR_FAIL_ON_ERROR="true")

    assert status == 1
    assert not ran.exists()
    assert builder.calls == []
    assert "workflow_dispatch input 'base' is not a commit or ref name" in run.out.getvalue()


def test_the_checkout_refuses_an_option_where_the_revision_meets_git(run: Run, tmp_path: Path) -> None:
    ran = tmp_path / "ran"

    with pytest.raises(RepoError, match="not a commit or ref name"):
        ensure_commits(
            Path(run.env["GITHUB_WORKSPACE"]),
            [f"--upload-pack=touch {ran};"],
            depth=1,
            env={"PATH": os.environ.get("PATH", "")},
        )

    assert not ran.exists()


# -- item 3: a token goes only to the API it belongs to --------------------------------------------


def _self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made here (``cryptography`` when installed, else
    the ``openssl`` command)."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    try:
        _self_signed_with_cryptography(cert, key)
    except ImportError:
        subprocess.run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=127.0.0.1",
            ]
            + ["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
            check=True,
            capture_output=True,
        )
    return cert, key


def _self_signed_with_cryptography(cert: Path, key: Path) -> None:
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(private, hashes.SHA256())
    )
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )


class StrangerHost:
    """A TLS server on 127.0.0.1 that answers 404 to everything and records each request's path
    and Authorization header (what a host that is not the token's API would collect)."""

    def __init__(self, directory: Path) -> None:
        self.cert, key = _self_signed(directory)
        self.seen: list[tuple[str, str | None]] = []
        seen = self.seen

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                seen.append((self.path, self.headers.get("Authorization")))
                body = json.dumps({"message": "Not Found"}).encode()
                self.send_response(404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def netloc(self) -> str:
        return f"127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> StrangerHost:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stranger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[StrangerHost]:
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "GITHUB_REPOSITORY", "GITHUB_API_URL", "GITHUB_SERVER_URL"):
        monkeypatch.delenv(name, raising=False)
    with StrangerHost(tmp_path) as host:
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(host.cert))  # the client trusts the listener
        yield host


def _clone_with_a_commit(make_repo: Any) -> Path:
    clone = make_repo("clone")
    clone.write("src/a.py", "def a():\n    return 1\n")
    clone.commit("a")
    return Path(clone.path)


@pytest.mark.parametrize("variable", ["GITHUB_TOKEN", "GH_TOKEN"])
def test_replay_pr_on_another_host_is_read_without_the_token(
    stranger: StrangerHost,
    make_repo: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
) -> None:
    clone = _clone_with_a_commit(make_repo)
    monkeypatch.setenv(variable, CANARY)
    url = f"https://{stranger.netloc}/o/r/pull/1"

    status = cli_main(["replay", "a" * 64, "--repo", str(clone), "--pr", url])

    err = capsys.readouterr().err
    assert status == 2
    assert stranger.seen, "the pull request's host was asked (anonymously)"
    assert all(authorization is None for _, authorization in stranger.seen)
    assert f"{variable} is not sent to {stranger.netloc}" in err and "read anonymously" in err
    assert CANARY not in err


def test_mcp_replay_pack_on_another_host_is_read_without_the_token(
    stranger: StrangerHost, make_repo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from knowing_pr.mcp.tools import Toolbox

    clone = _clone_with_a_commit(make_repo)
    monkeypatch.setenv("GITHUB_TOKEN", CANARY)

    answer = Toolbox(clone).replay_pack("a" * 64, pr=f"https://{stranger.netloc}/o/r/pull/1")

    assert answer.is_error
    assert stranger.seen and all(authorization is None for _, authorization in stranger.seen)
    assert "read anonymously" in answer.text and CANARY not in answer.text


def test_a_token_still_goes_to_its_own_api(stranger: StrangerHost, monkeypatch: pytest.MonkeyPatch) -> None:
    """GITHUB_API_URL names the token's API: a pull request URL on that host is read with it."""
    from knowing_pr.github import PullRequestReader, pull_target
    from knowing_pr.github.pulls import token_home

    env = {"GITHUB_TOKEN": CANARY, "GITHUB_API_URL": f"https://{stranger.netloc}/api/v3"}
    target = pull_target(f"https://{stranger.netloc}/o/r/pull/1", env, None)
    assert (target.token, target.anonymous_because, token_home(env)) == (CANARY, None, env["GITHUB_API_URL"])
    with pytest.raises(GitHubError):
        PullRequestReader(target, retry=RetryPolicy(max_attempts=1)).comment_bodies()
    assert stranger.seen and all(authorization == f"token {CANARY}" for _, authorization in stranger.seen)


# -- item 5: a comment is ours only when it starts with our marker and our bot wrote it -------------


def test_another_workflows_comment_that_quotes_the_marker_is_never_edited_or_deleted(run: Run) -> None:
    quoting = run.gh.add_comment(
        REPO, PR, f"Preview deployed.\n\nDebug: {COMMENT_MARKER}\n", user=ACTIONS_BOT_LOGIN
    )
    other_bot = run.gh.add_comment(REPO, PR, f"{COMMENT_MARKER}\nnot ours", user="renovate[bot]")

    assert run(KNOWING_PR_FAIL_ON_ERROR="true") == 0

    comments = {c.id: c for c in run.gh.comments(REPO, PR)}
    assert comments[quoting.id].body == f"Preview deployed.\n\nDebug: {COMMENT_MARKER}\n"
    assert comments[other_bot.id].body == f"{COMMENT_MARKER}\nnot ours"
    [ours] = [c for c in comments.values() if c.id not in (quoting.id, other_bot.id)]
    assert ours.body.startswith(f"{COMMENT_MARKER}\n") and ours.user == ACTIONS_BOT_LOGIN
    assert run.gh.count("PATCH") == 0 and run.gh.count("DELETE") == 0


def _record(pack_root: str, head: str, budget: int) -> dict[str, Any]:
    return validate_record(
        {
            "v": 1,
            "pack_root": pack_root,
            "mode": "pr",
            "base": None,
            "head": head,
            "files": [],
            "budget": budget,
            "format": "markdown",
            "params_digest": "d" * 64,
            "task": None,
        }
    )


def test_replay_pr_reads_request_lines_only_from_the_actions_comments(make_repo: Any) -> None:
    clone = make_repo("clone")
    clone.write("src/a.py", "x = 1\n")
    head = clone.commit("a")
    pack_root = "c" * 64
    genuine, forged = _record(pack_root, head, 4000), _record(pack_root, head, 9_000_000)
    with FakeGitHub(token=TOKEN) as server:
        server.add_pull(REPO, PR)
        server.add_comment(
            REPO, PR, f"{COMMENT_MARKER}\n### knowing-pr\n\n{request_line(genuine)}\n", user=ACTIONS_BOT_LOGIN
        )
        for author, body in [
            ("mallory", f"{COMMENT_MARKER}\n{request_line(forged)}\n"),  # a person, with our marker
            (ACTIONS_BOT_LOGIN, f"Another workflow\n{COMMENT_MARKER}\n{request_line(forged)}\n"),
        ]:
            server.add_comment(REPO, PR, body, user=author)
        env = {"GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": server.base_url, "GITHUB_TOKEN": TOKEN}
        ws = open_workspace(clone.path)

        found = find_pack(ws, pack_root, pr=str(PR), env=env)

        assert found.record is not None and found.record["budget"] == 4000
        # a person's comment is never read, whatever it starts with, nor one that only quotes the marker
        server.repos[REPO][PR].comments = server.repos[REPO][PR].comments[1:]
        with pytest.raises(UsageError, match="none of those carries"):
            find_pack(ws, pack_root, pr=str(PR), env=env)


# -- item 2: the settings come from the base commit, never from the pull request -------------------

PAY = "def charge(amount):\n    return round(amount, 2)\n"
SHOP = "from src.pay import charge\n\n\ndef checkout(total):\n    return charge(total)\n"


def _hiding_pull_request(
    repo: Any, gh: FakeGitHub, runner: Path, settings: str | None = None, link: str | None = None
) -> dict[str, str]:
    """A base with a caller of ``charge``; a head that breaks ``charge(amount, currency)`` and adds
    a ``.knowing-pr.yml`` (by default one that excludes the caller; or ``settings``, or a symbolic
    link to ``link``). The Action's environment for it."""
    repo.write("src/__init__.py", "")
    repo.write("src/pay.py", PAY)
    repo.write("src/shop.py", SHOP)
    base = repo.commit("base")
    repo.write("src/pay.py", PAY.replace("(amount)", "(amount, currency)"))
    if link is not None:
        repo.symlink(".knowing-pr.yml", link)
    else:
        repo.write(".knowing-pr.yml", settings or 'index:\n  workers: 64\nexclude: ["src/shop.py"]\n')
    head = repo.commit("charge takes a currency")
    gh.add_pull(REPO, PR, head_sha=head, base_sha=base)
    pull = {"number": PR, "title": "Currency", "body": "", "base": {"sha": base}, "head": {"sha": head}}
    runner.mkdir()
    (runner / "event.json").write_text(json.dumps({"pull_request": pull}), encoding="utf-8")
    return action_env(
        runner,
        repo.path,
        repository=REPO,
        api_url=gh.base_url,
        token=TOKEN,
        GITHUB_STEP_SUMMARY=str(runner / "summary.md"),
        KNOWING_PR_FAIL_ON_ERROR="true",
        PATH=os.environ.get("PATH", ""),
    )


def test_a_pull_request_cannot_hide_the_call_site_it_breaks_with_its_own_settings(
    repo: Any, tmp_path: Path
) -> None:
    with FakeGitHub(token=TOKEN, user_login=None) as gh:
        env = _hiding_pull_request(repo, gh, tmp_path / "runner")
        out = io.StringIO()

        assert run_action(env, publisher_factory=fast_publisher(gh), out=out) == 0, out.getvalue()

        [comment] = gh.comments(REPO, PR)
    assert "⚠️ `src/shop.py:5` `return charge(total)`" in comment.body
    assert "not updated" in comment.body
    note = "This PR changes .knowing-pr.yml (exclude, index.workers); this review used the base's settings."
    assert f"> ⚠️ {note}" in comment.body
    assert comment.body.startswith(f"{COMMENT_MARKER}\n")
    assert note in out.getvalue()  # and as a warning annotation
    assert note in (tmp_path / "runner" / "summary.md").read_text(encoding="utf-8")


def test_the_hook_worker_reads_the_committed_settings_never_a_file_the_work_tree_links_to(
    make_repo: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from knowing_pr.hooks import SYNC_ENV, install_hooks, read_indexed_commit, store_path

    monkeypatch.setenv(SYNC_ENV, "1")
    builder = make_repo("hooked")
    builder.write(".knowing-pr.yml", "index:\n  workers: 1\n")
    builder.write("src/a.py", "def a():\n    return 1\n")
    builder.commit("a")
    install_hooks(str(builder.path))
    outside = tmp_path / "outside" / "secret.yml"
    outside.parent.mkdir()
    outside.write_text("aws_secret_key: hunter2\n", encoding="utf-8")
    builder.symlink(".knowing-pr.yml", str(outside))  # in the work tree only, never committed
    builder.write("src/a.py", "def a():\n    return 2\n")

    builder.git("commit", "-q", "-m", "a2", "--", "src/a.py")

    git_dir = builder.git("rev-parse", "--absolute-git-dir").strip()
    db = Path(store_path(git_dir))
    assert read_indexed_commit(db) == builder.git("rev-parse", "HEAD").strip()
    log = (db.parent / "hook.log").read_text(encoding="utf-8")
    assert "aws_secret_key" not in log and "index failed" not in log


@pytest.mark.parametrize(
    ("reference", "env", "sent"),
    [
        ("https://github.com/o/r/pull/1", {}, True),
        ("https://github.com/o/r/pull/1", {"GITHUB_API_URL": "https://api.github.com"}, True),
        ("https://ghe.corp/o/r/pull/1", {"GITHUB_API_URL": "https://ghe.corp/api/v3"}, True),
        ("https://ghe.corp/o/r/pull/1", {}, False),
        ("https://api.github.com@evil.example/o/r/pull/1", {}, False),
        ("https://github.com.evil.example/o/r/pull/1", {}, False),
        ("https://evil.example/o/r/pull/1", {"GITHUB_API_URL": "https://api.github.com"}, False),
        ("1", {"GITHUB_REPOSITORY": "o/r"}, True),
        ("1", {}, False),  # the repository and its host from a cloned repository's origin remote
    ],
)
def test_the_token_goes_only_to_the_api_it_belongs_to(
    reference: str, env: dict[str, str], sent: bool
) -> None:
    from knowing_pr.github import pull_target

    target = pull_target(reference, {**env, "GH_TOKEN": CANARY}, "https://evil.example/o/r.git")
    assert (target.token == CANARY) is sent
    assert (target.anonymous_because is None) is sent


BOMB = "a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: &c [*b, *b, *b]\nexclude: [*c, *c, *c]\n"


@pytest.mark.parametrize(
    ("settings", "link", "said"),
    [
        (BOMB, None, "it does not load as settings"),
        ("exclude: src/shop.py\n", None, "it does not load as settings"),
        (None, "../../outside/settings.yml", "it is not a regular file"),
    ],
)
def test_a_pull_requests_settings_that_cannot_load_do_not_stop_its_review(
    repo: Any, tmp_path: Path, settings: str | None, link: str | None, said: str
) -> None:
    outside = tmp_path / "outside" / "settings.yml"
    outside.parent.mkdir()
    outside.write_text('exclude: ["src/shop.py"]\n', encoding="utf-8")
    with FakeGitHub(token=TOKEN, user_login=None) as gh:
        env = _hiding_pull_request(repo, gh, tmp_path / "runner", settings, link)
        out = io.StringIO()

        assert run_action(env, publisher_factory=fast_publisher(gh), out=out) == 0, out.getvalue()

        [comment] = gh.comments(REPO, PR)
    assert "⚠️ `src/shop.py:5` `return charge(total)`" in comment.body
    assert (
        f"> ⚠️ This PR changes .knowing-pr.yml ({said}); this review used the base's settings." in comment.body
    )


def test_an_uncommitted_settings_file_does_not_make_every_commit_a_full_index(
    make_repo: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command line indexes with the work tree's ``.knowing-pr.yml``, the hook's worker with
    the one committed at the commit: when they differ, the worker leaves the store to the next
    command (and says so) instead of rebuilding it in full, and that command's run stays
    incremental."""
    import json as json_

    from knowing_pr.cli import main
    from knowing_pr.hooks import SYNC_ENV, install_hooks, store_path

    monkeypatch.setenv(SYNC_ENV, "1")
    builder = make_repo("untracked")
    builder.write("src/a.py", "def a():\n    return 1\n")
    builder.write("docs/b.py", "def b():\n    return 1\n")
    builder.commit("a")
    builder.write(".knowing-pr.yml", 'exclude: ["docs/**"]\n')  # never committed
    assert main(["index", "--repo", str(builder.path), "--quiet"]) == 0
    install_hooks(str(builder.path))
    builder.write("src/a.py", "def a():\n    return 2\n")
    builder.git("commit", "-q", "-m", "a2", "--", "src/a.py")

    git_dir = builder.git("rev-parse", "--absolute-git-dir").strip()
    db = Path(store_path(git_dir))
    log = (db.parent / "hook.log").read_text(encoding="utf-8")
    assert "skipped" in log and "other settings" in log and "index failed" not in log
    capsys.readouterr()
    assert main(["index", "--repo", str(builder.path), "--json"]) == 0
    assert json_.loads(capsys.readouterr().out)["mode"] == "incremental"


def test_replay_never_reads_settings_committed_as_a_link(make_repo: Any) -> None:
    """``replay --verify`` tries the settings committed at the recorded commit; one committed as a
    symbolic link is never read, even when the link's own text is valid settings."""
    from knowing_pr.pipeline.verify import _committed_candidate
    from knowing_pr.pipeline.workspace import open_workspace

    builder = make_repo("linked-settings")
    builder.write("src/a.py", "def a():\n    return 1\n")
    builder.symlink(".knowing-pr.yml", "exclude: [src/a.py]")  # the link text parses as YAML
    head = builder.commit("a")
    (builder.path / ".knowing-pr.yml").unlink()  # the work tree's link is refused on its own
    ws = open_workspace(str(builder.path))
    assert _committed_candidate(ws, head, ".knowing-pr.yml") is None
    plain = builder.commit("no settings")
    found = _committed_candidate(ws, plain, ".knowing-pr.yml")
    assert found is not None and found[0].startswith("the default settings")
