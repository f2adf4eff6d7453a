"""Who should review: blame of the changed symbols at the base + the mined history, CODEOWNERS
from the base commit, the PR's author, bots and mass edits left out (issue 31).

One repository built in tmp_path with known authors: Alice wrote ``src/pay.py``, Bob changed
``charge`` four times, Carol changed ``refund``, a bot and two mass edits (one over the file
limit, one listed in ``.git-blame-ignore-revs``) touched ``charge`` last; Quinn, the PR's author,
changed ``charge`` once at the base; the PR (by Pat) changes ``charge`` and its CODEOWNERS.
"""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from knowing_pr.config import ReviewerParams, Settings, load_settings
from knowing_pr.git import GitRepo
from knowing_pr.history import landing_order
from knowing_pr.history.codeowners import parse_codeowners
from knowing_pr.history.reviewers import Touch, github_login, ignored_revisions, is_bot, suggest_reviewers
from knowing_pr.model import Reviewer
from knowing_pr.pipeline import PrRequest, build_pr_pack, open_workspace
from knowing_pr.pipeline.reviewers import blame_targets, reviewer_evidence, score_evidence
from knowing_pr.render import render_comment, render_pack
from knowing_pr.render.reviewers import markdown_reviewers, reviewers_output
from tests.conftest import RepoBuilder

ALICE = ("Alice Archer", "alice@example.com")
OLGA = ("Olga Ops", "olga@example.com")
BOB = ("Bob Baker", "Bob@Example.com")
CAROL = ("Carol Cole", "carol@example.com")
QUINN = ("Quinn Quill", "12345+quinnq@users.noreply.github.com")
PAT = ("Pat Pull", "pat@example.com")
BOT = ("dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com")
FORMATTER = ("Fred Format", "fred@example.com")
IGNORED = ("Ivy Ignored", "ivy@example.com")
#: the test's file limit for a mass edit (the default is 50)
MAX_FILES = 5


def _pay(charge_body: str, refund_body: str = "    return amount\n") -> str:
    return f"def charge(amount):\n{charge_body}    return amount\n\n\ndef refund(amount):\n{refund_body}"


def _mass_edit(repo: RepoBuilder, charge_body: str, author: tuple[str, str], files: int) -> str:
    repo.write("src/pay.py", _pay(charge_body))
    for index in range(files):
        repo.write(f"src/gen_{index}.py", f"VALUE = {index}  # {author[0]}\n")
    return repo.commit("reformat everything", author=author)


@dataclasses.dataclass
class Scenario:
    repo: RepoBuilder
    base: str
    head: str
    ignored_sha: str


@pytest.fixture
def scenario(make_repo: Callable[..., RepoBuilder]) -> Scenario:
    repo = make_repo()
    repo.write(".github/CODEOWNERS", "/src/ @acme/everyone\n/src/pay.py @acme/payments\n*.md @docs-writer\n")
    repo.commit("owners", author=OLGA)
    repo.write("src/pay.py", _pay("    amount = amount\n"))
    repo.write("src/app.py", "from src.pay import charge\n\n\ndef checkout():\n    return charge(1)\n")
    repo.write("README.md", "# shop\n")
    repo.commit("start", author=ALICE)
    for step in range(4):
        repo.write("src/pay.py", _pay(f"    amount = amount + {step}\n"))
        repo.commit(f"charge {step}", author=BOB)
    repo.write("src/pay.py", _pay("    amount = amount + 2\n", "    amount = -amount\n    return amount\n"))
    repo.commit("refund sign", author=CAROL)
    repo.write(
        "src/pay.py", _pay("    amount = amount + 2  # q\n", "    amount = -amount\n    return amount\n")
    )
    repo.commit("quinn's note", author=QUINN)
    repo.write(
        "src/pay.py", _pay("    amount = amount + 2  # bot\n", "    amount = -amount\n    return amount\n")
    )
    repo.commit("bump", author=BOT)
    _mass_edit(repo, "    amount = amount + 2  # fmt\n", FORMATTER, MAX_FILES + 2)
    ignored_sha = _mass_edit(repo, "    amount = amount + 2  # ivy\n", IGNORED, 1)
    repo.write(".git-blame-ignore-revs", f"# the big reformat\n{ignored_sha}\n")
    repo.commit("ignore the reformat", author=ALICE)
    base = repo.head()
    repo.branch("base-branch")
    repo.write("src/pay.py", _pay("    amount = amount * 3\n", "    amount = -amount\n    return amount\n"))
    repo.write(".github/CODEOWNERS", "* @attacker\n")  # the PR's own version: never read
    head = repo.commit("triple the charge", author=PAT)
    return Scenario(repo, base, head, ignored_sha)


def _params(**changes: object) -> ReviewerParams:
    return dataclasses.replace(ReviewerParams(max_files_per_commit=MAX_FILES), **changes)  # type: ignore[arg-type]


def _suggest(
    scenario: Scenario, params: ReviewerParams | None = None, author: str | None = None
) -> list[Reviewer]:
    git = GitRepo.open(scenario.repo.path)
    diffs = git.diff_hunks(scenario.base, scenario.head)
    from knowing_pr.model import Definition

    charge = Definition("charge", "charge", "function", 1, 3, 0, 0)
    refund = Definition("refund", "refund", "function", 6, 8, 0, 0)
    chosen = params or _params()
    return score_evidence(
        reviewer_evidence(
            git,
            chosen,
            base=scenario.base,
            head=scenario.head,
            diffs=diffs,
            base_defs={"src/pay.py": (charge, refund)},
            history=_history(git, scenario.head),
            author=author,
        ),
        chosen,
    )


def _history(git: GitRepo, head: str) -> list[tuple[str, int, tuple[str, ...]]]:
    """The head's commits as the index keeps them for the file model: newest first, the paths."""
    commits = landing_order(git.history_commits(head, max_commits=1000), head)
    return [(c.sha, c.time, tuple(sorted({n for _, _, n in c.changes if n}))) for c in reversed(commits)]


def _keys(reviewers: list[Reviewer]) -> list[str]:
    return [r.key for r in reviewers]


# -- the rules, one by one ------------------------------------------------------------------------


def test_the_author_who_last_and_most_often_changed_the_symbol_comes_first(scenario: Scenario) -> None:
    reviewers = _suggest(scenario, _params(weight_owner=0.0))
    assert reviewers[0].key == "bob@example.com"  # lowercased: one key per address
    assert reviewers[0].name == "Bob Baker"
    assert reviewers[0].reason == "changed src/pay.py 4 times, last in 2023-11"
    assert reviewers[1].key == "alice@example.com"  # wrote the lines of charge the change keeps
    assert "changed charge once, last in 2023-11" in reviewers[1].evidence
    assert len(reviewers) <= 3


def test_bots_are_never_suggested(scenario: Scenario) -> None:
    everyone = _suggest(scenario, _params(max_reviewers=20, weight_owner=0.0))
    assert not any("bot" in r.key for r in everyone)
    assert is_bot(*BOT) and is_bot("renovate-bot", "x@example.com") and is_bot("CI", "ci-bot@example.com")
    assert not is_bot(*ALICE) and not is_bot("Abbott", "abbott@example.com")


def test_mass_edits_are_ignored(scenario: Scenario) -> None:
    everyone = _keys(_suggest(scenario, _params(max_reviewers=20, weight_owner=0.0)))
    assert "fred@example.com" not in everyone  # changed more files than max_files_per_commit
    assert "ivy@example.com" not in everyone  # listed in the base's .git-blame-ignore-revs
    more_files = _keys(
        _suggest(scenario, _params(max_reviewers=20, weight_owner=0.0, max_files_per_commit=50))
    )
    assert "fred@example.com" in more_files
    assert ignored_revisions(f"# x\n{scenario.ignored_sha}  # why\nnot-a-sha\n") == {scenario.ignored_sha}


def test_codeowners_come_from_the_base_commit_last_rule_winning(scenario: Scenario) -> None:
    everyone = _suggest(scenario, _params(max_reviewers=20))
    keys = _keys(everyone)
    assert "@acme/payments" in keys  # /src/pay.py is the last rule matching src/pay.py
    assert "@acme/everyone" not in keys and "@attacker" not in keys  # earlier rule; the PR's version
    team = everyone[keys.index("@acme/payments")]
    assert team.name == "acme/payments" and "code owner of src/pay.py" in team.evidence


def test_the_prs_author_and_the_changes_own_authors_are_left_out(scenario: Scenario) -> None:
    everyone = _keys(_suggest(scenario, _params(max_reviewers=20, weight_owner=0.0)))
    assert "pat@example.com" not in everyone  # wrote the change's commits
    assert QUINN[1].lower() in everyone
    for author in ("quinnq", "@QuinnQ", QUINN[1], "quinn quill"):
        assert QUINN[1].lower() not in _keys(
            _suggest(scenario, _params(max_reviewers=20, weight_owner=0.0), author=author)
        ), author


def test_evidence_gathered_once_scores_like_a_suggestion_under_each_setting(scenario: Scenario) -> None:
    """bench/reviewers.py gathers a task's evidence once and rescores it per setting of its grid:
    that must be the suggestion gathering the evidence again with each setting makes."""
    git = GitRepo.open(scenario.repo.path)
    diffs = git.diff_hunks(scenario.base, scenario.head)
    from knowing_pr.model import Definition

    defs = {"src/pay.py": (Definition("charge", "charge", "function", 1, 3, 0, 0),)}
    history = _history(git, scenario.head)
    gathered = reviewer_evidence(
        git, _params(), base=scenario.base, head=scenario.head, diffs=diffs, base_defs=defs, history=history
    )
    settings = [
        _params(max_reviewers=20),
        _params(max_reviewers=20, half_life_days=1.0, weight_lines=0.0),
        _params(max_reviewers=20, weight_file=0.0, weight_owner=0.0),
    ]
    for params in settings:
        evidence = reviewer_evidence(
            git, params, base=scenario.base, head=scenario.head, diffs=diffs, base_defs=defs, history=history
        )
        direct = score_evidence(evidence, params)
        assert score_evidence(gathered, params) == direct
    assert _keys(score_evidence(gathered, settings[0])) != _keys(score_evidence(gathered, settings[2]))


def test_the_bench_chooses_a_setting_without_the_held_out_repository() -> None:
    from bench.reviewers import choose, leave_one_out, parse_grid

    # setting 0 wins on a and b, setting 1 only thanks to c's many tasks
    def repo(name: str, hits: list[tuple[bool, bool]]) -> dict[str, object]:
        return {"repository": name, "tasks": [{"grid": list(h)} for h in hits]}

    results = [
        repo("a", [(True, False)] * 2),
        repo("b", [(True, False)] * 2),
        repo("c", [(False, True)] * 9),
    ]
    assert choose(results, None, 2)[0] == 1
    folds = {f["repository"]: f for f in leave_one_out(results, 2)}
    assert folds["c"]["chosen"] == 0 and folds["c"]["held_out"] == (0, 9)
    assert folds["a"]["chosen"] == 1 and folds["a"]["train"] == (9, 11)
    assert parse_grid(["half_life_days=30,720", "weight_lines=0,1"])[1] == {
        "half_life_days": 30.0,
        "weight_lines": 1.0,
    }
    with pytest.raises(SystemExit, match="max_blame_files"):
        parse_grid(["max_blame_files=1,2"])


def test_excluded_files_are_not_blamed() -> None:
    from knowing_pr.git import FileDiff

    diffs = [
        FileDiff("M", "poetry.lock", "poetry.lock", [(1, 2)], [(1, 2)]),
        FileDiff("M", "a.py", "a.py", [], [(3, 3)]),
    ]
    targets = blame_targets(diffs, {}, ReviewerParams(), Settings().index.is_excluded)
    assert [t.path for t in targets] == ["a.py"]


def test_recency_weighs_an_old_change_less() -> None:
    day = 86_400
    old = [Touch("old@x", "Old", f"o{i}", 0, "lines", "f") for i in range(3)]
    new = [Touch("new@x", "New", "n1", 400 * day, "lines", "f")]
    fast = ReviewerParams(half_life_days=30.0)
    slow = ReviewerParams(half_life_days=100_000.0)
    assert [r.key for r in suggest_reviewers([*old, *new], fast)][0] == "new@x"
    assert [r.key for r in suggest_reviewers([*old, *new], slow)][0] == "old@x"


def test_codeowners_patterns() -> None:
    owners = parse_codeowners(
        "# comment\n*.js @js\n/docs/* @docs # trailing\napps/ @apps\n/build/logs @logs\n"
        "**/vendor @vendor\n/lib/ @lib\n/lib/public.py\nbad[x] @never\n"
    )
    assert owners.owners_of("src/a.js") == ("@js",)
    assert owners.owners_of("docs/a.md") == ("@docs",)
    assert owners.owners_of("docs/deep/a.md") == ()
    assert owners.owners_of("x/apps/y.py") == ("@apps",)
    assert owners.owners_of("build/logs/today.txt") == ("@logs",)
    assert owners.owners_of("src/build/logs/x") == ()
    assert owners.owners_of("a/b/vendor/c.py") == ("@vendor",)
    assert owners.owners_of("lib/x.py") == ("@lib",)
    assert owners.owners_of("lib/public.py") == ()  # the last matching rule has no owner
    assert github_login("12345+Some-One@users.noreply.github.com") == "some-one"


# -- in the pack, the comment, the JSON and the Action's output -----------------------------------


def _pack_settings(repo: RepoBuilder) -> None:
    repo.write(".knowing-pr.yml", f"reviewers:\n  max_files_per_commit: {MAX_FILES}\n")


def test_the_pack_names_the_reviewers_in_every_format(scenario: Scenario) -> None:
    _pack_settings(scenario.repo)
    ws = open_workspace(scenario.repo.path)
    pack = build_pr_pack(ws, PrRequest(base=scenario.base, head=scenario.head, fmt="json"))
    assert pack.summary is not None
    assert pack.summary.reviewers[0].key == "bob@example.com"
    alice = next(r for r in pack.summary.reviewers if r.key == "alice@example.com")
    assert "changed src/app.py (calls the change) once, last in 2023-11" in alice.evidence
    data = json.loads(render_pack(pack, "json"))
    first = data["reviewers"][0]
    assert set(first) == {"name", "key", "reason", "score", "evidence"}
    assert first["name"] == "Bob Baker" and first["reason"].startswith("changed src/pay.py 4 times")
    markdown = render_pack(pack, "markdown")
    assert "**Suggested reviewers**: Bob Baker (changed src/pay.py 4 times" in markdown
    assert "@" not in markdown.split("**Suggested reviewers**")[1].split("\n")[0].replace("`@", "")
    assert "<reviewer " in render_pack(pack, "xml")
    comment = render_comment(pack, max_bytes=65536)
    assert "**Suggested reviewers**" in comment and len(comment.encode()) <= 65536
    again = build_pr_pack(
        open_workspace(scenario.repo.path), PrRequest(base=scenario.base, head=scenario.head, fmt="json")
    )
    assert again.pack_root == pack.pack_root
    other = build_pr_pack(
        open_workspace(scenario.repo.path),
        PrRequest(base=scenario.base, head=scenario.head, fmt="json", author="bob@example.com"),
    )
    assert other.summary is not None and "bob@example.com" not in _keys(other.summary.reviewers)
    assert other.pack_root != pack.pack_root


def test_names_are_escaped_and_mentions_only_on_opt_in() -> None:
    hostile = Reviewer("@everyone \u202eevil\u202c", "x@example.com", "changed `f` once", 1.0, login="evil")
    team = Reviewer("acme/payments", "@acme/payments", "code owner of src/a.py", 1.0, login="acme/payments")
    line = markdown_reviewers([hostile, team], mention=False)
    assert "\u202e" not in line and "\\u202e" in line
    assert "`@everyone`" in line  # inert: a code span notifies nobody
    assert "@acme" not in line.replace("`@", "")
    assert "@acme/payments" in markdown_reviewers([team], mention=True)
    assert "@evil" in markdown_reviewers([hostile], mention=True)
    output = reviewers_output([hostile])
    assert "\u202e" not in output and "\\u202e" in output
    assert load_settings(text="reviewers:\n  mention: true\n").reviewers.mention is True
    assert Settings().reviewers.mention is False


def test_mention_opt_in_reaches_the_comment(scenario: Scenario) -> None:
    scenario.repo.write(
        ".knowing-pr.yml",
        f"reviewers:\n  mention: true\n  weight_owner: 10\n  max_files_per_commit: {MAX_FILES}\n",
    )
    pack = build_pr_pack(
        open_workspace(scenario.repo.path), PrRequest(base=scenario.base, head=scenario.head)
    )
    assert "@acme/payments" in render_comment(pack)


def test_cli_author_flag(scenario: Scenario, tmp_path: Path) -> None:
    import subprocess
    import sys

    _pack_settings(scenario.repo)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "knowing_pr",
            "pr",
            "--base",
            scenario.base,
            "--head",
            scenario.head,
            "--format",
            "json",
            "--author",
            "Bob Baker",
        ],
        cwd=scenario.repo.path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    keys = [r["key"] for r in json.loads(out)["reviewers"]]
    assert keys and "bob@example.com" not in keys


def test_the_action_excludes_the_events_author_and_writes_the_reviewers_output(
    scenario: Scenario, tmp_path: Path
) -> None:
    from knowing_pr.action import run_action

    runner = tmp_path / "runner"
    runner.mkdir()
    pull = {
        "number": 7,
        "user": {"login": "quinnq"},
        "base": {"sha": scenario.base, "repo": {"full_name": "o/r"}},
        "head": {"sha": scenario.head, "repo": {"full_name": "o/r"}},
    }
    (runner / "event.json").write_text(json.dumps({"pull_request": pull}), encoding="utf-8")
    settings = tmp_path / "workflow-settings.yml"  # the workflow's own file: read from disk
    settings.write_text("reviewers:\n  max_reviewers: 20\n", encoding="utf-8")
    env = {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(runner / "event.json"),
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_WORKSPACE": str(scenario.repo.path),
        "GITHUB_OUTPUT": str(runner / "output"),
        "RUNNER_TEMP": str(runner / "temp"),
        "KNOWING_PR_COMMENT": "false",
        "KNOWING_PR_CONFIG": str(settings),
    }
    assert run_action(env, out=io.StringIO()) == 0
    text = (runner / "output").read_text(encoding="utf-8")
    value = text.split("reviewers<<", 1)[1].split("\n", 1)[1].rsplit("\n", 2)[0]
    lines = value.split("\n")
    assert lines[0].startswith("Bob Baker <bob@example.com>: changed src/pay.py 4 times")
    assert any("carol@example.com" in line for line in lines)  # as little history as Quinn
    assert not any("quinn" in line for line in lines)  # the event's author
    assert not any("pat@example.com" in line for line in lines)  # the change's own commits


def test_long_names_and_subjects_are_cut() -> None:
    touch = Touch("a@x", "N" * 5000, "s1", 0, "lines", "f" * 5000)
    (reviewer,) = suggest_reviewers([touch], ReviewerParams())
    assert len(reviewer.name) == 200 and reviewer.name.endswith("…")
    assert len(reviewer.reason) < 300


def test_the_bases_mailmap_makes_one_person_of_two_addresses(make_repo: Callable[..., RepoBuilder]) -> None:
    repo = make_repo()
    repo.write("a.py", "def f():\n    return 1\n")
    repo.commit("f", author=("bob", "bob@old.example"))
    repo.write("a.py", "def f():\n    return 2\n")
    repo.commit("f again", author=BOB)
    repo.write(".mailmap", "Bob Baker <bob@example.com> <bob@old.example>\n")
    base = repo.commit("mailmap", author=ALICE)
    repo.write("a.py", "def f():\n    return 3\n")
    head = repo.commit("change", author=PAT)
    git = GitRepo.open(repo.path)
    evidence = reviewer_evidence(
        git,
        ReviewerParams(),
        base=base,
        head=head,
        diffs=git.diff_hunks(base, head),
        base_defs={},
        history=_history(git, head),
    )
    reviewers = score_evidence(evidence, ReviewerParams())
    bob = next(r for r in reviewers if r.name == "Bob Baker")
    assert bob.key == "bob@example.com" and bob.reason.startswith("changed a.py 2 times")
    assert not any(r.key == "bob@old.example" for r in reviewers)


def test_lines_of_an_ignored_commit_count_for_nobody_where_git_would_pass_them_on(
    make_repo: Callable[..., RepoBuilder],
) -> None:
    """The known loss of libgit2's blame (docs/reviewers.md): it has no ignore list, so the lines
    an ignored reformat last changed are nobody's, where ``git blame --ignore-rev`` gives them to
    the author before it. This pins the loss: when a fix lands, this test is to be turned round."""
    repo = make_repo()
    repo.write("pay.py", "def charge(amount):\n    return amount\n")
    bob_sha = repo.commit("charge", author=BOB)
    repo.write("pay.py", "def charge( amount ):\n    return  amount\n")
    reformat = repo.commit("reformat", author=FORMATTER)
    repo.write(".git-blame-ignore-revs", f"{reformat}\n")
    repo.commit("ignore the reformat", author=ALICE)
    base = repo.head()
    repo.write("pay.py", "def charge( amount ):\n    return  amount * 2\n")
    head = repo.commit("double", author=PAT)
    git = GitRepo.open(repo.path)
    from knowing_pr.model import Definition

    gathered = reviewer_evidence(
        git,
        _params(),
        base=base,
        head=head,
        diffs=git.diff_hunks(base, head),
        base_defs={"pay.py": (Definition("charge", "charge", "function", 1, 2, 0, 0),)},
        history=[],
    )
    assert [t for t in gathered.touches if t.kind == "lines"] == []  # the reformat's: nobody's
    porcelain = repo.git("blame", "--porcelain", "--ignore-rev", reformat, "-L", "1,2", base, "--", "pay.py")
    assert {line.split()[0] for line in porcelain.splitlines() if line[:40] in (bob_sha, reformat)} == {
        bob_sha
    }


def _pr_pack(scenario: Scenario, db: Path, config: Path | None = None, author: str | None = None):  # type: ignore[no-untyped-def]
    ws = open_workspace(str(scenario.repo.path), db=str(db), config=str(config) if config else None)
    return build_pr_pack(ws, PrRequest(base=scenario.base, head=scenario.head, fmt="json", author=author))


def test_a_store_once_fitted_suggests_what_a_fresh_store_does_with_the_fit_off(
    scenario: Scenario, tmp_path: Path
) -> None:
    """The reviewers' history is the file model's recent commits: a store that kept them while
    the fit was on must not read them once it is off (the pack would depend on the store's past)."""
    off = tmp_path / "off.yml"
    off.write_text("files: {fit: false}\n", encoding="utf-8")
    used = tmp_path / "used.sqlite"
    fitted = _pr_pack(scenario, used)
    assert any("times" in r.reason for r in fitted.summary.reviewers)  # history touches counted
    fresh = _pr_pack(scenario, tmp_path / "fresh.sqlite", off)
    moved = _pr_pack(scenario, used, off)
    assert moved.summary.reviewers == fresh.summary.reviewers
    assert moved.pack_root == fresh.pack_root


def test_the_prs_author_enters_the_pack_only_where_it_can_leave_a_reviewer_out(
    scenario: Scenario, tmp_path: Path
) -> None:
    off = tmp_path / "off.yml"
    off.write_text("reviewers: {enabled: false}\n", encoding="utf-8")
    db = tmp_path / "store.sqlite"
    assert _pr_pack(scenario, db, off, "quinnq").pack_root == _pr_pack(scenario, db, off, "bobb").pack_root
    assert _pr_pack(scenario, db, None, "quinnq").pack_root != _pr_pack(scenario, db, None, "bobb").pack_root
    # the suggestion leaves the author out: the PackRoot changes with the list
    bob = _pr_pack(scenario, db, None, "bob@example.com")
    assert "bob@example.com" not in _keys(bob.summary.reviewers)
    assert bob.pack_root != _pr_pack(scenario, db, None, "quinnq").pack_root


def test_the_prs_author_changes_nothing_where_no_reviewer_is_suggested(
    scenario: Scenario, tmp_path: Path
) -> None:
    """Reviewers on, yet none computed: a pack of ``--files`` (no base), or ``max_reviewers: 0``.
    Who opened the pull request then changes nothing: one PackRoot, and no author in the pack."""
    none = tmp_path / "none.yml"
    none.write_text("reviewers: {enabled: true, max_reviewers: 0}\n", encoding="utf-8")
    db = tmp_path / "store.sqlite"
    packs = [_pr_pack(scenario, db, none, who) for who in ("quinnq", "bob@example.com", None)]
    assert len({p.pack_root for p in packs}) == 1
    assert all(p.summary.reviewers == [] for p in packs)
    ws = open_workspace(str(scenario.repo.path), db=str(db))
    by_files = [
        build_pr_pack(ws, PrRequest(head=scenario.head, files=["src/pay.py"], fmt="json", author=who))
        for who in ("quinnq", "bob@example.com", None)
    ]
    assert len({p.pack_root for p in by_files}) == 1
    assert all("author" not in json.loads(render_pack(p, "json"))["inputs"] for p in [*packs, *by_files])


def test_a_mailmap_libgit2_cannot_read_leaves_the_addresses_as_committed(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    repo = make_repo()
    repo.write("pay.py", "def charge(amount):\n    return amount\n")
    repo.commit("charge", author=BOB)
    repo.write(".mailmap", "\x00\x00<bob@example.com>\n")  # a NUL byte: libgit2 refuses the file
    repo.commit("a broken mailmap", author=ALICE)
    base = repo.head()
    repo.write("pay.py", "def charge(amount):\n    return amount * 2\n")
    head = repo.commit("double", author=PAT)
    ws = open_workspace(str(repo.path), db=str(tmp_path / "store.sqlite"))
    pack = build_pr_pack(ws, PrRequest(base=base, head=head, fmt="json"))
    assert pack.summary is not None
    assert [r.key for r in pack.summary.reviewers][:1] == ["bob@example.com"]


def test_the_kept_recent_commits_follow_the_fit_window_not_the_stores_past(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    """The reviewers read the recent commits the index keeps for the file model's fit: a store
    that kept them for a shorter ``files.fit_window`` must give what a fresh store gives."""
    from knowing_pr.pipeline import update_index
    from knowing_pr.pipeline.reviewers import recent_commits
    from knowing_pr.store import Store

    b = make_repo()
    for i in range(9):
        b.write(f"src/m{i}.py", f"m = {i}\n")
        b.commit(f"module {i}")
    short, wide = tmp_path / "short.yml", tmp_path / "wide.yml"
    short.write_text("files: {fit_window: 2}\n")
    wide.write_text("files: {fit_window: 6}\n")
    used, fresh = tmp_path / "used.sqlite", tmp_path / "fresh.sqlite"
    update_index(str(b.path), db=str(used), config=str(short))
    b.write("src/m9.py", "m = 9\n")
    head = b.commit("module 9")
    update_index(str(b.path), db=str(used), config=str(wide))
    update_index(str(b.path), db=str(fresh), config=str(wide))
    files = load_settings(str(wide)).files
    seen = []
    for db in (used, fresh):
        store = Store.open(db, readonly=True)
        try:
            seen.append(recent_commits(store, head, files))
        finally:
            store.close()
    assert len(seen[1]) == 6 and seen[0] == seen[1]


def test_a_pack_reads_the_commits_authors_once(
    scenario: Scenario, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The authors of the touching commits and of the change's own commits (who cannot review)
    come from one read of the commits per pack, and name the same reviewers."""
    settings = tmp_path / "all.yml"
    settings.write_text(
        f"reviewers:\n  max_reviewers: 20\n  max_files_per_commit: {MAX_FILES}\n", encoding="utf-8"
    )
    calls: list[set[str]] = []
    real = GitRepo.commit_authors

    def commit_authors(self: GitRepo, shas, mailmap_text=None):  # type: ignore[no-untyped-def]
        shas = set(shas)
        calls.append(shas)
        return real(self, shas, mailmap_text)

    monkeypatch.setattr(GitRepo, "commit_authors", commit_authors)
    pack = _pr_pack(scenario, tmp_path / "store.sqlite", settings, "quinnq")
    assert len(calls) == 1
    assert scenario.head in calls[0]  # the change's own commit, whose author (Pat) is left out
    once = "once, last in 2023-11"
    assert [(r.key, r.reason, r.evidence) for r in pack.summary.reviewers] == [
        ("bob@example.com", "changed src/pay.py 4 times, last in 2023-11", ("changed src/pay.py 4 times, last in 2023-11",)),
        (
            "alice@example.com",
            f"changed charge {once}",
            (f"changed charge {once}", f"changed src/pay.py {once}", f"changed src/app.py (calls the change) {once}"),
        ),
        ("olga@example.com", f"changed .github/CODEOWNERS {once}", (f"changed .github/CODEOWNERS {once}",)),
        ("@acme/payments", "code owner of src/pay.py", ("code owner of src/pay.py",)),
        ("carol@example.com", f"changed src/pay.py {once}", (f"changed src/pay.py {once}",)),
    ]  # fmt: skip


def test_a_pack_with_no_code_changed_shows_its_reviewers_as_a_code_pack_does(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    """A change of no source file still suggests reviewers (JSON, XML, PackRoot): its markdown
    and its comment name them on the line a code pack has, after what the pack lists."""
    repo = make_repo()
    repo.write(".github/CODEOWNERS", "*.md @docs-writer\n")
    repo.commit("owners", author=OLGA)
    repo.write("README.md", "# shop\n\nPay with `charge`.\n")
    repo.write("src/pay.py", _pay("    amount = amount\n"))
    repo.commit("start", author=ALICE)
    base = repo.head()
    repo.write("README.md", "# shop\n\nPay with `charge` or `refund`.\n")
    head = repo.commit("document refunds", author=PAT)
    ws = open_workspace(str(repo.path), db=str(tmp_path / "store.sqlite"))
    pack = build_pr_pack(ws, PrRequest(base=base, head=head, fmt="markdown"))
    assert pack.summary is not None and pack.summary.no_code
    assert _keys(pack.summary.reviewers) == ["alice@example.com", "@docs-writer"]
    line = markdown_reviewers(pack.summary.reviewers, mention=False)
    assert line == (
        "**Suggested reviewers**: Alice Archer (changed README.md once, last in 2023-11);"
        " docs-writer (code owner of README.md)\n"
    )
    markdown = render_pack(pack, "markdown")
    blocks = markdown.split("\n\n")
    assert blocks[:2] == [
        "### knowing-pr · no code changed",
        "No code changed: the change touches no source file (`README.md`).",
    ]
    assert blocks[2] + "\n" == line  # where a code pack has it: after what the pack lists
    assert blocks[3].startswith("knowing-pr · replay: ")
    assert line in render_comment(pack, max_bytes=65536)
    assert '<reviewer name="Alice Archer"' in render_pack(pack, "xml")
