"""run_action end to end: real tmp repositories, the real stand-in GitHub server, real files."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_github import ACTIONS_BOT_LOGIN, FakeGitHub, Fault

from knowing_pr.action import (
    ActionSettings,
    PullRequestContext,
    WorkflowCommandFormatter,
    append_summary,
    ensure_commits,
    read_event,
    run_action,
    write_outputs,
)
from knowing_pr.action.checkout import ensure_merge_base
from knowing_pr.cli import main as cli_main
from knowing_pr.config import default_db_path
from knowing_pr.errors import ConfigError, RepoError
from knowing_pr.github import COMMENT_MARKER, CommentPublisher, RetryPolicy, pack_root_marker
from knowing_pr.model import Node, Pack, ScoredSymbol
from knowing_pr.store import Store

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "ghs_CANARY_action_token_42"
REPO = "octo/widgets"
PR = 12
PACK_ROOT = "5" * 64


# -- helpers -------------------------------------------------------------------------------------


def hand_built_pack(head: str, *, pack_root: str = PACK_ROOT, tokens_used: int = 321) -> Pack:
    node = Node(
        id="0" * 32,
        path="src/app.py",
        name="handler",
        qualified_name="src.app.handler",
        kind="function",
        language="python",
        start_line=1,
        end_line=3,
        signature="def handler()",
        doc="",
        content_hash="e" * 64,
    )
    return Pack(
        pack_root=pack_root,
        mode="pr",
        token_budget=8000,
        tokens_used=tokens_used,
        graph_root="d" * 64,
        commit=head,
        inputs={"files": ["src/app.py"], "base": None, "head": head},
        symbols=[ScoredSymbol(node=node, score=0.9, reason="changed", is_seed=True)],
        edges=[],
    )


class FakeBuilder:
    """A PackBuilder that records its arguments and returns a fixed pack and body."""

    def __init__(
        self, body: str = "## Context\n\n- `handler` in src/app.py", pack_root: str = PACK_ROOT
    ) -> None:
        self.body = body
        self.pack_root = pack_root
        self.calls: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> tuple[Pack, str, str]:
        self.calls.append(kwargs)
        pack = hand_built_pack(kwargs["head"], pack_root=self.pack_root)
        return pack, f"# knowing-pr pack\n\nPackRoot `{pack.pack_root}`\n", self.body


def fast_publisher(gh: FakeGitHub) -> Callable[[ActionSettings, int], CommentPublisher]:
    def factory(settings: ActionSettings, number: int) -> CommentPublisher:
        assert settings.api_url == gh.base_url
        return CommentPublisher(
            token=settings.token,
            api_url=settings.api_url,
            repository=settings.repository,
            pr_number=number,
            retry=RetryPolicy(max_attempts=3, max_total_wait_s=3, base_backoff_s=0.01),
            timeout_s=30,  # no busy machine reaches it: a timed-out request would be retried
            seconds_between_writes=None,
        )

    return factory


def read_outputs(path: Path) -> dict[str, str]:
    """Parse GITHUB_OUTPUT the way the runner does (name<<DELIM ... DELIM)."""
    result: dict[str, str] = {}
    lines = iter(path.read_text(encoding="utf-8").split("\n"))
    for line in lines:
        if not line:
            continue
        name, delimiter = line.split("<<", 1)
        value: list[str] = []
        for candidate in lines:
            if candidate == delimiter:
                break
            value.append(candidate)
        else:
            raise AssertionError(f"unterminated output {name}")
        result[name] = "\n".join(value)
    return result


class Run:
    """One prepared action run: a repository with base and head, an event, runner files."""

    def __init__(self, tmp_path: Path, repo: Any, gh: FakeGitHub, event_name: str = "pull_request") -> None:
        repo.write("src/app.py", "def handler():\n    return 1\n")
        self.base = repo.commit("base")
        repo.write("src/app.py", "def handler():\n    return 2\n")
        self.head = repo.commit("head")
        self.gh = gh
        gh.add_pull(
            REPO, PR, title="Fix $(touch pwned) `id`", body="::set-output name=x::y", head_sha=self.head
        )
        self.runner = tmp_path / "runner"
        self.runner.mkdir()
        self.event_path = self.runner / "event.json"
        self.write_event(event_name)
        self.env: dict[str, str] = {
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": str(self.event_path),
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": gh.base_url,
            "GITHUB_WORKSPACE": str(repo.path),
            "GITHUB_OUTPUT": str(self.runner / "output"),
            "GITHUB_STEP_SUMMARY": str(self.runner / "summary.md"),
            "RUNNER_TEMP": str(self.runner / "temp"),
            "GITHUB_TOKEN": TOKEN,
            "PATH": os.environ.get("PATH", ""),
        }
        self.out = io.StringIO()

    def write_event(self, event_name: str) -> None:
        pull = {
            "number": PR,
            "title": "Fix $(touch pwned) `id`",
            "body": "::set-output name=x::y",
            "base": {"sha": self.base, "repo": {"full_name": REPO}},
            "head": {"sha": self.head, "repo": {"full_name": REPO}},
        }
        if event_name == "workflow_run":
            event: dict[str, Any] = {"workflow_run": {"head_sha": self.head, "pull_requests": []}}
        else:
            event = {"pull_request": pull}
        self.event_path.write_text(json.dumps(event), encoding="utf-8")

    def __call__(self, builder: FakeBuilder | None = None, **env: str) -> int:
        self.out = io.StringIO()
        return run_action(
            {**self.env, **env},
            build_pack=builder or FakeBuilder(),
            publisher_factory=fast_publisher(self.gh),
            out=self.out,
        )

    @property
    def outputs(self) -> dict[str, str]:
        return read_outputs(Path(self.env["GITHUB_OUTPUT"]))

    @property
    def summary(self) -> str:
        return Path(self.env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN, user_login=None) as server:  # an Actions token: /user is 403
        yield server


@pytest.fixture
def run(tmp_path: Path, repo: Any, gh: FakeGitHub) -> Run:
    return Run(tmp_path, repo, gh)


# -- run_action ----------------------------------------------------------------------------------


def test_pull_request_run_comments_and_writes_outputs_summary_manifest(run: Run) -> None:
    builder = FakeBuilder()

    assert run(builder) == 0

    [call] = builder.calls
    assert (call["base"], call["head"], call["budget_tokens"]) == (run.base, run.head, 8000)
    assert call["task"] == "Fix $(touch pwned) `id`\n\n::set-output name=x::y"
    [comment] = run.gh.comments(REPO, PR)
    assert comment.user == ACTIONS_BOT_LOGIN
    assert comment.body.startswith(f"{COMMENT_MARKER}\n{pack_root_marker(PACK_ROOT)}\n")
    outputs = run.outputs
    assert outputs["pack-root"] == PACK_ROOT
    assert outputs["tokens-used"] == "321"
    assert outputs["comment-url"].endswith(f"#issuecomment-{comment.id}")
    manifest = json.loads(Path(outputs["manifest-path"]).read_text(encoding="utf-8"))
    assert manifest["pack_root"] == PACK_ROOT
    assert manifest["symbols"][0]["node"]["qualified_name"] == "src.app.handler"
    assert manifest["request"]["task"] == "Fix $(touch pwned) `id` ::set-output name=x::y"
    assert Path(outputs["manifest-path"]).parent == Path(run.env["RUNNER_TEMP"]) / "knowing-pr"
    contract = json.loads((Path(outputs["manifest-path"]).parent / "pack.json").read_text(encoding="utf-8"))
    assert contract["symbols"][0]["qualified_name"] == "src.app.handler"
    assert f"PackRoot `{PACK_ROOT}`" in run.summary
    assert TOKEN not in run.out.getvalue()
    assert set(outputs) == {"pack-root", "tokens-used", "manifest-path", "comment-url", "reviewers"}
    assert not list(Path(run.env["GITHUB_WORKSPACE"]).rglob("pwned"))


def test_second_run_with_new_pack_root_edits_and_rerun_writes_nothing(run: Run) -> None:
    assert run() == 0
    first_id = run.gh.comments(REPO, PR)[0].id
    assert run(FakeBuilder(pack_root="6" * 64)) == 0
    assert [c.id for c in run.gh.comments(REPO, PR)] == [first_id]
    assert pack_root_marker("6" * 64) in run.gh.comments(REPO, PR)[0].body
    writes = run.gh.writes()

    assert run(FakeBuilder(pack_root="6" * 64)) == 0

    assert run.gh.writes() == writes
    assert "comment unchanged" in run.out.getvalue()


def test_forbidden_comment_falls_back_to_summary_with_a_warning(run: Run) -> None:
    run.gh.script(
        "POST",
        "/repos/*/issues/*/comments",
        Fault(403, {"message": "Resource not accessible by integration"}),
    )

    assert run() == 0

    assert run.gh.comments(REPO, PR) == []
    assert f"PackRoot `{PACK_ROOT}`" in run.summary
    assert "could not comment on this pull request" in run.summary
    warnings = [line for line in run.out.getvalue().splitlines() if line.startswith("::warning::")]
    assert len(warnings) == 1 and "Resource not accessible by integration" in warnings[0]
    assert run.outputs["comment-url"] == ""
    assert run.outputs["pack-root"] == PACK_ROOT


@pytest.mark.parametrize(
    ("fail_on_error", "status", "command"), [("false", 0, "::warning::"), ("true", 1, "::error::")]
)
def test_bad_token_follows_the_fail_on_error_policy(
    run: Run, fail_on_error: str, status: int, command: str
) -> None:
    assert run(GITHUB_TOKEN="ghs_wrong", KNOWING_PR_FAIL_ON_ERROR=fail_on_error) == status

    [line] = [x for x in run.out.getvalue().splitlines() if x.startswith(command)]
    assert "the GitHub token was rejected (401)" in line
    assert run.outputs["pack-root"] == PACK_ROOT  # the summary and outputs survive the failure
    assert run.gh.comments(REPO, PR) == []


def test_missing_token_names_the_permissions_block(run: Run) -> None:
    assert run(GITHUB_TOKEN="", KNOWING_PR_FAIL_ON_ERROR="true") == 1

    assert "permissions: pull-requests: write" in run.out.getvalue()
    assert run.gh.count() == 0


def test_body_too_long_triggers_one_smaller_comment(run: Run) -> None:
    run.gh.script(
        "POST",
        "/repos/*/issues/*/comments",
        Fault(
            422,
            {
                "message": "Validation Failed",
                "errors": [{"message": "Body is too long (maximum is 65536 characters)"}],
            },
        ),
    )

    assert run(FakeBuilder(body="x" * 60_000)) == 0

    [comment] = run.gh.comments(REPO, PR)
    assert len(comment.body.encode()) <= 65536 // 2
    assert PACK_ROOT in comment.body and COMMENT_MARKER in comment.body
    assert run.gh.count("POST", "/repos/*/issues/*/comments") == 2


def test_comment_false_writes_summary_and_handoff_only(run: Run) -> None:
    assert run(KNOWING_PR_COMMENT="false") == 0

    assert run.gh.count() == 0
    handoff = json.loads((Path(run.env["RUNNER_TEMP"]) / "knowing-pr" / "pr-comment.json").read_text())
    assert (handoff["number"], handoff["head_sha"], handoff["pack_root"]) == (PR, run.head, PACK_ROOT)


def test_workflow_run_posts_the_handed_over_comment(run: Run) -> None:
    assert run(KNOWING_PR_COMMENT="false") == 0  # the pull_request half (read-only token)
    run.write_event("workflow_run")
    never = FakeBuilder()

    assert run(never, GITHUB_EVENT_NAME="workflow_run") == 0

    assert never.calls == []
    [comment] = run.gh.comments(REPO, PR)
    assert pack_root_marker(PACK_ROOT) in comment.body
    assert run.outputs["comment-url"].endswith(str(comment.id))


def test_workflow_run_refuses_a_handoff_for_a_moved_pull_request(run: Run) -> None:
    assert run(KNOWING_PR_COMMENT="false") == 0
    run.gh.repos[REPO][PR].head_sha = "f" * 40  # a new push since the artifact was built
    run.write_event("workflow_run")

    assert run(GITHUB_EVENT_NAME="workflow_run", KNOWING_PR_FAIL_ON_ERROR="true") == 1

    assert "has moved on" in run.out.getvalue()
    assert run.gh.comments(REPO, PR) == []


def test_bad_budget_is_a_clear_config_error(run: Run) -> None:
    assert run(KNOWING_PR_BUDGET="lots", KNOWING_PR_FAIL_ON_ERROR="true") == 1
    assert "KNOWING_PR_BUDGET must be a positive whole number" in run.out.getvalue()


# -- settings and events -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("KNOWING_PR_BUDGET", "0"),
        ("KNOWING_PR_BUDGET", "-5"),
        ("KNOWING_PR_BUDGET", "١٢"),  # unicode digits
        ("KNOWING_PR_FORMAT", "html"),
        ("KNOWING_PR_COMMENT", "maybe"),
        ("KNOWING_PR_BASE", "--upload-pack=evil"),
        ("KNOWING_PR_HEAD", "main\nrm"),
        ("GITHUB_REPOSITORY", "a/b/c"),
    ],
)
def test_settings_reject_bad_values(name: str, value: str) -> None:
    with pytest.raises(ConfigError):
        ActionSettings.from_env({name: value})


def test_settings_defaults_and_token_hidden_from_repr(tmp_path: Path) -> None:
    settings = ActionSettings.from_env({"GITHUB_TOKEN": TOKEN, "GITHUB_WORKSPACE": str(tmp_path)})
    assert (settings.budget_tokens, settings.output_format, settings.comment) == (8000, "markdown", True)
    assert (settings.fail_on_error, settings.task_from_pr, settings.api_url) == (
        False,
        True,
        "https://api.github.com",
    )
    assert settings.out_dir == tmp_path / ".knowing-pr"
    assert TOKEN not in repr(settings)


def _event(tmp_path: Path, name: str, payload: dict[str, Any]) -> PullRequestContext:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    return read_event(ActionSettings.from_env({"GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": str(path)}))


def test_read_event_kinds(tmp_path: Path) -> None:
    a, b = "a" * 40, "b" * 40
    fork = _event(
        tmp_path,
        "pull_request_target",
        {
            "pull_request": {
                "number": 3,
                "title": "t",
                "base": {"sha": a, "repo": {"full_name": "o/r"}},
                "head": {"sha": b, "repo": {"full_name": "someone/r"}},
            }
        },
    )
    assert (fork.number, fork.base, fork.head, fork.is_fork, fork.task_text()) == (3, a, b, True, "t")
    run = _event(
        tmp_path,
        "workflow_run",
        {"workflow_run": {"head_sha": b, "pull_requests": [{"number": 4, "base": {"sha": a}}]}},
    )
    assert (run.number, run.base, run.head) == (4, a, b)
    dispatch = _event(tmp_path, "workflow_dispatch", {"inputs": {"pr": "5", "base": "main", "head": b}})
    assert (dispatch.number, dispatch.base, dispatch.head) == (5, "main", b)
    push = _event(tmp_path, "push", {"before": "0" * 40, "after": b})
    assert (push.number, push.base, push.head) == (None, None, b)


# -- workflow commands, outputs, summary ---------------------------------------------------------


def _format(level: int, message: str) -> str:
    import logging

    return WorkflowCommandFormatter("%(message)s").format(
        logging.LogRecord("x", level, "f", 1, message, None, None)
    )


def test_formatter_neutralises_workflow_commands() -> None:
    import logging

    hostile = "title ::add-mask::secret\n::error::injected 100%"
    warning = _format(logging.WARNING, hostile)
    assert warning == "::warning::title ::add-mask::secret%0A::error::injected 100%25"
    assert "\n" not in warning
    info = _format(logging.INFO, "::set-output name=x::y").splitlines()
    token = info[0].removeprefix("::stop-commands::")
    assert re.fullmatch(r"[0-9a-f]{32}", token)
    assert info == [f"::stop-commands::{token}", "::set-output name=x::y", f"::{token}::"]
    assert _format(logging.DEBUG, "a\nb") == "::debug::a%0Ab"
    assert _format(logging.INFO, "plain") == "plain"


def test_outputs_survive_values_with_newlines_and_delimiter_lookalikes(tmp_path: Path) -> None:
    path = tmp_path / "out"
    values = {"a": "line1\nline2", "b": "ghadelimiter_x\nEOF", "c": ""}
    write_outputs(path, values)
    assert read_outputs(path) == values


def test_summary_is_capped_and_closes_open_blocks(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    path.write_text("earlier step\n", encoding="utf-8")
    body = "<details><summary>x</summary>\n\n```python\n" + "print('é')\n" * 200_000
    append_summary(path, body, max_bytes=1 << 20)

    text = path.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) <= 1 << 20
    assert text.startswith("earlier step\n")
    assert "```\n</details>\n" in text and "truncated" in text


# -- shallow checkouts ---------------------------------------------------------------------------


def test_shallow_checkout_fetches_the_missing_base(tmp_path: Path, repo: Any) -> None:
    repo.write("a.txt", "1\n")
    base = repo.commit("one")
    repo.write("a.txt", "2\n")
    head = repo.commit("two")
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "--quiet", "--depth=1", f"file://{repo.path}", str(clone)],
        env=repo.git_env(),
        check=True,
        capture_output=True,
    )
    env = repo.git_env()
    assert (
        subprocess.run(["git", "-C", str(clone), "cat-file", "-e", base], env=env, check=False).returncode
        != 0
    )

    ensure_commits(clone, [base, head], depth=5, env=env)

    assert (
        subprocess.run(["git", "-C", str(clone), "cat-file", "-e", base], env=env, check=False).returncode
        == 0
    )
    with pytest.raises(RepoError) as caught:
        ensure_commits(clone, ["1" * 40], depth=5, env=env)
    assert "fetch-depth: 0" in (caught.value.hint or "")


def test_shallow_checkout_is_deepened_until_the_change_start_is_found(tmp_path: Path, repo: Any) -> None:
    repo.write("a.txt", "0\n")
    repo.commit("root")
    repo.branch("feature")
    for n in range(6):  # main moves on after the branch was cut
        repo.write("main.txt", f"{n}\n")
        repo.commit(f"main {n}")
    base = repo.head()
    repo.checkout("feature")
    repo.write("a.txt", "feature\n")
    head = repo.commit("feature")
    clone = tmp_path / "clone"
    env = repo.git_env()
    subprocess.run(
        ["git", "clone", "--quiet", "--depth=1", "--no-single-branch", f"file://{repo.path}", str(clone)],
        env=env,
        check=True,
        capture_output=True,
    )

    def merge_base() -> str:
        done = subprocess.run(
            ["git", "-C", str(clone), "merge-base", base, head], env=env, capture_output=True, text=True
        )
        return done.stdout.strip()

    ensure_commits(clone, [base, head], depth=1, env=env)
    assert merge_base() == ""  # both ends are here, their common ancestor is not

    assert ensure_merge_base(clone, base, head, deepen=2, rounds=1, env=env) is True
    assert merge_base() == repo.git("merge-base", base, head).strip()


# -- action.yml and the workflows ----------------------------------------------------------------


def _load(path: str) -> dict[str, Any]:
    data = yaml.safe_load((ROOT / path).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_action_yml_passes_inputs_only_through_env_and_pins_actions() -> None:
    action = _load("action.yml")
    steps = action["runs"]["steps"]
    for step in steps:
        assert "${{" not in step.get("run", ""), step
        if "uses" in step:
            assert re.fullmatch(r"[\w./-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
    [run_step] = [s for s in steps if s.get("id") == "run"]
    passed = " ".join(run_step["env"].values())
    for name in action["inputs"]:
        assert f"inputs.{name} }}}}" in passed, name
    for name, output in action["outputs"].items():
        assert output["value"] == f"${{{{ steps.run.outputs.{name} }}}}"
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"


def test_workflows_use_least_privilege() -> None:
    ci = _load(".github/workflows/ci.yml")
    assert ci["permissions"] == {"contents": "read"}
    pr = _load(".github/workflows/pr-context.yml")
    triggers = pr[True]  # yaml reads the key `on` as True
    assert list(triggers) == ["pull_request"]
    assert pr["permissions"] == {"contents": "read", "pull-requests": "write"}
    checkout = pr["jobs"]["context"]["steps"][0]
    assert checkout["with"] == {
        "ref": "${{ github.event.pull_request.head.sha }}",  # conflicted PRs have no merge commit
        "fetch-depth": 0,
        "persist-credentials": False,
    }
    assert any(step.get("uses") == "./" for step in pr["jobs"]["context"]["steps"])


_PIPELINE_READY = (
    importlib.util.find_spec("knowing_pr.pipeline") is not None
    and importlib.util.find_spec("knowing_pr.render") is not None
    and hasattr(importlib.import_module("knowing_pr.pipeline"), "build_pr_pack")
)


@pytest.mark.skipif(
    not _PIPELINE_READY, reason="knowing_pr.pipeline.build_pr_pack and knowing_pr.render not built yet"
)
def test_real_pipeline_in_process(run: Run) -> None:
    out = io.StringIO()
    env = {**run.env, "KNOWING_PR_BUDGET": "2000"}

    status = run_action(env, publisher_factory=fast_publisher(run.gh), out=out)

    assert status == 0, out.getvalue()
    outputs = run.outputs
    manifest = json.loads(Path(outputs["manifest-path"]).read_text(encoding="utf-8"))
    assert manifest["pack_root"] == outputs["pack-root"]
    assert manifest["inputs"]["base"] == run.base and manifest["inputs"]["head"] == run.head
    assert "src/app.py" in manifest["inputs"]["files"]
    # the artifact is the manifest the pipeline recorded, and it replays on its own
    workspace = run.env["GITHUB_WORKSPACE"]
    with Store.open(default_db_path(Path(workspace) / ".git")) as store:
        assert store.load_pack(outputs["pack-root"]) == manifest
    verify = ["replay", outputs["pack-root"], "--repo", workspace, "--manifest", outputs["manifest-path"]]
    assert cli_main([*verify, "--verify"]) == 0
    assert int(outputs["tokens-used"]) <= 2000
    [comment] = run.gh.comments(REPO, PR)
    assert pack_root_marker(outputs["pack-root"]) in comment.body
    assert "handler" in comment.body
    assert len(comment.body.encode("utf-8")) <= 65536
    # the second run on the same commits writes nothing
    writes = run.gh.writes()
    assert run_action(env, publisher_factory=fast_publisher(run.gh), out=io.StringIO()) == 0
    assert run.gh.writes() == writes


@pytest.mark.skipif(
    not _PIPELINE_READY, reason="knowing_pr.pipeline.build_pr_pack and knowing_pr.render not built yet"
)
def test_a_removed_setting_in_the_config_is_one_warning_in_the_log(run: Run, tmp_path: Path) -> None:
    """A workflow's settings file written for an older release still packs: the removed key is
    named once, as a warning annotation, and the comment is posted."""
    config = tmp_path / "old.yml"
    config.write_text("files:\n  budget_share: 0.3\n", encoding="utf-8")
    out = io.StringIO()
    env = {**run.env, "KNOWING_PR_CONFIG": str(config)}
    assert run_action(env, publisher_factory=fast_publisher(run.gh), out=out) == 0, out.getvalue()
    [warning] = [line for line in out.getvalue().splitlines() if "budget_share" in line]
    assert warning.startswith("::warning::") and "removed in release 0.5.0" in warning
    assert len(run.gh.comments(REPO, PR)) == 1


def _substitute(text: str, values: dict[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        expression = match.group(1).strip()
        alternatives = [part.strip() for part in expression.split("||")]
        return next((values[a] for a in alternatives if values.get(a)), "")

    return re.sub(r"\$\{\{(.*?)\}\}", value, text)


@pytest.mark.skipif(
    not _PIPELINE_READY, reason="knowing_pr.pipeline.build_pr_pack and knowing_pr.render not built yet"
)
def test_action_yml_run_steps_end_to_end(run: Run) -> None:
    action = _load("action.yml")
    values = {"github.token": TOKEN, "github.action_path": str(ROOT), "runner.os": "Linux"}
    for name, spec in action["inputs"].items():  # defaults may be expressions themselves
        values[f"inputs.{name}"] = _substitute(str(spec.get("default", "")), values)
    runner_env = {**run.env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    ran = 0
    for step in action["runs"]["steps"]:
        if "run" not in step or step.get("name") == "Install knowing-pr":
            continue  # uses: steps are the runner's; the package is already installed here
        step_env = {k: _substitute(str(v), values) for k, v in step.get("env", {}).items()}
        result = subprocess.run(
            ["bash", "-e", "-c", step["run"]],
            cwd=run.env["GITHUB_WORKSPACE"],
            env={**runner_env, **step_env},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert TOKEN not in result.stdout + result.stderr
        ran += 1
    assert ran == 1
    outputs = run.outputs
    assert re.fullmatch(r"[0-9a-f]{64}", outputs["pack-root"])
    assert int(outputs["tokens-used"]) <= 8000
    assert outputs["comment-url"]
    assert outputs["pack-root"] in run.summary
    [comment] = run.gh.comments(REPO, PR)
    assert pack_root_marker(outputs["pack-root"]) in comment.body
