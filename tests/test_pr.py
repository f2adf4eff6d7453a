"""ForPR end to end on real repositories: what enters the pack, budgets, PackRoot identity, replay."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import RepoBuilder, assert_budget_holds

from knowing_pr.cli import main
from knowing_pr.pipeline import PrRequest, build_pr_pack, open_workspace

CORE = '''"""Money arithmetic."""


def parse_amount(text):
    """Parse an amount like 12.50 into cents."""
    whole, _, frac = text.partition(".")
    return int(whole) * 100 + int(frac or 0)


def format_amount(cents):
    return f"{cents // 100}.{cents % 100:02d}"
'''
BILLING = """from shop.core import parse_amount


def invoice_total(lines):
    return sum(parse_amount(line) for line in lines)


class Checkout:
    def total(self, lines):
        return invoice_total(lines)
"""
UNRELATED = """def render_banner(title):
    return "*" * len(title) + title


def shout(text):
    return text.upper()
"""
TESTS = """from shop.core import parse_amount


def test_parse_amount():
    assert parse_amount("1.5") == 105
"""


def shop_repo(make_repo, name: str = "repo") -> RepoBuilder:
    b = make_repo(name)
    b.write("shop/__init__.py", "")
    b.write("shop/core.py", CORE)
    b.write("shop/billing.py", BILLING)
    b.write("ui/banner.py", UNRELATED)
    b.write("tests/test_core.py", TESTS)
    b.commit("base")
    return b


def change_parse_amount(b: RepoBuilder) -> None:
    b.write("shop/core.py", CORE.replace("int(frac or 0)", "int((frac or '0')[:2].ljust(2, '0'))"))
    b.commit("fix fractions")


def pack_json(b: RepoBuilder, *extra: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-m", "knowing_pr", "pr", "--repo", str(b.path), "--format", "json", *extra],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)


def two_commits(make_repo, first: dict[str, str], second: dict[str, str]) -> RepoBuilder:  # type: ignore[no-untyped-def]
    """A repository of ``first``'s files, then a commit writing ``second``'s."""
    b: RepoBuilder = make_repo()
    for files, message in ((first, "init"), (second, "change")):
        for path, text in files.items():
            b.write(path, text)
        b.commit(message)
    return b


def files_json(b: RepoBuilder, *paths: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "knowing_pr", "files", *paths, "--repo", str(b.path), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return dict(json.loads(out))


def test_change_brings_callers_and_tests_and_leaves_unrelated_code_out(make_repo) -> None:
    b = shop_repo(make_repo)
    change_parse_amount(b)
    pack = pack_json(b)
    by_name = {s["qualified_name"]: s for s in pack["symbols"]}
    assert by_name["shop.core.parse_amount"]["reason"] == "changed"
    assert by_name["shop.billing.invoice_total"]["reason"] == "caller"
    assert by_name["tests.test_core.test_parse_amount"]["reason"] == "test"
    # the other function of the changed file is context, not part of the change
    assert by_name["shop.core.format_amount"]["reason"] == "related"
    assert [s["qualified_name"] for s in pack["symbols"] if s["reason"] == "changed"] == [
        "shop.core.parse_amount"
    ]
    assert not any(name.startswith("ui.banner") for name in by_name)
    assert pack["inputs"]["files"] == ["shop/core.py"]
    assert pack["tokens_used"] <= pack["token_budget"]
    scores = [s["score"] for s in pack["symbols"]]
    assert scores == sorted(scores, reverse=True)
    ids = {s["id"] for s in pack["symbols"]}
    assert all(e["source"] in ids and e["target"] in ids for e in pack["edges"])


@pytest.mark.parametrize("fmt", ["markdown", "json", "xml"])
def test_rendered_pack_stays_within_budget(make_repo, fmt: str) -> None:
    b = make_repo()
    # enough symbols that small budgets must cut
    for i in range(40):
        body = "\n".join(f"    x{j} = helper_{(i + 1) % 40}({j})" for j in range(i % 7 + 1))
        b.write(
            f"pkg/m{i}.py",
            f"from pkg.m{(i + 1) % 40} import helper_{(i + 1) % 40}\n\n\n"
            f'def helper_{i}(v):\n    """Helper number {i}."""\n{body}\n    return v\n',
        )
    b.commit("base")
    b.write(
        "pkg/m0.py", b.path.joinpath("pkg/m0.py").read_text() + "\n\ndef extra():\n    return helper_0(1)\n"
    )
    b.commit("change")
    ws = open_workspace(str(b.path))
    from knowing_pr.render import render_pack

    for budget in (500, 1000, 3000, 8000, 20000, 50000):
        ws.settings = ws.settings.with_budget(budget)
        pack = build_pr_pack(ws, PrRequest(fmt=fmt))
        assert_budget_holds(pack, fmt)
        if budget >= 3000 or fmt == "markdown":  # the whole lists fit: the budget holds
            assert math.ceil(len(render_pack(pack, fmt)) / 4) <= budget, (fmt, budget)


def _pack_root_in_subprocess(repo: Path, seed: str, db: Path) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed, "KNOWING_PR_DB": str(db)}
    out = subprocess.run(
        [sys.executable, "-m", "knowing_pr", "pr", "--repo", str(repo), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    return str(json.loads(out)["pack_root"])


def test_pack_root_is_identical_across_processes_hash_seeds_and_clones(make_repo, tmp_path: Path) -> None:
    b = shop_repo(make_repo)
    change_parse_amount(b)
    clone = tmp_path / "clone"
    shutil.copytree(b.path, clone, ignore=shutil.ignore_patterns("knowing-pr"))
    roots = {
        _pack_root_in_subprocess(b.path, "0", tmp_path / "a.sqlite"),
        _pack_root_in_subprocess(b.path, "17", tmp_path / "b.sqlite"),
        _pack_root_in_subprocess(clone, "123", tmp_path / "c.sqlite"),
    }
    assert len(roots) == 1


def test_editing_outside_the_pack_keeps_the_pack_root_and_inside_changes_it(make_repo) -> None:
    b = shop_repo(make_repo)
    b.write("shop/core.py", CORE + "\n\ndef spare():\n    return 1\n")
    b.commit("add spare")
    change_parse_amount(b)
    first = pack_json(b, "--files", "shop/core.py")
    packed = {s["qualified_name"] for s in first["symbols"]}
    assert "ui.banner.shout" not in packed
    # an edit to a symbol outside the pack
    b.write("ui/banner.py", UNRELATED.replace("upper()", "upper().strip()"))
    b.commit("edit unrelated")
    second = pack_json(b, "--files", "shop/core.py")
    assert second["pack_root"] == first["pack_root"]
    # an edit to a symbol inside the pack
    b.write("shop/billing.py", BILLING.replace("sum(", "int(sum(").replace("lines))", "lines)))"))
    b.commit("edit packed")
    third = pack_json(b, "--files", "shop/core.py")
    assert third["pack_root"] != first["pack_root"]


def test_replay_prints_and_verifies_and_detects_mismatch(
    make_repo, capsys: pytest.CaptureFixture[str]
) -> None:
    b = shop_repo(make_repo)
    change_parse_amount(b)
    pack = pack_json(b)
    root = str(pack["pack_root"])
    capsys.readouterr()
    assert main(["replay", root, "--repo", str(b.path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["pack_root"] == root
    assert main(["replay", root, "--repo", str(b.path), "--verify", "--format", "json"]) == 0
    out = capsys.readouterr().out
    shown, _, verdict = out.rstrip().rpartition("\n")
    # the pack as printed without --verify, then the verdict on the last line
    assert json.loads(shown)["pack_root"] == root and verdict.startswith(f"verified: {root}")
    assert main(["replay", root, "--repo", str(b.path), "--verify", "--quiet"]) == 0
    assert capsys.readouterr().out.startswith(f"verified: {root}")  # the verdict alone
    assert main(["replay", root, "--repo", str(b.path)]) == 0
    assert capsys.readouterr().out.startswith("{")  # the pack's own format (JSON) by default
    # a manifest whose recorded symbols no longer match what the code yields
    manifest_path = b.path.parent / "manifest.json"
    assert main(["replay", root, "--repo", str(b.path), "--export", str(manifest_path)]) == 0
    manifest = json.loads(manifest_path.read_text())
    manifest["symbols"] = manifest["symbols"][:-1]
    manifest_path.write_text(json.dumps(manifest))
    capsys.readouterr()
    assert main(["replay", root, "--repo", str(b.path), "--verify", "--manifest", str(manifest_path)]) == 1
    assert "mismatch" in capsys.readouterr().out


def test_verify_restores_every_recorded_setting_after_the_config_changed(
    make_repo, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pack records every setting that can change it (index, rank, pack, history, fusion, task,
    equivalence classes); ``replay --verify`` rebuilds with those, not the clone's current ones."""
    b = shop_repo(make_repo)
    change_parse_amount(b)
    config = b.path / ".knowing-pr.yml"
    config.write_text(
        "index: {confidence_same_file: 0.8}\n"
        "rank: {restart_prob: 0.3}\n"
        "pack: {test_share: 0.1}\n"
        "history: {cochange_gain: 2.0, min_support: 1}\n"
        "fusion: {files: 3}\n"
        "task: {weight_bm25: 1.5}\n"
        "equivalence_classes: [{name: money, phrases: [amount], targets: [parse_amount]}]\n"
    )
    pack = pack_json(b)
    root = str(pack["pack_root"])
    manifest_path = b.path.parent / "recorded.json"
    assert main(["replay", root, "--repo", str(b.path), "--export", str(manifest_path)]) == 0
    params = json.loads(manifest_path.read_text())["params"]
    assert params["index"]["confidence_same_file"] == 0.8 and params["rank"]["restart_prob"] == 0.3
    assert params["pack"]["test_share"] == 0.1 and params["history"]["cochange_gain"] == 2.0
    assert params["fusion"]["files"] == 3 and params["task"]["weight_bm25"] == 1.5
    assert params["equivalence_classes"][0]["name"] == "money"
    config.unlink()  # the clone's settings are the defaults now
    assert pack_json(b)["pack_root"] != root
    capsys.readouterr()
    assert main(["replay", root, "--repo", str(b.path), "--verify"]) == 0
    assert capsys.readouterr().out.rstrip().splitlines()[-1].startswith(f"verified: {root}")


@pytest.mark.parametrize(
    "bad", ["abc", "a" * 63, "a" * 65, "A" * 64, "a" * 64 + "\n", "../" + "a" * 61, "-rf", "\u0661" * 64]
)
def test_malformed_pack_roots_are_refused_with_exit_2(make_repo, bad: str, capsys) -> None:
    b = shop_repo(make_repo)
    try:
        code = main(["replay", bad, "--repo", str(b.path)])
    except SystemExit as exc:  # argparse refuses "-rf" as an unknown option, also with exit 2
        code = int(exc.code or 0)
    assert code == 2
    err = capsys.readouterr().err
    assert "knowing-pr: error:" in err and "Traceback" not in err


def test_files_mode_packs_file_symbols_and_direct_callers(make_repo) -> None:
    b = shop_repo(make_repo)
    pack = files_json(b, "shop/core.py")
    names = {s["qualified_name"]: s["reason"] for s in pack["symbols"]}
    assert names["shop.core.parse_amount"] == "changed"
    assert names["shop.billing.invoice_total"] == "caller"
    assert "shop.billing.Checkout.total" not in names  # distance 2
    assert pack["mode"] == "files"


def test_files_mode_keeps_a_direct_caller_the_walk_barely_reaches(make_repo) -> None:
    """A file of many symbols spreads the walk's restart thin: a caller of one of them fell under
    the score cutoff (5% of the best node's walk score) and ``files`` showed no caller at all."""
    b: RepoBuilder = make_repo()
    leaves = "".join(f"def leaf{i}(x):\n    return core(x) + core(x + {i})\n\n\n" for i in range(30))
    b.write("lib/big.py", "def core(x):\n    return x\n\n\n" + leaves)
    b.write("app/use.py", "from lib.big import leaf7\n\n\ndef handler(v):\n    return leaf7(v)\n")
    b.commit("init")
    callers = [s["qualified_name"] for s in files_json(b, "lib/big.py")["symbols"] if s["reason"] == "caller"]
    assert callers == ["app.use.handler"]


def test_deleted_function_seeds_its_former_callers(make_repo) -> None:
    b = shop_repo(make_repo)
    b.write("shop/core.py", CORE.split("def format_amount")[0])
    b.write(
        "shop/report.py",
        "from shop.core import format_amount\n\n\ndef report(c):\n    return format_amount(c)\n",
    )
    b.commit("add report")
    b.write(
        "shop/core.py",
        CORE.split("def parse_amount")[0] + "def format_amount(cents):\n    return str(cents)\n",
    )
    b.commit("drop parse_amount")
    pack = pack_json(b)
    names = {s["qualified_name"] for s in pack["symbols"]}
    assert "shop.billing.invoice_total" in names


def test_usage_errors_exit_2_without_traceback(make_repo, tmp_path: Path, capsys) -> None:
    b = shop_repo(make_repo)
    assert main(["pr", "--repo", str(b.path), "--files", "../etc/passwd"]) == 2
    assert "not a repository-relative path" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["pr", "--repo", str(b.path), "--budget", "lots"])
    assert exc.value.code == 2
    assert main(["pr", "--repo", str(tmp_path / "nowhere")]) == 2  # an input error, as the README says
    err = capsys.readouterr().err
    assert "Traceback" not in err and "knowing-pr: error:" in err


def test_pr_title_and_body_widen_the_pack_but_the_change_stays_first(make_repo) -> None:
    b = shop_repo(make_repo)
    change_parse_amount(b)
    plain = pack_json(b)
    widened = pack_json(b, "--task", "Fix the `render_banner` title width too")
    plain_names = [s["qualified_name"] for s in plain["symbols"]]
    widened_names = [s["qualified_name"] for s in widened["symbols"]]
    assert "ui.banner.render_banner" not in plain_names
    assert "ui.banner.render_banner" in widened_names
    assert widened_names[0] == "shop.core.parse_amount"
    assert widened["pack_root"] != plain["pack_root"]
    assert widened["inputs"]["task"].startswith("Fix the")


@pytest.mark.parametrize("fmt", ["markdown", "json", "xml"])
def test_a_change_of_hundreds_of_files_keeps_a_symbol_and_names_the_rest(make_repo, fmt: str) -> None:
    b = make_repo()
    for i in range(300):
        b.write(f"pkg/sub{i % 7}/module_with_a_long_name_{i}.py", f"def f{i}():\n    return {i}\n")
    b.commit("base")
    for i in range(300):
        b.write(f"pkg/sub{i % 7}/module_with_a_long_name_{i}.py", f"def f{i}():\n    return {i + 1}\n")
    b.commit("touch everything")
    ws = open_workspace(str(b.path))
    ws.settings = ws.settings.with_budget(1000)
    pack = build_pr_pack(ws, PrRequest(fmt=fmt))
    from knowing_pr.render import render_pack

    assert_budget_holds(pack, fmt)
    if fmt == "markdown":
        assert math.ceil(len(render_pack(pack, fmt)) / 4) <= 1000
    else:  # every changed symbol left out is named: 299 names pass the budget
        assert pack.summary is not None and len(pack.summary.changed_left_out) == 299
    assert pack.symbols, "the list of changed paths must not push every symbol out"
    assert pack.inputs["files_total"] == 300
    assert 0 < len(pack.inputs["files"]) < 300  # type: ignore[arg-type]


def test_changed_files_the_index_skipped_are_named_with_their_reason(make_repo) -> None:
    import xml.etree.ElementTree as ET

    b = shop_repo(make_repo)
    change_parse_amount(b)
    b.write("shop/schema_pb2.py", "# Generated by the protocol buffer compiler.  DO NOT EDIT!\nX = 1\n")
    b.write("shop/huge.py", "VALUES = [\n" + "    1,\n" * 250_000 + "]\n")  # > 1 MiB
    b.write("docs/notes.md", "# notes\n")  # no parser: expected to have no symbols, not listed
    b.commit("generated, huge and docs")
    ws = open_workspace(str(b.path))
    pack = build_pr_pack(ws, PrRequest(base="HEAD~2", head="HEAD", fmt="markdown"))
    assert pack.inputs["not_indexed"] == [
        {"path": "shop/huge.py", "reason": "size"},
        {"path": "shop/schema_pb2.py", "reason": "generated"},
    ]
    from knowing_pr.render import render_pack

    markdown = render_pack(pack, "markdown")
    assert (
        "changed but not indexed (no symbols from them): `shop/huge.py` (size), `shop/schema_pb2.py` (generated)"
        in markdown
    )
    assert "notes.md" not in markdown.split("changed but not indexed")[1].splitlines()[0]
    assert json.loads(render_pack(pack, "json"))["inputs"]["not_indexed"][1]["reason"] == "generated"
    values = ET.fromstring(render_pack(pack, "xml")).findall(".//input[@name='not_indexed']/value")
    assert [(v.get("path"), v.get("reason")) for v in values] == [
        ("shop/huge.py", "size"),
        ("shop/schema_pb2.py", "generated"),
    ]


def test_a_base_that_moved_on_does_not_bring_its_own_commits_in(make_repo) -> None:
    """``--base main`` after main moved on: the change is merge-base(main, head)..head, as in a
    pull request's "Files changed", not main's newer commits reversed."""
    b = shop_repo(make_repo)
    b.branch("feature")
    b.write("ui/banner.py", UNRELATED.replace('"*"', '"="'))  # main moves on after the branch
    b.commit("main: banner style")
    b.checkout("feature")
    change_parse_amount(b)
    ws = open_workspace(str(b.path))
    pack = build_pr_pack(ws, PrRequest(base="main", head="feature", fmt="json"))
    changed = {s.node.qualified_name for s in pack.symbols if s.reason == "changed"}
    assert changed == {"shop.core.parse_amount"}
    assert not any(s.node.path == "ui/banner.py" for s in pack.symbols)
    assert pack.inputs["files"] == ["shop/core.py"]
    assert pack.inputs["base"] == b.git("merge-base", "main", "feature").strip()
    # the manifest records the base as given; --verify rebuilds the same pack from it
    assert main(["replay", pack.pack_root, "--repo", str(b.path), "--verify"]) == 0


def test_files_and_task_packs_verify_at_their_recorded_commit_after_head_moved(
    make_repo, capsys: pytest.CaptureFixture[str]
) -> None:
    b = shop_repo(make_repo)
    files_pack = pack_json(b, "--files", "shop/core.py")
    assert main(["files", "shop/billing.py", "--repo", str(b.path), "--format", "json"]) == 0
    files_root = json.loads(capsys.readouterr().out)["pack_root"]
    assert main(["task", "fix the amount parser", "--repo", str(b.path), "--format", "json"]) == 0
    task_root = json.loads(capsys.readouterr().out)["pack_root"]
    change_parse_amount(b)  # HEAD moves on and changes a packed symbol
    b.write("shop/billing.py", BILLING.replace("sum(", "int(sum(").replace("lines))", "lines)))"))
    b.commit("edit billing")
    for root in (files_root, task_root, str(files_pack["pack_root"])):
        capsys.readouterr()
        assert main(["replay", root, "--repo", str(b.path), "--verify"]) == 0, capsys.readouterr()
        assert capsys.readouterr().out.rstrip().splitlines()[-1].startswith(f"verified: {root}")


LEGACY = """def old_total(lines):
    return parse_amount(lines[0])
"""


def test_an_edge_below_the_confidence_floor_is_walked_but_not_shown(make_repo, tmp_path: Path) -> None:
    """``shop/legacy.py`` calls ``parse_amount`` without importing it: the edge is a guess (a name
    bound nowhere in its file, found in its directory) whose confidence is below
    ``rank.min_shown_confidence``. The walk still reaches ``old_total`` through it, but the pack
    neither calls it a caller, nor draws the edge, nor lists its call site; with the floor at 0
    it does all three."""
    b = shop_repo(make_repo)
    b.write("shop/legacy.py", LEGACY)
    b.commit("legacy")
    change_parse_amount(b)
    settings = {"": False, "rank:\n  min_shown_confidence: 0\n": True}
    for number, (text, shown) in enumerate(settings.items()):
        config = tmp_path / f"floor-{number}.yml"
        config.write_text(text, encoding="utf-8")
        pack = pack_json(b, "--config", str(config))
        by_name = {s["qualified_name"]: s for s in pack["symbols"]}
        legacy, changed = by_name["shop.legacy.old_total"], by_name["shop.core.parse_amount"]
        assert by_name["shop.billing.invoice_total"]["reason"] == "caller"
        assert (legacy["reason"] == "caller") is shown
        edges = {(e["source"], e["target"]) for e in pack["edges"]}
        assert ((legacy["id"], changed["id"]) in edges) is shown
        sites = {site["file"] for site in pack["call_sites"]}  # type: ignore[attr-defined]
        assert "shop/billing.py" in sites
        assert ("shop/legacy.py" in sites) is shown


def test_a_command_runs_without_cycle_collection_and_gives_the_collector_back(
    make_repo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import gc

    import knowing_pr.cli as cli

    b = make_repo()
    b.write("a.py", "def f():\n    return 1\n")
    b.commit("one")
    b.write("a.py", "def f():\n    return 2\n")
    b.commit("two")
    seen: list[bool] = []
    real = cli.run_command

    def spy(args):  # type: ignore[no-untyped-def]
        seen.append(gc.isenabled())
        return real(args)

    monkeypatch.setattr(cli, "run_command", spy)
    assert gc.isenabled()
    assert main(["pr", "--repo", str(b.path), "--format", "json"]) == 0
    assert seen == [False]  # the command ran with the collector paused
    assert gc.isenabled() and gc.get_freeze_count() == 0  # and an in-process caller has it back
    assert json.loads(capsys.readouterr().out)["mode"] == "pr"


def test_a_fresh_process_leaves_the_collector_off_to_its_end(
    make_repo, capsys: pytest.CaptureFixture[str]
) -> None:
    """The console script's process ends right after ``main``: a collector turned back on would
    make its first pass at once, over everything the imports and the command made."""
    import gc

    b = make_repo()
    b.write("a.py", "def f():\n    return 1\n")
    b.commit("one")
    assert gc.isenabled()
    try:
        assert main(["stats", "--repo", str(b.path), "--json"], fresh_process=True) == 0
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert main(["stats", "--repo", str(b.path), "--json"]) == 0
    assert gc.isenabled()  # an in-process caller has it back
    capsys.readouterr()


def test_a_change_that_removes_code_from_more_files_than_the_kept_definitions_loses_none(make_repo) -> None:
    from knowing_pr.pipeline.basedefs import _DEFINITIONS_KEPT, start_base_definitions

    b = make_repo()
    count = _DEFINITIONS_KEPT + 6
    for i in range(count):
        b.write(f"pkg/m{i}.py", f"def keep{i}():\n    return {i}\n\n\ndef gone{i}():\n    return {i}\n")
    base = b.commit("many")
    for i in range(count):
        b.write(f"pkg/m{i}.py", f"def keep{i}():\n    return {i}\n")
    head = b.commit("remove one function from each")
    ws = open_workspace(str(b.path))
    diffs = ws.repo.diff_hunks(base, head)
    found = start_base_definitions(ws.repo, ws.settings, base, diffs)()
    assert len(found) == count
    assert all({d.name for d in found[f"pkg/m{i}.py"]} == {f"keep{i}", f"gone{i}"} for i in range(count))


def test_a_callers_frozen_objects_stay_frozen(make_repo, capsys: pytest.CaptureFixture[str]) -> None:
    import gc

    b = make_repo()
    b.write("a.py", "def f():\n    return 1\n")
    b.commit("one")
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert main(["stats", "--repo", str(b.path), "--json"]) == 0
        # still frozen (objects of the permanent generation may die meanwhile; none is thawed)
        assert gc.get_freeze_count() > frozen // 2 and gc.isenabled()
    finally:
        gc.unfreeze()
    capsys.readouterr()


# -- how the console script's process ends (cli._end_process) ---------------------------------------

END_DRIVER = """
import atexit, sys, threading, time
from knowing_pr.cli import run
atexit.register(lambda: sys.stderr.write("exit handler ran\\n"))
if sys.argv[1] == "thread":  # a thread still running when the command returns: the process waits
    threading.Thread(target=lambda: (time.sleep(0.3), sys.stderr.write("thread done\\n"))).start()
sys.argv = ["knowing-pr", *sys.argv[2:]]
run()
"""


def _console(
    path: Path, mode: str, *args: str, stdout: Any = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", END_DRIVER, mode, *args],
        cwd=path,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        timeout=120,
    )


def test_the_console_script_ends_with_its_output_flushed_its_code_and_the_exit_handlers_run(repo) -> None:
    repo.write("a.py", "def f():\n    return 1\n")
    repo.commit("one")
    repo.write("a.py", "def f():\n    return 2\n")
    repo.commit("two")
    done = _console(repo.path, "plain", "pr", "--base", "HEAD~1", "--head", "HEAD", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["mode"] == "pr"  # every byte of the pack arrived
    assert done.stderr.endswith("exit handler ran\n")
    failed = _console(repo.path, "plain", "pr", "--base", "no-such-base")
    assert failed.returncode == 2 and "unknown revision 'no-such-base'" in failed.stderr
    assert failed.stderr.endswith("exit handler ran\n")
    waited = _console(repo.path, "thread", "pr", "--base", "HEAD~1", "--format", "json")
    assert waited.returncode == 0 and json.loads(waited.stdout)["mode"] == "pr"
    assert "thread done\n" in waited.stderr and waited.stderr.endswith("exit handler ran\n")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_output_the_disk_refuses_is_a_clear_error_or_exit_code_120_never_a_traceback(repo) -> None:
    repo.write("a.py", "def f():\n    return 1\n")
    repo.commit("one")
    with open("/dev/full", "w") as full:  # every write fails: "No space left on device"
        during = _console(repo.path, "plain", "stats", "--json", stdout=full)
        at_the_end = subprocess.run(  # a few bytes, left in the buffer until the process ends
            [sys.executable, "-c", "import sys; from knowing_pr.cli import _end_process\n"
             "sys.stdout.write('x'); _end_process(0)"],
            stdout=full, stderr=subprocess.PIPE, text=True, check=False, timeout=60,
            env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},
        )  # fmt: skip
    assert during.returncode == 1
    assert "knowing-pr: error: No space left on device" in during.stderr and "Traceback" not in during.stderr
    assert (at_the_end.returncode, at_the_end.stderr) == (120, "")


@pytest.mark.parametrize(("closed", "command"), [(0, "stats"), (1, "stats"), (1, "pr"), (2, "stats")])
def test_a_command_started_with_a_standard_stream_closed_ends_cleanly(
    repo, closed: int, command: str
) -> None:
    """Python leaves that stream None, and the next file opened would take its number: it is
    opened on the null device first, so the output is dropped and the store stays whole."""
    repo.write("a.py", "def f():\n    return 1\n")
    repo.commit("one")
    repo.write("a.py", "def f():\n    return 2\n")
    repo.commit("two")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            END_DRIVER,
            "plain",
            command,
            *(["--base", "HEAD~1"] if command == "pr" else []),
        ],
        cwd=repo.path,
        stdin=subprocess.DEVNULL if closed else None,
        stdout=subprocess.PIPE if closed != 1 else None,
        stderr=subprocess.PIPE if closed != 2 else None,
        preexec_fn=lambda: os.close(closed),  # noqa: PLW1509  # the child starts without it
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in (done.stderr or "") and "Traceback" not in (done.stdout or "")
    after = subprocess.run(
        [sys.executable, "-m", "knowing_pr", "stats", "--json"], cwd=repo.path, capture_output=True, text=True
    )
    assert after.returncode == 0 and json.loads(after.stdout)  # the store is whole


def test_a_call_through_an_import_alias_is_shown_on_its_own_line(make_repo) -> None:
    """``from lib.core import scale as grow`` then ``grow(w)``: the call site is that line, not the
    caller's first line standing in with its own text (which is not a call)."""
    use = "from lib.core import scale as grow\n\n\ndef bigger(v):\n    w = v + 1\n    return grow(w)\n"
    b = two_commits(
        make_repo,
        {"lib/core.py": "def scale(x):\n    return x\n", "lib/use.py": use},
        {"lib/core.py": "def scale(x, k=2):\n    return x * k\n"},
    )
    sites = [(s["file"], s["line"], s["caller"], s["text"]) for s in pack_json(b)["call_sites"]]
    assert sites == [("lib/use.py", 6, "bigger", "return grow(w)")]


def test_a_test_file_edited_outside_its_cases_is_a_test_to_run(make_repo) -> None:
    """An import line of a test file removed: the pack lists the file as "tests in … edited (see
    Tests to run)", so Tests to run must hold it (it said "no test case found" before)."""
    test = "from shop.core import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n"
    b = two_commits(
        make_repo,
        {"shop/core.py": "def total(xs):\n    return sum(xs)\n", "tests/test_core.py": "import os\n" + test},
        {"tests/test_core.py": test},  # an unused import dropped
    )
    pack = pack_json(b)
    changed = [s["qualified_name"] for s in pack["symbols"] if s["reason"] == "changed"]
    assert changed == ["tests.test_core"]  # lines deleted at module level: the module's code
    tests = [(t["file"], t["reason"], t["changed"], t["run"]) for t in pack["tests_to_run"]]
    assert tests == [("tests/test_core.py", "edited", True, "pytest tests/test_core.py")]


def test_a_deleted_source_file_is_named_even_with_no_symbol_to_report_removed(make_repo) -> None:
    """A file of module-level code alone, deleted: the pack said "nothing the index can see"."""
    b: RepoBuilder = make_repo()
    b.write("boot.js", 'console.log("hi");\nconst x = 1;\n')
    b.write("lib.js", "function g() { return 1; }\nmodule.exports = { g };\n")
    b.commit("init")
    b.delete("boot.js")
    b.commit("drop boot")
    assert pack_json(b)["inputs"]["deleted"] == ["boot.js"]
    text = subprocess.run(
        [sys.executable, "-m", "knowing_pr", "pr", "--repo", str(b.path), "--quiet"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "**What changed** (1)\n\n- deleted: `boot.js`\n" in text
    assert "nothing the index can see" not in text


def test_a_name_its_file_imports_from_elsewhere_does_not_use_the_removed_symbol(make_repo) -> None:
    """gson removed a private ``toIntExact``; a file with ``import static java.lang.Math.toIntExact``
    was listed as a call site "not updated" that "uses removed `toIntExact`"."""
    adapters = "package g;\n\nclass Adapters {\n  static int f(long v) {\n    return (int) v;\n  }\n"
    helper = "  private static int toIntExact(long v) {\n    return (int) v;\n  }\n"
    math_user = (
        "package g;\n\nimport static java.lang.Math.toIntExact;\n\n"
        "class Times {\n  int g(long v) {\n    return toIntExact(v);\n  }\n}\n"
    )
    own_user = "package g;\n\nclass Old {\n  int h(long v) {\n    return toIntExact(v);\n  }\n}\n"
    b = two_commits(
        make_repo,
        {
            "src/g/Adapters.java": adapters + helper + "}\n",
            "src/g/Times.java": math_user,
            "src/g/Old.java": own_user,
        },
        {"src/g/Adapters.java": adapters + "}\n"},
    )
    pack = pack_json(b)
    assert [r["name"] for r in pack["removed_symbols"]] == ["toIntExact"]
    removed_sites = [(s["file"], s["line"]) for s in pack["call_sites"] if s["removed"]]
    assert removed_sites == [
        ("src/g/Old.java", 5)
    ]  # no import of it from elsewhere: it may be the removed one


def test_a_rust_call_through_an_imported_module_name_is_a_call_site(make_repo) -> None:
    """clap's ``use crate::common;`` then ``common::hidden_command(name)`` in an integration test
    crate: ``use`` binds ``common`` as a name, and only calls on imported modules were looked for."""
    common = "pub fn hidden_command(name: &str) -> String {\n    name.to_string()\n}\n"
    roff = 'use crate::common;\n\n#[test]\nfn hidden() {\n    let cmd = common::hidden_command("x");\n    assert_eq!(cmd, "x");\n}\n'
    b = two_commits(
        make_repo,
        {
            "Cargo.toml": '[package]\nname = "m"\nversion = "0.1.0"\n',
            "src/lib.rs": "pub fn lib() {}\n",
            "tests/testsuite/main.rs": "mod common;\nmod roff;\n",
            "tests/testsuite/common.rs": common,
            "tests/testsuite/roff.rs": roff,
        },
        {"tests/testsuite/common.rs": common.replace("name: &str", "name: &str, wide: bool")},
    )
    sites = [(s["file"], s["line"], s["text"]) for s in pack_json(b)["call_sites"]]
    assert sites == [("tests/testsuite/roff.rs", 5, 'let cmd = common::hidden_command("x");')]


def test_a_changed_constructor_is_called_where_its_class_is_constructed(make_repo) -> None:
    """``Shop("a")`` and ``new It(3)`` run the constructors the change edits, but the graph's call
    edge goes to the class: the pack said no call site (commons-lang's ``CharacterIterator``)."""
    shop = 'class Shop:\n    def __init__(self, name):\n        self.name = name\n\n\ndef make():\n    return Shop("a")\n'
    it = "package g;\n\nclass It {\n  private final int n;\n\n  It(int n) {\n    this.n = n;\n  }\n}\n"
    use = "package g;\n\nclass Use {\n  int f() {\n    return new It(3).hashCode();\n  }\n}\n"
    b = two_commits(
        make_repo,
        {"src/g/shop.py": shop, "src/g/It.java": it, "src/g/Use.java": use},
        {
            "src/g/shop.py": shop.replace("(self, name)", "(self, name, city=None)"),
            "src/g/It.java": it.replace("It(int n)", "It(int n, int m)"),
        },
    )
    sites = {(s["file"], s["line"], s["callee"], s["not_updated"]) for s in pack_json(b)["call_sites"]}
    assert sites == {("src/g/Use.java", 5, "It.It", True), ("src/g/shop.py", 7, "Shop.__init__", False)}


def test_a_removed_name_imported_from_the_repository_itself_is_still_a_use(make_repo) -> None:
    """``use crate::helper_fn;`` names the repository's own code: its call of the removed
    ``helper_fn`` stays a call site (a check that took only the module's last part for the removed
    file's name dropped it)."""
    lib = "pub mod other;\n\npub fn keep() {}\n"
    b = two_commits(
        make_repo,
        {
            "Cargo.toml": '[package]\nname = "m"\nversion = "0.1.0"\n',
            "src/lib.rs": lib + "\npub fn helper_fn(x: u32) -> u32 {\n    x\n}\n",
            "src/other.rs": "use crate::helper_fn;\n\npub fn run() -> u32 {\n    helper_fn(3)\n}\n",
        },
        {"src/lib.rs": lib},
    )
    removed_sites = [
        (s["file"], s["line"], s["not_updated"]) for s in pack_json(b)["call_sites"] if s["removed"]
    ]
    assert removed_sites == [("src/other.rs", 4, True)]


def test_the_importers_of_a_deleted_module_are_call_sites_of_its_removed_names(make_repo) -> None:
    """A deleted module is no file of the head, yet the repository's own: ``from pkg.helpers import
    fancy_merge`` left behind is a call site "not updated" (the repository's names taken from the
    head's files alone made ``pkg.helpers`` an outside module, and the call site went)."""
    user = "from pkg.helpers import fancy_merge\n\n\ndef make():\n    return fancy_merge(1, 2)\n"
    b = two_commits(
        make_repo,
        {
            "pkg/__init__.py": "",
            "pkg/helpers.py": "def fancy_merge(a, b):\n    return a + b\n",
            "pkg/user.py": user,
        },
        {},
    )
    b.delete("pkg/helpers.py")
    b.commit("drop the helpers")
    pack = pack_json(b)
    assert [r["name"] for r in pack["removed_symbols"]] == ["fancy_merge"]
    removed_sites = [(s["file"], s["line"], s["not_updated"]) for s in pack["call_sites"] if s["removed"]]
    assert removed_sites == [("pkg/user.py", 5, True)]


def test_a_constructors_call_sites_are_calls_of_its_class_not_mentions_of_its_type(make_repo) -> None:
    """``def use(other: Shop)`` names the class and calls nothing; a class of several constructors
    is the callee its call sites name (which overload ``new It(3)`` takes is not known here), "not
    updated" when a changed one breaks callers."""
    shop = "class Shop:\n    def __init__(self, name):\n        self.name = name\n"
    user = "from pkg.shop import Shop\n\n\ndef use(other: Shop, k):\n    return Shop(k)\n"
    it = "package g;\n\nclass It {\n  It(int n) {\n  }\n\n  It(String s) {\n  }\n}\n"
    use = "package g;\n\nclass Use {\n  Object f() {\n    return new It(3);\n  }\n}\n"
    b = two_commits(
        make_repo,
        {"pkg/shop.py": shop, "pkg/user.py": user, "src/g/It.java": it, "src/g/Use.java": use},
        {
            "pkg/shop.py": shop.replace("self.name = name", "self.name = name.strip()"),
            "src/g/It.java": it.replace("It(int n)", "It(int n, int m)"),
        },
    )
    sites = {(s["file"], s["line"], s["callee"], s["not_updated"]) for s in pack_json(b)["call_sites"]}
    assert sites == {("pkg/user.py", 5, "Shop.__init__", False), ("src/g/Use.java", 5, "It", True)}


def test_a_changed_class_whose_constructor_breaks_marks_its_calls_not_updated(make_repo) -> None:
    """The class and its ``__init__`` both changed: ``Shop(k)`` breaks ("not updated"), a mention of
    the type does not (the class's own signature did not change, its constructor's did)."""
    shop = '"""Shops."""\n\n\nclass Shop:\n    """A shop."""\n\n    def __init__(self, name):\n        self.name = name\n'
    user = "from pkg.shop import Shop\n\n\ndef use(other: Shop, k):\n    return Shop(k)\n"
    b = two_commits(
        make_repo,
        {"pkg/shop.py": shop, "pkg/user.py": user},
        {
            "pkg/shop.py": shop.replace('"""A shop."""', "KIND = 1").replace(
                "(self, name)", "(self, name, city)"
            )
        },
    )
    sites = {(s["file"], s["line"], s["not_updated"]) for s in pack_json(b)["call_sites"]}
    assert ("pkg/user.py", 5, True) in sites
    assert ("pkg/user.py", 4, True) not in sites


def test_a_test_file_run_whole_lists_none_of_its_cases_beside_it(make_repo) -> None:
    """A helper edited and an import added to a test file: the file runs whole, and its case that
    calls the helper is not listed again beside it (two entries, one redundant grouped line)."""
    test = "from shop.core import helper\n\n\ndef test_helper():\n    assert helper() == 1\n"
    b = two_commits(
        make_repo,
        {"shop/core.py": "def helper():\n    return 1\n", "tests/test_core.py": test},
        {"shop/core.py": "def helper():\n    return 2 - 1\n", "tests/test_core.py": "import sys\n" + test},
    )
    tests = [(t["file"], t["reason"], t["run"]) for t in pack_json(b)["tests_to_run"]]
    assert tests == [("tests/test_core.py", "edited", "pytest tests/test_core.py")]


def test_a_constructor_in_a_folder_named_with_a_parenthesis_keeps_its_call_sites(make_repo) -> None:
    """The class was looked up from the qualified name cut at its first ``(``, which a path may hold."""
    shop = "class Shop:\n    def __init__(self, name):\n        self.name = name\n\n\ndef make():\n    return Shop('a')\n"
    b = two_commits(
        make_repo,
        {"lib(v2)/shop.py": shop},
        {"lib(v2)/shop.py": shop.replace("self.name = name", "self.name = name.strip()")},
    )
    sites = [(s["file"], s["line"], s["callee"]) for s in pack_json(b)["call_sites"]]
    assert sites == [("lib(v2)/shop.py", 7, "Shop.__init__")]
