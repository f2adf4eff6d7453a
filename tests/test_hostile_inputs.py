"""Hostile inputs whose cost or reach the tool bounds (issue 25, items 4 and 8): a YAML alias bomb,
a deep or huge ``.knowing-pr.yml``, a config that is a symbolic link out of the repository, long
values in error messages, quadratic trace lines, a change of thousands of added files, a task text
of megabytes. Each test checks bounded work (what was read, cut and reported), never wall time."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RepoBuilder

from knowing_pr.config import load_settings
from knowing_pr.errors import ConfigError

PACKAGE_PARENT = str(Path(__file__).resolve().parents[1])


def _cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "KNOWING_PR_"))}
    env.update(PYTHONPATH=PACKAGE_PARENT, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    command = [sys.executable, "-m", "knowing_pr", *args, "--repo", str(repo)]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, check=False)


def _config_error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as raised:
        load_settings(text=text)
    return raised.value


# -- YAML ----------------------------------------------------------------------------------------


def alias_bomb(levels: int = 7, fan: int = 9) -> str:
    """``fan ** levels`` strings from a few hundred bytes (the billion laughs, in YAML)."""
    names = [chr(ord("a") + i) for i in range(levels + 1)]
    lines = [f"{names[0]}: &{names[0]} [" + ", ".join(['"lol"'] * fan) + "]"]
    for previous, name in zip(names, names[1:], strict=False):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * fan) + "]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    bomb = alias_bomb()
    assert len(bomb) < 400
    error = _config_error(bomb)
    assert "aliases" in error.message and "line 1" in error.message
    assert len(error.message) < 200


@pytest.mark.parametrize(
    "text",
    [
        "index: &shared {workers: 2}\n",  # an anchor alone
        "a: &x 1\nbudget: *x\n",  # an alias of a scalar
        "base: &b {workers: 2}\nindex: {<<: *b}\n",  # a merge key needs an alias
    ],
)
def test_anchors_and_aliases_are_refused(text: str) -> None:
    assert "anchors and aliases" in _config_error(text).message


def test_a_document_nested_too_deep_or_too_large_is_refused_before_it_is_built() -> None:
    deep = "index: " + "[" * 40 + "]" * 40 + "\n"
    assert "nests deeper than" in _config_error(deep).message
    # 100,000 levels: refused by the depth check or libyaml's own, not by Python's recursion limit
    assert "nest" in _config_error("a: " + "[" * 100_000).message
    large = "exclude:\n" + "  - x\n" * 400_000  # 2.4 MB
    assert "larger than" in _config_error(large).message
    assert "cannot be read" in _config_error("budget: " + "9" * 5000 + "\n").message


@pytest.mark.parametrize(
    "text",
    [
        "budget: '" + "y" * 100_000 + "'\n",
        "index: {languages: ['" + "z" * 100_000 + "']}\n",
        # explicit keys (``? key``): a plain key is limited to 1,024 characters
        "? " + "k" * 100_000 + "\n: 1\n",
        "index:\n  ? " + "w" * 100_000 + "\n  : 1\n",
        "rank:\n  edge_weights:\n    ? " + "e" * 100_000 + "\n    : 1\n",
        "files:\n  weights:\n    ? " + "v" * 100_000 + "\n    : fast\n",
        "equivalence_classes: [{name: '" + "n" * 100_000 + "', phrases: []}]\n",
        "!<" + "t" * 100_000 + "> a\n",
    ],
)
def test_error_messages_show_values_cut_to_a_few_dozen_characters(text: str) -> None:
    error = _config_error(text)
    assert len(error.message) < 220, error.message[:300]
    assert len(error.hint or "") < 2000  # the known keys, not the value


def test_control_characters_of_a_key_are_escaped_in_the_message() -> None:
    error = _config_error('"bad\\e]0;title\\akey": 1\n')
    assert "\x1b" not in error.message and "\\x1b" in error.message


def test_a_config_symlink_is_not_followed(make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> None:
    outside = tmp_path / "outside.yml"
    outside.write_text("secret_first_key_4711: 1\n")
    b = make_repo()
    b.write("app.py", "def f():\n    return 1\n")
    b.symlink(".knowing-pr.yml", str(outside))
    b.commit("init")
    run = _cli(b.path, "stats")
    assert run.returncode == 2, run.stderr
    assert "symbolic link" in run.stderr
    assert "secret_first_key_4711" not in run.stderr + run.stdout
    assert "Traceback" not in run.stderr
    # a dangling link too: an error, not the defaults
    b.symlink(".knowing-pr.yml", str(tmp_path / "missing.yml"))
    assert "symbolic link" in _cli(b.path, "stats").stderr


def test_a_config_that_is_a_pipe_is_refused_without_blocking(tmp_path: Path) -> None:
    pipe = tmp_path / ".knowing-pr.yml"
    os.mkfifo(pipe)
    with pytest.raises(ConfigError) as raised:
        load_settings(pipe)
    assert "not a regular file" in raised.value.message
