"""``knowing-pr map`` on a small real repository: tiers, cycles, profiles, query, budget."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from knowing_pr.config import Settings
from knowing_pr.git import GitRepo
from knowing_pr.index import index_commit
from knowing_pr.pipeline import MapRequest, build_map, open_workspace
from knowing_pr.pipeline.map import repository_name
from knowing_pr.rank.tiers import PROFILES, profile_weights, rank_files
from knowing_pr.render.context_map import purpose_from_source
from knowing_pr.store import Store

INLINE = dataclasses.replace(Settings(), index=dataclasses.replace(Settings().index, isolate_parser=False))

CORE = (
    '"""Core values every module shares."""\n\n\nclass Engine:\n    pass\n\n\n'
    "def core_value(x: int) -> int:\n    return x\n"
)


def _small_repo(make_repo) -> Path:  # type: ignore[no-untyped-def]
    b = make_repo()
    b.write("pkg/core.py", CORE)
    for n in range(1, 7):
        b.write(
            f"pkg/m{n}.py",
            f'"""Feature {n}."""\nfrom pkg.core import core_value\n\n\n'
            f"def f{n}():\n    return core_value({n})\n",
        )
    b.write("main.py", "from pkg.m1 import f1\n\n\ndef main():\n    f1()\n")
    b.write("pkg/ping.py", "from pkg.pong import pong\n\n\ndef ping():\n    return pong()\n")
    b.write("pkg/pong.py", "from pkg.ping import ping\n\n\ndef pong():\n    return ping()\n")
    b.write(
        "tests/test_core.py",
        "from pkg.core import core_value\n\n\ndef test_core():\n    assert core_value(1)\n",
    )
    b.write("docs/conf.py", "from pkg.core import core_value\n\nproject = core_value(1)\n")
    b.commit("initial")
    b.write(
        "tests/test_core.py",
        "from pkg.core import core_value\n\n\ndef test_core():\n    assert core_value(2)\n",
    )
    b.commit("touch the test")
    return b.path


def _ranks(path: Path, tmp_path: Path, **kw: object) -> dict[str, object]:
    db = tmp_path / "store.sqlite"
    index_commit(GitRepo.open(str(path)), INLINE, db_path=db)
    with Store.open(db) as store:
        return {r.path: r for r in rank_files(store, Settings(), **kw)}  # type: ignore[arg-type]


def test_core_file_imported_by_all_is_tier_1_and_tests_docs_are_tier_3(make_repo, tmp_path) -> None:
    ranks = _ranks(_small_repo(make_repo), tmp_path)
    assert ranks["pkg/core.py"].tier == 1  # type: ignore[attr-defined]
    best = max(ranks.values(), key=lambda r: r.score)  # type: ignore[attr-defined]
    assert best.path == "pkg/core.py"  # type: ignore[attr-defined]
    for forced in ("tests/test_core.py", "docs/conf.py"):
        assert ranks[forced].tier == 3 and ranks[forced].forced  # type: ignore[attr-defined]
    # the test file changed most often, yet stays in tier 3
    assert dict(ranks["tests/test_core.py"].signals)["git_frequency"] == 1.0  # type: ignore[attr-defined]


def test_import_cycle_costs_a_tenth(make_repo, tmp_path) -> None:
    ranks = _ranks(_small_repo(make_repo), tmp_path)
    ping = ranks["pkg/ping.py"]
    assert ping.in_cycle and ranks["pkg/pong.py"].in_cycle  # type: ignore[attr-defined]
    assert not ranks["pkg/core.py"].in_cycle  # type: ignore[attr-defined]
    weights = profile_weights("default")
    expected = sum(weights[k] * v for k, v in ping.signals) - 0.10  # type: ignore[attr-defined]
    assert ping.score == pytest.approx(expected, abs=1e-6)  # type: ignore[attr-defined]


def test_entry_proximity_follows_imports_from_main(make_repo, tmp_path) -> None:
    ranks = _ranks(_small_repo(make_repo), tmp_path)
    proximity = {p: dict(r.signals)["entry_proximity"] for p, r in ranks.items()}  # type: ignore[attr-defined]
    assert proximity["main.py"] == 1.0
    assert proximity["pkg/m1.py"] == 0.5
    assert proximity["pkg/core.py"] == pytest.approx(1 / 3)
    assert proximity["pkg/m2.py"] == 0.0


def test_query_takes_a_fifth_of_the_weight(make_repo, tmp_path) -> None:
    ranks = _ranks(_small_repo(make_repo), tmp_path, query="ping")
    ping = dict(ranks["pkg/ping.py"].signals)  # type: ignore[attr-defined]
    assert ping["similarity"] == 1.0
    assert ranks["pkg/ping.py"].score > ranks["pkg/pong.py"].score  # type: ignore[attr-defined]


@pytest.mark.parametrize("profile", PROFILES)
def test_profile_weights_sum_to_one(profile: str) -> None:
    assert sum(profile_weights(profile).values()) == pytest.approx(1.0)


def test_purpose_from_docstring_or_leading_comment() -> None:
    assert purpose_from_source('"""Parse things. More text."""\nx = 1\n') == "Parse things."
    assert (
        purpose_from_source("// Package cobra builds CLIs.\npackage cobra\n") == "Package cobra builds CLIs."
    )
    assert purpose_from_source("// Copyright 2020 The Authors. Licensed MIT.\npackage x\n") == ""


@pytest.mark.parametrize("budget", [120, 300, 8000])
def test_map_command_writes_context_md_within_the_budget(make_repo, tmp_path, budget: int) -> None:
    path = _small_repo(make_repo)
    ws = open_workspace(str(path), db=str(tmp_path / "store.sqlite"), budget=budget)
    text = build_map(ws, MapRequest(profile="default"))
    assert len(text) <= budget * 4
    assert text.startswith("# CONTEXT.md")
    assert "## Tier 3" in text
    if budget == 8000:
        assert "### `pkg/core.py`" in text
        assert "Core values every module shares." in text
        assert "`def core_value(x: int) -> int`" in text
        assert "Types: `class Engine`" in text


def test_map_describes_a_file_by_its_own_words_and_names_the_repository_by_its_remote(
    make_repo, tmp_path
) -> None:
    b = make_repo()
    b.write("pkg/core.py", CORE)
    b.write(
        "pkg/cookies.py",  # no module docstring: a function's docstring does not describe the file
        "from pkg.core import core_value\n\n\ndef parse_cookie(x: int) -> int:\n"
        '    """This function parses a Cookie header."""\n    return core_value(x)\n',
    )
    b.write(
        "pkg/commented.py",
        "# Helpers the commands share.\n# Second line.\nfrom pkg.core import core_value\n\n\n"
        "def helper() -> int:\n    return core_value(1)\n",
    )
    for n in range(1, 5):
        b.write(
            f"pkg/m{n}.py",
            "from pkg.cookies import parse_cookie\nfrom pkg.commented import helper\n\n\n"
            f"def f{n}() -> int:\n    return parse_cookie({n}) + helper()\n",
        )
    b.commit("initial")
    ws = open_workspace(str(b.path), db=str(tmp_path / "store.sqlite"), budget=8000)
    text = build_map(ws, MapRequest(profile="default"))
    assert text.startswith(f"# CONTEXT.md — {b.path.name}\n")  # no remote: the directory
    assert "`pkg/cookies.py`" in text and "parses a Cookie header" not in text
    assert "Helpers the commands share." in text
    assert "Core values every module shares." in text
    subprocess.run(
        ["git", "-C", str(b.path), "remote", "add", "origin", "https://example.invalid/acme/widgets.git"],
        check=True,
    )
    ws = open_workspace(str(b.path), db=str(tmp_path / "store.sqlite"), budget=8000)
    assert build_map(ws, MapRequest(profile="default")).startswith("# CONTEXT.md — widgets\n")


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("https://example.invalid/encode/starlette.git", "starlette"),
        ("git@example.invalid:encode/starlette.git", "starlette"),
        ("https://example.invalid/encode/starlette/", "starlette"),
        ("/srv/git/starlette", "starlette"),
        (None, "checkout"),
        ("", "checkout"),
    ],
)
def test_repository_name_is_the_remotes_last_path_part(url: str | None, name: str, tmp_path) -> None:
    assert repository_name(url, str(tmp_path / "checkout")) == name


def test_purpose_reads_a_prefixed_module_docstring() -> None:
    assert purpose_from_source('r"""Raw docs. More."""\n') == "Raw docs."
