"""Replay a pack from its PackRoot alone in a fresh clone (no store, no artifact): the request is
read from the PR comment's hidden line through the stand-in GitHub API, or from a git note the
Action pushed; plus the record's format, its bounds and its validation."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fake_github import FakeGitHub, action_env

from knowing_pr.action import run_action
from knowing_pr.cli import main
from knowing_pr.errors import UsageError
from knowing_pr.github import PullRequestReader, RetryPolicy, pull_target, repository_of_remote
from knowing_pr.render.comment import MAX_REQUEST_LINE_BYTES, read_request_lines, request_line
from knowing_pr.replay import (
    NOTES_REF,
    comment_record,
    note_text,
    records_in_note,
    request_record,
    task_digest,
    validate_record,
)

TOKEN = "ghs_CANARY_replay_token_7"
REPO = "octo/widgets"
PR = 12
APP = """\
def handler(request):
    return render(parse(request))


def parse(request):
    return request.strip()


def render(text):
    return f"<p>{text}</p>"
"""
TEST = """\
from src.app import handler


def test_handler():
    assert handler(" x ") == "<p>x</p>"
"""


# -- an Action run, and a fresh clone ------------------------------------------------------------


class Project:
    """A repository with a base and a head commit, a bare ``origin``, and the runner's files."""

    def __init__(
        self, tmp_path: Path, repo: Any, gh: FakeGitHub, *, body: str = "Parse before render."
    ) -> None:
        self.tmp_path, self.repo, self.gh = tmp_path, repo, gh
        repo.write("src/app.py", APP)
        repo.write("tests/test_app.py", TEST)
        self.base = repo.commit("base")
        repo.write("src/app.py", APP.replace("request.strip()", "request.strip().lower()"))
        self.head = repo.commit("head")
        self.origin = tmp_path / "origin.git"
        git(tmp_path, "init", "-q", "--bare", str(self.origin))
        repo.git("remote", "add", "origin", str(self.origin))
        repo.git("push", "-q", "origin", "main")
        gh.add_pull(REPO, PR, title="Lower-case the parsed text", body=body, head_sha=self.head)
        self.runner = tmp_path / "runner"
        self.runner.mkdir()
        event = {
            "pull_request": {
                "number": PR,
                "title": "Lower-case the parsed text",
                "body": body,
                "base": {"sha": self.base, "repo": {"full_name": REPO}},
                "head": {"sha": self.head, "repo": {"full_name": REPO}},
            }
        }
        (self.runner / "event.json").write_text(json.dumps(event), encoding="utf-8")

    def run_action(self, **extra: str) -> dict[str, str]:
        env = {
            **self.repo.git_env(),
            **action_env(
                self.runner,
                self.repo.path,
                repository=REPO,
                api_url=self.gh.base_url,
                token=TOKEN,
                **{"KNOWING_PR_BUDGET": "2000", "KNOWING_PR_FAIL_ON_ERROR": "true", **extra},
            ),
        }
        out = io.StringIO()
        assert run_action(env, publisher_factory=self.publisher, out=out) == 0, out.getvalue()
        self.log = out.getvalue()
        manifest = json.loads((self.runner / "temp" / "knowing-pr" / "manifest.json").read_text())
        return {"pack_root": manifest["pack_root"], "log": self.log}

    def publisher(self, settings: Any, number: int) -> Any:
        from knowing_pr.github import CommentPublisher

        return CommentPublisher(
            token=settings.token,
            api_url=settings.api_url,
            repository=settings.repository,
            pr_number=number,
            retry=RetryPolicy(max_attempts=2, max_total_wait_s=1, base_backoff_s=0.01),
            timeout_s=30,  # no busy machine reaches it: a timed-out request would be retried
            seconds_between_writes=None,
        )

    def fresh_clone(self, name: str = "fresh") -> Path:
        """A new clone of origin: no store, no artifact, no notes."""
        path = self.tmp_path / name
        git(self.tmp_path, "clone", "-q", str(self.origin), str(path))
        assert not (path / ".git" / "knowing-pr").exists()
        return path


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd)},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture
def gh() -> Any:
    with FakeGitHub(token=TOKEN, user_login=None, anonymous_reads=True) as server:
        yield server


@pytest.fixture
def project(tmp_path: Path, repo: Any, gh: FakeGitHub) -> Project:
    return Project(tmp_path, repo, gh)


@pytest.fixture
def github_env(monkeypatch: pytest.MonkeyPatch, gh: FakeGitHub) -> pytest.MonkeyPatch:
    """What a reviewer's shell has: the API and the repository; no token (a public repository)."""
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "GITHUB_REPOSITORY", "GITHUB_API_URL", "KNOWING_PR_DB"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_API_URL", gh.base_url)
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    return monkeypatch


# -- the must-shows ------------------------------------------------------------------------------


def test_a_fresh_clone_replays_and_verifies_a_pack_from_its_root_and_the_pr_number(
    project: Project, github_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project.run_action()["pack_root"]
    [comment] = project.gh.comments(REPO, PR)
    [record] = read_request_lines(comment.body)
    assert record["pack_root"] == root and record["head"] == project.head
    assert "params" not in record and len(request_line(record)) <= MAX_REQUEST_LINE_BYTES
    fresh = project.fresh_clone()
    seen = len(project.gh.log)
    capsys.readouterr()

    assert main(["replay", root, "--repo", str(fresh), "--pr", str(PR), "--verify"]) == 0

    out = capsys.readouterr().out
    assert (
        out.rstrip().splitlines()[-1].startswith(f"verified: {root}") and f"pull request {REPO}#{PR}" in out
    )
    assert all(not r.authorized and r.method == "GET" for r in project.gh.log[seen:])  # no token needed
    assert main(["replay", root, "--repo", str(fresh), "--pr", f"#{PR}", "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["pack_root"] == root
    assert "src.app.parse" in {s["qualified_name"] for s in printed["symbols"]}
    assert not (fresh / ".git" / "knowing-pr").exists()  # the clone's store is not created


def test_a_fresh_clone_replays_and_verifies_a_pack_from_a_pushed_git_note(
    project: Project, github_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project.run_action(KNOWING_PR_GIT_NOTES="true", KNOWING_PR_COMMENT="false")["pack_root"]
    assert project.gh.comments(REPO, PR) == []
    assert git(project.origin, "rev-parse", "--verify", NOTES_REF).strip()
    fresh = project.fresh_clone()
    capsys.readouterr()
    assert main(["replay", root, "--repo", str(fresh), "--verify"]) == 2  # the notes are not fetched yet
    err = capsys.readouterr().err
    assert f"git fetch origin {NOTES_REF}:{NOTES_REF}" in err

    git(fresh, "fetch", "-q", "origin", f"{NOTES_REF}:{NOTES_REF}")

    assert main(["replay", root, "--repo", str(fresh), "--verify"]) == 0
    out = capsys.readouterr().out
    assert (
        out.rstrip().splitlines()[-1].startswith(f"verified: {root}")
        and "git note" in out
        and "recorded parameters" in out
    )
    [record] = records_in_note(git(fresh, "notes", f"--ref={NOTES_REF}", "show", project.head))
    assert record["params"]["pack"]["budget_tokens"] == 2000
    assert record["task"] == "Lower-case the parsed text Parse before render."


def test_a_second_pack_on_the_same_commit_joins_the_note(
    project: Project, github_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first = project.run_action(KNOWING_PR_GIT_NOTES="true", KNOWING_PR_COMMENT="false")["pack_root"]
    second = project.run_action(
        KNOWING_PR_GIT_NOTES="true", KNOWING_PR_COMMENT="false", KNOWING_PR_BUDGET="3000"
    )["pack_root"]
    assert first != second
    fresh = project.fresh_clone()
    git(fresh, "fetch", "-q", "origin", f"{NOTES_REF}:{NOTES_REF}")
    note = git(fresh, "notes", f"--ref={NOTES_REF}", "show", project.head)
    assert [r["pack_root"] for r in records_in_note(note)] == [first, second]
    capsys.readouterr()
    for root in (first, second):
        assert main(["replay", root, "--repo", str(fresh), "--verify"]) == 0
        assert capsys.readouterr().out.rstrip().splitlines()[-1].startswith(f"verified: {root}")


def test_a_refused_note_push_is_a_warning_and_the_run_goes_on(project: Project) -> None:
    project.repo.git("remote", "set-url", "origin", str(project.tmp_path / "no-such-remote.git"))
    result = project.run_action(KNOWING_PR_GIT_NOTES="true")
    assert "::warning::could not write the git note" in result["log"]
    assert "contents: write" in result["log"]
    assert len(project.gh.comments(REPO, PR)) == 1


def test_nothing_found_names_every_place_it_looked(
    project: Project, github_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project.run_action()
    fresh = project.fresh_clone()
    unknown = "0" * 64
    capsys.readouterr()

    assert main(["replay", unknown, "--repo", str(fresh), "--pr", str(PR)]) == 2

    err = capsys.readouterr().err
    assert "the store" in err and "there is none in this clone" in err
    assert f"git notes ({NOTES_REF}): not in this clone" in err
    assert f"pull request {REPO}#{PR}" in err and "1 comment(s), 1 of them the Action's" in err
    assert "none of those carries this PackRoot's request" in err
    assert "Traceback" not in err
    assert [line.split(":", 1)[0] for line in err.splitlines()] == ["knowing-pr", "hint"]  # one line each
    assert main(["replay", unknown, "--repo", str(fresh)]) == 2
    assert "not searched (pass --pr" in capsys.readouterr().err


def test_a_long_pr_body_leaves_only_its_digest_in_the_comment_and_replay_reads_it_back(
    tmp_path: Path,
    repo: Any,
    gh: FakeGitHub,
    github_env: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    body = "Parse the request, then render it. " * 200  # ~7,000 characters
    project = Project(tmp_path, repo, gh, body=body)
    root = project.run_action()["pack_root"]
    [record] = read_request_lines(gh.comments(REPO, PR)[0].body)
    assert record["task"] is None and record["task_from"] == "pr"
    assert record["task_sha256"] == task_digest(f"Lower-case the parsed text\n\n{body}")
    fresh = project.fresh_clone()
    capsys.readouterr()

    assert main(["replay", root, "--repo", str(fresh), "--pr", str(PR), "--verify"]) == 0
    assert capsys.readouterr().out.rstrip().splitlines()[-1].startswith(f"verified: {root}")

    gh.repos[REPO][PR].body = "edited since"
    assert main(["replay", root, "--repo", str(fresh), "--pr", str(PR), "--verify"]) == 2
    err = capsys.readouterr().err
    assert record["task_sha256"] in err and "has changed since" in err


def test_other_settings_name_the_digest_and_how_to_get_them(
    project: Project, github_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the workflow wrote a settings file the repository does not have
    (project.repo.path / "ci-settings.yml").write_text("rank: {restart_prob: 0.35}\n", encoding="utf-8")
    root = project.run_action(KNOWING_PR_CONFIG="ci-settings.yml")["pack_root"]
    [record] = read_request_lines(project.gh.comments(REPO, PR)[0].body)
    assert record["config"] == "ci-settings.yml"
    fresh = project.fresh_clone()
    capsys.readouterr()

    assert main(["replay", root, "--repo", str(fresh), "--pr", str(PR), "--verify"]) == 2

    err = capsys.readouterr().err
    assert record["params_digest"] in err and "--config FILE" in err and "--manifest FILE" in err
    assert "this clone's settings" in err and "no ci-settings.yml at" in err
    config = project.tmp_path / "the-same-settings.yml"
    config.write_text("rank: {restart_prob: 0.35}\n", encoding="utf-8")
    assert (
        main(["replay", root, "--repo", str(fresh), "--pr", str(PR), "--config", str(config), "--verify"])
        == 0
    )


def test_the_settings_committed_at_the_head_are_found_without_flags(
    tmp_path: Path,
    repo: Any,
    gh: FakeGitHub,
    github_env: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo.write(".knowing-pr.yml", "pack: {test_share: 0.2}\n")
    project = Project(tmp_path, repo, gh)
    root = project.run_action()["pack_root"]
    fresh = project.fresh_clone()
    git(fresh, "checkout", "-q", project.base)  # the work tree's settings are not the head's
    (fresh / ".knowing-pr.yml").write_text("pack: {test_share: 0.4}\n", encoding="utf-8")
    capsys.readouterr()

    assert main(["replay", root, "--repo", str(fresh), "--pr", str(PR), "--verify"]) == 0

    assert f".knowing-pr.yml at {project.head[:12]}" in capsys.readouterr().out


def test_a_commit_missing_from_the_clone_says_how_to_fetch_it(
    project: Project, github_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project.run_action()["pack_root"]
    fresh = project.tmp_path / "old"
    git(project.tmp_path, "clone", "-q", "--no-local", str(project.origin), str(fresh))
    git(fresh, "reset", "-q", "--hard", project.base)
    git(fresh, "reflog", "expire", "--expire=now", "--all")
    git(fresh, "update-ref", "-d", "refs/remotes/origin/main")
    git(fresh, "gc", "-q", "--prune=now")
    capsys.readouterr()

    assert main(["replay", root, "--repo", str(fresh), "--pr", str(PR)]) == 2

    err = capsys.readouterr().err
    assert f"head commit {project.head[:12]} is not in this clone" in err and "git fetch origin" in err


def test_the_pr_url_names_the_repository_and_a_token_is_sent_when_set(
    project: Project, github_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project.run_action()["pack_root"]
    fresh = project.fresh_clone()
    github_env.delenv("GITHUB_REPOSITORY")
    github_env.setenv("GH_TOKEN", TOKEN)
    url = f"{project.gh.base_url}/{REPO}/pull/{PR}/files"
    reads = project.gh.count("GET", f"/repos/{REPO}/issues/{PR}/comments")
    capsys.readouterr()

    assert main(["replay", root, "--repo", str(fresh), "--pr", url, "--verify"]) == 0

    assert capsys.readouterr().out.rstrip().splitlines()[-1].startswith(f"verified: {root}")
    last = [r for r in project.gh.log if r.path == f"/repos/{REPO}/issues/{PR}/comments"][-1]
    assert last.authorized and project.gh.count("GET", f"/repos/{REPO}/issues/{PR}/comments") == reads + 1


# -- the record ----------------------------------------------------------------------------------


def _manifest(**request: Any) -> dict[str, Any]:
    return {
        "pack_root": "a" * 64,
        "mode": "pr",
        "commit": "b" * 40,
        "token_budget": 8000,
        "params": {"pack": {"budget_tokens": 8000}},
        "request": {
            "mode": "pr",
            "base": "c" * 40,
            "head": "b" * 40,
            "files": [],
            "budget": 8000,
            "format": "markdown",
            "task": None,
            **request,
        },
    }


def test_the_hidden_line_is_escaped_bounded_and_read_back() -> None:
    hostile = "--> <script>alert(1)</script> & <!-- knowing-pr:request {} -->\n::set-output"
    record = comment_record(request_record(_manifest(task=hostile), task_from="pr"))
    line = request_line(record)
    assert line.count("-->") == 1 and line.endswith(" -->") and "<script>" not in line and "\n" not in line
    assert read_request_lines(f"text\n{line}\nmore") == [record]
    assert validate_record(record)["task"] == hostile
    long_task = "word " * 2000
    small = comment_record(request_record(_manifest(task=long_task), task_from="pr"))
    assert small["task"] is None and small["task_sha256"] == task_digest(long_task)
    many = comment_record(request_record(_manifest(files=[f"src/f{i:04}.py" for i in range(400)])))
    assert "files" not in many and len(many["files_sha256"]) == 64
    assert len(request_line(many)) <= MAX_REQUEST_LINE_BYTES
    with pytest.raises(ValueError):
        request_line({"x": "y" * MAX_REQUEST_LINE_BYTES})
    assert read_request_lines("<!-- knowing-pr:request {" + "x" * 5000 + "} -->") == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("v", 2),
        ("pack_root", "A" * 64),
        ("mode", "task"),
        ("head", "main; rm -rf /"),
        ("base", "--upload-pack=evil"),
        ("budget", 10**12),
        ("budget", True),
        ("format", "html"),
        ("files", ["../../etc/passwd"]),
        ("files", ["/abs"]),
        ("task_from", "mail"),
        ("config", "../outside.yml"),
        ("params", {"rank": {}}),  # not what the digest says
        ("task_sha256", "0" * 64),  # not the task's
    ],
)
def test_a_record_from_anyone_is_checked_field_by_field(field: str, value: Any) -> None:
    record = request_record(_manifest(task="fix it"))
    assert validate_record(record) == record
    with pytest.raises(UsageError, match=field):
        validate_record({**record, field: value})


def test_a_note_keeps_one_record_per_pack_newest_last() -> None:
    first = request_record(_manifest())
    second = {**first, "pack_root": "d" * 64}
    text = note_text(note_text(None, first), second)
    assert [r["pack_root"] for r in records_in_note(text)] == ["a" * 64, "d" * 64]
    again = note_text(text, {**first, "budget": 9000})
    assert [(r["pack_root"], r["budget"]) for r in records_in_note(again)] == [
        ("d" * 64, 8000),
        ("a" * 64, 9000),
    ]
    assert records_in_note("not json\n[1]\n" + again) == records_in_note(again)


@pytest.mark.parametrize(
    ("reference", "env", "origin", "expected"),
    [
        ("12", {"GITHUB_REPOSITORY": "o/r"}, None, ("https://api.github.com", "o/r", 12)),
        ("#7", {}, "git@github.com:o/r.git", ("https://api.github.com", "o/r", 7)),
        ("7", {}, "https://github.com/o/r", ("https://api.github.com", "o/r", 7)),
        ("7", {}, "ssh://git@ghe.example:2222/o/r.git", ("https://ghe.example/api/v3", "o/r", 7)),
        ("https://github.com/o/r/pull/3/files", {}, None, ("https://api.github.com", "o/r", 3)),
        ("https://ghe.example/o/r/pull/3", {}, None, ("https://ghe.example/api/v3", "o/r", 3)),
        (
            "3",
            {"GITHUB_REPOSITORY": "o/r", "GITHUB_API_URL": "https://x/api/v3/"},
            None,
            ("https://x/api/v3", "o/r", 3),
        ),
    ],
)
def test_pull_target_reads_the_url_then_the_environment_then_origin(
    reference: str, env: dict[str, str], origin: str | None, expected: tuple[str, str, int]
) -> None:
    target = pull_target(reference, env, origin)
    assert (target.api_url, target.repository, target.number) == expected
    assert target.token is None
    with_token = pull_target(reference, {**env, "GH_TOKEN": "t"}, origin)
    # the token goes only to its own API: GITHUB_API_URL, else the public one
    home = env.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    assert with_token.token == ("t" if expected[0] == home else None)
    assert (with_token.anonymous_because is None) == (expected[0] == home)


@pytest.mark.parametrize(
    "reference", ["twelve", "https://github.com/o/r/issues/3", "file:///o/r/pull/3", "12"]
)
def test_pull_target_refuses_what_names_no_pull_request(reference: str) -> None:
    with pytest.raises(UsageError):
        pull_target(reference, {}, "/a/local/path")


def test_remote_urls_that_name_no_github_repository() -> None:
    assert repository_of_remote("/srv/git/r.git") is None
    assert repository_of_remote("https://host/a/b/c.git") is None
    assert repository_of_remote("git@host:o/r.git") == ("host", "o/r")


def test_the_reader_lists_every_page_and_redacts_the_token() -> None:
    with FakeGitHub(token=TOKEN, page_size=5) as server:
        server.add_pull(REPO, 3)
        for i in range(12):
            server.add_comment(REPO, 3, f"comment {i}", user="someone")
        reader = PullRequestReader(
            pull_target(
                "3",
                {"GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": server.base_url, "GITHUB_TOKEN": TOKEN},
                None,
            )
        )
        assert reader.comment_bodies() == [f"comment {i}" for i in range(12)]
        assert TOKEN not in repr(reader)
        wrong = PullRequestReader(
            pull_target(
                "3",
                {"GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": server.base_url, "GITHUB_TOKEN": "nope"},
                None,
            )
        )
        from knowing_pr.errors import GitHubAuthError

        with pytest.raises(GitHubAuthError, match="401") as caught:
            wrong.comment_bodies()
        assert "GH_TOKEN" in (caught.value.hint or "")


def test_the_digest_in_a_record_is_the_packs_params_digest() -> None:
    manifest = _manifest()
    canonical = json.dumps(manifest["params"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert request_record(manifest)["params_digest"] == hashlib.sha256(canonical.encode()).hexdigest()
