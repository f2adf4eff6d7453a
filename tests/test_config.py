"""``.knowing-pr.yml`` → ``Settings``: every section is settable and validated."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest
from conftest import RepoBuilder
from test_input_matrix import cli_command, cli_env

from knowing_pr.config import (
    FileRankParams,
    FusionParams,
    HistoryParams,
    IndexParams,
    MapParams,
    PackParams,
    RankParams,
    ReviewerParams,
    Settings,
    TaskParams,
    load_settings,
    pack_parameters,
    removed_setting_warnings,
)
from knowing_pr.errors import ConfigError
from knowing_pr.model import EdgeKind

SECTIONS = {
    "index": IndexParams,
    "rank": RankParams,
    "pack": PackParams,
    "history": HistoryParams,
    "fusion": FusionParams,
    "files": FileRankParams,
    "task": TaskParams,
    "map": MapParams,
    "reviewers": ReviewerParams,
}


def test_every_section_of_settings_is_a_config_section() -> None:
    fields = {f.name for f in dataclasses.fields(Settings)} - {"equivalence_classes", "removed_keys"}
    assert fields == set(SECTIONS)


@pytest.mark.parametrize("section", sorted(SECTIONS))
def test_a_numeric_key_of_each_section_is_read(section: str) -> None:
    cls = SECTIONS[section]
    name, default = next(
        (f.name, getattr(cls(), f.name))
        for f in dataclasses.fields(cls)
        if isinstance(getattr(cls(), f.name), (int, float)) and not isinstance(getattr(cls(), f.name), bool)
    )
    changed = default / 2 if isinstance(default, float) else default + 1  # within the key's range
    settings = load_settings(text=f"{section}:\n  {name}: {changed}\n")
    assert getattr(getattr(settings, section), name) == changed


@pytest.mark.parametrize("section", sorted(SECTIONS))
def test_an_unknown_key_names_itself_and_the_known_ones(section: str) -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings(text=f"{section}:\n  no_such_key: 1\n")
    assert f"'{section}.no_such_key'" in raised.value.message
    assert raised.value.hint is not None and "known settings" in raised.value.hint


def test_unknown_top_level_key_lists_the_sections() -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings(text="tasks: {}\n")
    assert raised.value.hint is not None
    for section in SECTIONS:
        assert section in raised.value.hint


def test_edge_weights_and_wrong_types() -> None:
    settings = load_settings(text="rank: {edge_weights: {calls: 0.5}}\n")
    assert settings.rank.edge_weights[EdgeKind.CALLS] == 0.5
    with pytest.raises(ConfigError):
        load_settings(text="task: {bm25_target_columns: 3}\n")
    with pytest.raises(ConfigError):
        load_settings(text="fusion: {files: -1}\n")
    assert load_settings(text="files: {weights: {walk: -0.5}}\n").files.weights == {"walk": -0.5}
    with pytest.raises(ConfigError):
        load_settings(text="files: {weights: {walk: fast}}\n")


#: a ``.knowing-pr.yml`` written for release 0.4.0: ``files.budget_share`` was removed in 0.5.0
OLD_CONFIG = "files:\n  budget_share: 0.3\n  walk_restart: 0.25\n"


def test_a_removed_key_is_ignored_with_a_warning_and_enters_no_packroot() -> None:
    settings = load_settings(text=OLD_CONFIG)
    without = load_settings(text="files:\n  walk_restart: 0.25\n")
    assert settings.removed_keys == ("files.budget_share",) and without.removed_keys == ()
    assert settings == without and pack_parameters(settings) == pack_parameters(without)
    assert "budget_share" not in json.dumps(pack_parameters(settings))
    [warning] = removed_setting_warnings(settings)
    assert "'files.budget_share'" in warning and "release 0.5.0" in warning
    assert "no longer has any effect" in warning
    assert removed_setting_warnings(without) == []
    # deleting it, as the warning asks, changes no setting (the Action's note on a PR's settings)
    from knowing_pr.pipeline.committed import settings_changes

    assert settings_changes(settings, without) == [] and settings_changes(without, settings) == []
    # only the removed key itself: one that looks like it, or sits elsewhere, is still unknown
    for text in (
        "files:\n  budget_shares: 0.3\n",
        "pack:\n  budget_share: 0.3\n",
        "budget_share: 0.3\n",
        "files.budget_share: 0.3\n",  # the removed key's dotted name as a top-level key
    ):
        with pytest.raises(ConfigError) as raised:
            load_settings(text=text)
        assert "unknown" in raised.value.message


def test_an_older_config_file_still_packs_warns_once_and_keeps_the_packroot(
    make_repo, tmp_path: Path
) -> None:
    b: RepoBuilder = make_repo()
    b.write("app.py", "def total(x):\n    return x\n\n\ndef report():\n    return total(1)\n")
    b.commit("start")
    b.write("app.py", "def total(x):\n    return x + 1\n\n\ndef report():\n    return total(1)\n")
    b.commit("change")
    old, new = tmp_path / "old.yml", tmp_path / "new.yml"
    old.write_text(OLD_CONFIG, encoding="utf-8")
    new.write_text("files:\n  walk_restart: 0.25\n", encoding="utf-8")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = cli_command(*args, "--repo", str(b.path), "--db", str(tmp_path / "store.sqlite"))
        return subprocess.run(
            command, capture_output=True, text=True, env=cli_env(), stdin=subprocess.DEVNULL
        )

    for args in (("index", "--quiet"), ("pr", "--quiet", "--format", "json"), ("stats",)):
        done = run(*args, "--config", str(old))
        assert done.returncode == 0, done.stderr
        lines = done.stderr.splitlines()
        assert lines == [
            "knowing-pr: warning: .knowing-pr.yml: 'files.budget_share' was removed in release 0.5.0 and"
            " no longer has any effect: it is ignored (delete it from the file)"
        ], args
    packed = run("pr", "--quiet", "--format", "json", "--config", str(old))
    fresh = run("pr", "--quiet", "--format", "json", "--config", str(new))
    assert fresh.returncode == 0 and fresh.stderr == ""
    assert json.loads(packed.stdout)["pack_root"] == json.loads(fresh.stdout)["pack_root"]
    tmp_path.joinpath("unknown.yml").write_text("files:\n  budget_shares: 0.3\n", encoding="utf-8")
    refused = run("pr", "--quiet", "--config", str(tmp_path / "unknown.yml"))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.startswith(
        "knowing-pr: error: .knowing-pr.yml: unknown setting 'files.budget_shares'"
    )
