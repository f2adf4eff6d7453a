"""The Action's comment opens with what moved since the previous push: a pull request pushed to
several times, each push run through ``run_action`` against the stand-in GitHub API, in a real
repository; the previous push's pack is rebuilt from the request line of our own comment."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import GitCommandError
from fake_github import FakeGitHub, action_env
from pushes import PUSH_2_MOVED, build_base, push_1, push_2, push_3

from knowing_pr.action import run_action
from knowing_pr.cli import main
from knowing_pr.diffing import PackComparison
from knowing_pr.diffing.packs import CallSiteKey, ListedTest, Moved, SymbolKey
from knowing_pr.github import COMMENT_MARKER, CommentPublisher, RetryPolicy
from knowing_pr.render.comment import read_request_lines, request_line
from knowing_pr.render.since import read_since_lines, since_section

TOKEN = "ghs_CANARY_since_token_3"
REPO = "octo/widgets"
PR = 7
OPENING = "**Since the previous push"


class PullRequest:
    """One pull request whose head moves: each ``push`` runs the Action on the new head."""

    def __init__(self, tmp_path: Path, repo: Any, gh: FakeGitHub) -> None:
        self.repo, self.gh = repo, gh
        self.base = build_base(repo)
        self.pull = gh.add_pull(
            REPO, PR, title="Tags for the view", body="Render with a tag.", head_sha=self.base
        )
        self.runner = tmp_path / "runner"
        self.runner.mkdir()
        self.log = ""

    def push(self, head: str, build_pack: Any = None, **extra: str) -> str:
        """Run the Action for ``head``; the body of our one comment afterwards."""
        self.pull.head_sha = head
        event = {
            "pull_request": {
                "number": PR,
                "title": self.pull.title,
                "body": self.pull.body,
                "base": {"sha": self.base, "repo": {"full_name": REPO}},
                "head": {"sha": head, "repo": {"full_name": REPO}},
            }
        }
        (self.runner / "event.json").write_text(json.dumps(event), encoding="utf-8")
        env = {
            **self.repo.git_env(),
            **action_env(
                self.runner,
                self.repo.path,
                repository=REPO,
                api_url=self.gh.base_url,
                token=TOKEN,
                **{"KNOWING_PR_FAIL_ON_ERROR": "true", **extra},
            ),
        }
        out = io.StringIO()
        ran = run_action(env, build_pack=build_pack, publisher_factory=self.publisher, out=out)
        assert ran == 0, out.getvalue()
        self.log = out.getvalue()
        ours = [c for c in self.gh.comments(REPO, PR) if c.user != "mallory"]
        assert len(ours) == 1
        return ours[0].body

    def publisher(self, settings: Any, number: int) -> CommentPublisher:
        return CommentPublisher(
            token=settings.token,
            api_url=settings.api_url,
            repository=settings.repository,
            pr_number=number,
            retry=RetryPolicy(max_attempts=2, max_total_wait_s=1, base_backoff_s=0.01),
            timeout_s=30,
            seconds_between_writes=None,
        )


def since_of(body: str) -> list[str]:
    """The comment's opening section: the lines after its hidden first lines, before the heading."""
    lines = body.split("\n")
    start = next(i for i, line in enumerate(lines) if not line.startswith("<!--"))
    end = next(i for i, line in enumerate(lines) if line.startswith("### "))
    return [line for line in lines[start:end] if line]


@pytest.fixture
def gh() -> Any:
    with FakeGitHub(token=TOKEN, user_login=None) as server:
        yield server


def test_each_push_opens_the_comment_with_what_moved_since_the_previous_push(
    tmp_path: Path,
    repo: Any,
    gh: FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pr = PullRequest(tmp_path, repo, gh)
    first = push_1(repo)
    body = pr.push(first)
    assert OPENING not in body and read_since_lines(body) == []  # the first push: nothing to compare

    # someone else's comment that looks like ours names another pack: never read
    fake = {**read_request_lines(body)[0], "pack_root": "e" * 64}
    gh.add_comment(REPO, PR, f"{COMMENT_MARKER}\n{request_line(fake)}\n", user="mallory")
    second = push_2(repo)
    body = pr.push(second)
    assert since_of(body) == [
        f"**Since the previous push (`{first[:7]}`):** 2 symbols newly changed, 1 call site newly not "
        "updated, 1 test added to the tests to run, 1 file newly co-changed.",
        *PUSH_2_MOVED,
    ]
    [compared] = read_since_lines(body)
    assert compared["head"] == first and "params" not in compared
    # the comment names both packs: `diff --pr` rebuilds them from it alone (no store, no notes)
    [own] = read_request_lines(body)
    argv = ["diff", compared["pack_root"], own["pack_root"], "--repo", str(repo.path)]
    empty_store = ["--db", str(tmp_path / "none" / "index.sqlite"), "--pr", str(PR), "--format", "json"]
    monkeypatch.setenv("GITHUB_API_URL", gh.base_url)
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    capsys.readouterr()
    assert main([*argv, *empty_store]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["tests_added"] == [{"path": "tests/test_view.py", "name": "test_render_with_a_tag"}]
    assert printed["before"]["commit"] == first and printed["after"]["commit"] == second

    third = push_3(repo)
    body = pr.push(third)
    assert since_of(body) == [
        f"**Since the previous push (`{second[:7]}`):** 1 symbol newly changed, 1 call site now updated.",
        "- Newly changed (1):",
        "  - `page` in `src/page.py`",
        "- Call sites now updated (1):",
        "  - `src/page.py` (`page` → `render`)",
    ]
    assert pr.push(third) == body  # a re-run of the same push compares with the same pack
    assert "comment unchanged" in pr.log

    repo.write("NOTES.txt", "Nothing for the code.\n")
    quiet = repo.commit("a note")
    body = pr.push(quiet)
    assert since_of(body) == [
        f"**Since the previous push (`{third[:7]}`):** nothing moved: the same symbols changed, the same "
        "call sites not updated, the same tests to run and the same co-changed files."
    ]


def test_a_force_push_away_from_the_previous_head_is_one_honest_line(
    tmp_path: Path, repo: Any, gh: FakeGitHub
) -> None:
    pr = PullRequest(tmp_path, repo, gh)
    first = push_1(repo)
    gone = push_2(repo)
    pr.push(gone)
    # the branch is rewritten from ``first`` and the old head is nowhere any more
    repo.git("reset", "-q", "--hard", first)
    repo.repo.index.read(True)
    rewritten = push_3(repo)
    repo.git("update-ref", "-d", "ORIG_HEAD")
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    with pytest.raises(GitCommandError):
        repo.git("cat-file", "-e", gone)

    body = pr.push(rewritten)

    assert since_of(body) == [
        f"**Since the previous push:** `{gone[:7]}` is not in this checkout (force-pushed away, or not "
        "fetched), so nothing is compared."
    ]
    assert "### knowing-pr" in body and read_request_lines(body)[0]["head"] == rewritten
    assert pr.push(rewritten) == body  # and a re-run says the same


def test_a_previous_pack_that_does_not_rebuild_is_one_honest_line_and_a_warning(
    tmp_path: Path, repo: Any, gh: FakeGitHub
) -> None:
    from test_action import FakeBuilder  # a pack no code yields: its request cannot be replayed

    pr = PullRequest(tmp_path, repo, gh)
    first = push_1(repo)
    pr.push(first, build_pack=FakeBuilder())
    second = push_2(repo)

    body = pr.push(second)  # fail-on-error is on: the step still succeeds

    assert since_of(body) == [
        f"**Since the previous push:** `{first[:7]}` could not be rebuilt here (see the job log), so "
        "nothing is compared."
    ]
    assert "::warning::" in pr.log and "could not rebuild the previous push's pack" in pr.log
    assert "### knowing-pr · 3 symbols changed" in body


def test_the_section_is_escaped_and_fits_its_bytes() -> None:
    hostile = "src/`@octocat`\u202e#1 www.x.io\nA.py"
    names = tuple(SymbolKey(f"{hostile}{n}", f"fn_{n}\u200b") for n in range(300))
    comparison = PackComparison(
        before_root="a" * 64,
        after_root="b" * 64,
        before_commit="c" * 40,
        after_commit="d" * 40,
        changed=Moved(added=names),
        changed_again=(),
        not_updated=Moved(added=(CallSiteKey(hostile, "", "<script>"),)),
        tests=Moved(removed=(ListedTest(hostile, "test `x`"),)),
        coupled=Moved(added=(hostile,)),
    )

    text = since_section(comparison, "c" * 40, 4096)

    assert len(text.encode("utf-8")) <= 4096
    assert "\u202e" not in text and "\u200b" not in text and "\\u202e" in text and "\\u200b" in text
    assert all(line.startswith(("- ", "  - ")) for line in text.split("\n")[2:])  # a list, one name a line
    assert "- Newly changed (300):" in text and "more" in text
    assert all(line.count(" in `") <= 1 for line in text.split("\n")[2:])  # never a run of names
    for line in text.split("\n")[2:]:  # every name inside a code span: nothing links, mentions or renders
        outside = "".join(part for i, part in enumerate(line.split("``")) if i % 2 == 0)
        assert "@octocat" not in outside.replace("`@octocat`", "")
    assert "module level" in text and "`<script>`" in text


def test_a_module_s_own_code_is_named_once_by_its_path() -> None:
    module, function = SymbolKey("docs/conf.py", "docs/conf.py"), SymbolKey("src/view.py", "render")
    comparison = PackComparison(
        before_root="a" * 64,
        after_root="b" * 64,
        before_commit="c" * 40,
        after_commit="d" * 40,
        changed=Moved(added=(module, function)),
        changed_again=(),
        not_updated=Moved(),
        tests=Moved(),
        coupled=Moved(),
    )

    text = since_section(comparison, "c" * 40, 4096)

    assert text.split("\n")[2:] == [
        "- Newly changed (2):",
        "  - `docs/conf.py` (module-level code)",
        "  - `render` in `src/view.py`",
    ]


def test_a_full_comment_with_the_largest_section_and_since_line_stays_under_githubs_limit() -> None:
    from knowing_pr.action.run import REQUEST_LINE_RESERVE, _finished
    from knowing_pr.action.since import SINCE_RESERVE, SINCE_SECTION_BYTES, Since
    from knowing_pr.model import Node, Pack, ScoredSymbol
    from knowing_pr.render import render_comment
    from knowing_pr.render.comment import MAX_REQUEST_LINE_BYTES

    def symbol(n: int) -> ScoredSymbol:
        node = Node(
            id=f"{n:032x}",
            path=f"src/{'deep/' * 20}module_{n}.py",
            name=f"handler_{n}",
            qualified_name=f"src.module_{n}.handler_{n}",
            kind="function",
            language="python",
            start_line=1,
            end_line=3,
            signature=f"def handler_{n}({', '.join(f'argument_{i}' for i in range(30))})",
            doc="Does a thing. " * 20,
            content_hash=f"{n:064x}",
        )
        return ScoredSymbol(node=node, score=1.0 / (n + 1), reason="changed" if n < 5 else "caller")

    pack = Pack(
        pack_root="a" * 64,
        mode="pr",
        token_budget=200_000,
        tokens_used=190_000,
        graph_root="d" * 64,
        commit="c" * 40,
        inputs={"files": ["src/app.py"]},
        symbols=[symbol(n) for n in range(1500)],
        edges=[],
    )
    body = render_comment(pack, max_bytes=65536 - REQUEST_LINE_RESERVE - SINCE_RESERVE)

    def largest_record(root: str) -> dict[str, Any]:
        record: dict[str, Any] = {"v": 1, "pack_root": root, "head": "c" * 40, "task": "<&>" * 50}
        while True:
            longer = {**record, "task": record["task"] + "x"}
            try:
                request_line(longer)
            except ValueError:
                return record
            record = longer

    hostile = "src/`@octocat`\u202e#1\nA.py"
    comparison = PackComparison(
        "b" * 64,
        "a" * 64,
        "e" * 40,
        "c" * 40,
        Moved(added=tuple(SymbolKey(f"{hostile}{n}", f"f{n}") for n in range(500))),
        (),
        Moved(),
        Moved(),
        Moved(),
    )
    section = since_section(comparison, "e" * 40, SINCE_SECTION_BYTES)
    line_record = largest_record("a" * 64)
    assert len(request_line(line_record)) > MAX_REQUEST_LINE_BYTES - 8

    assert len(body.encode("utf-8")) > 65536 - REQUEST_LINE_RESERVE - SINCE_RESERVE - 1000  # it is full
    full = _finished(body, Since(section, largest_record("b" * 64)), line_record)

    assert len(full.encode("utf-8")) <= 65536
    assert full.startswith("<!-- knowing-pr -->\n") and section in full
    assert read_since_lines(full)[0]["pack_root"] == "b" * 64
    assert read_request_lines(full)[0]["pack_root"] == "a" * 64
