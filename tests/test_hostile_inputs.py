"""Hostile inputs whose cost or reach the tool bounds (issue 25, items 4 and 8): a YAML alias bomb,
a deep or huge ``.knowing-pr.yml``, a config that is a symbolic link out of the repository, long
values in error messages, quadratic trace lines, a change of thousands of added files, a task text
of megabytes. Each test checks bounded work (what was read, cut and reported), never wall time."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RepoBuilder
from hypothesis import given, settings
from hypothesis import strategies as st

from knowing_pr.cli import main
from knowing_pr.config import load_settings
from knowing_pr.errors import ConfigError
from knowing_pr.parse.sketch import EMPTY, content_sketch
from knowing_pr.pipeline import TaskRequest, build_task_pack, open_workspace

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


# -- task text and stack traces ------------------------------------------------------------------

CART_GO = """package cart

type Cart struct{ items []int }

func (c *Cart) Total() int {
\tsum := 0
\tfor i := 0; i <= len(c.items); i++ {
\t\tsum += c.items[i]
\t}
\treturn sum
}
"""

#: the Go function-line pattern of 99a3a56 (quadratic on a long line): the reference the linear
#: check must agree with on short lines
OLD_GO_FUNC = re.compile(r"^(?P<fn>(?:[\w.\-/]+/)?[\w.\-]+\.(?:\(\*?[\w\[\], ]+\)\.)?[\w.$\[\]]+)\(.*\)\s*$")


@pytest.fixture
def go_repo(make_repo: Callable[..., RepoBuilder]) -> RepoBuilder:
    b = make_repo()
    b.write("shop/cart/cart.go", CART_GO)
    b.commit("init")
    return b


def test_a_long_go_frame_line_is_not_read_and_the_task_says_so(
    go_repo: RepoBuilder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 40,000 characters: 25 s in the quadratic pattern of 99a3a56; here the line is left out, counted
    hostile = "a." * 20_000 + "a("  # a call that never closes: the old pattern tried every split
    log = tmp_path / "panic.log"
    log.write_text(
        "goroutine 1 [running]:\n"
        f"{hostile}\n\t/src/x.go:1 +0x1\n"
        "example.com/shop/cart.(*Cart).Total(0xc000010018)\n\t/home/dev/shop/cart/cart.go:8 +0x1d\n"
    )
    out = tmp_path / "pack.json"
    args = ["task", "the cart total panics", "--repo", str(go_repo.path), "--error-file", str(log)]
    assert main([*args, "--format", "json", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "1 line(s) longer than 2,000 characters not read as stack frames" in err
    data = json.loads(out.read_text())
    assert data["inputs"]["limits_hit"] == [err.split("warning: ", 1)[1].strip()]
    assert any(s["qualified_name"].endswith("Cart.Total") and s["is_seed"] for s in data["symbols"])


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(["a", "b1", ".", "/", "-", "(", ")", "(*T)", "*", "[", "]", ", ", "$", "é"]),
        max_size=12,
    )
)
def test_the_linear_go_function_check_agrees_with_the_old_pattern(parts: list[str]) -> None:
    from knowing_pr.task.traces import go_function

    line = "".join(parts).strip()
    old = OLD_GO_FUNC.match(line)
    assert go_function(line) == (old["fn"] if old else None)


def test_a_task_text_beyond_the_cap_is_cut_and_reported(go_repo: RepoBuilder) -> None:
    workspace = open_workspace(go_repo.path)
    text = "the cart Total panics\n" + ("word " * 99 + "word\n") * 600  # 300,022 characters
    run = build_task_pack(workspace, TaskRequest(text))
    assert len(run.analysis.task) == 100_000
    assert run.pack.inputs["limits_hit"] == [
        f"the task text was cut to its first 100,000 of {len(text):,} characters (task.max_text_chars)"
    ]
    assert workspace.warnings == run.pack.inputs["limits_hit"]


# -- the content-similarity signal ---------------------------------------------------------------


def test_a_change_of_many_identical_files_is_compared_up_to_the_bound_and_says_so(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b = make_repo()
    b.write("src/shop.py", "def charge(amount, currency):\n    return amount\n")
    b.write(".knowing-pr.yml", "files: {similarity_max_matches: 100000}\n")
    base = b.commit("init")
    body = "def total(items):\n    return sum(item.price * item.count for item in items)\n"
    for i in range(300):  # 300 copies: every sketch value is shared by 300 files
        b.write(f"gen/copy{i:03}.py", body)
    head = b.commit("add copies")
    out = tmp_path / "pack.json"
    args = [
        "pr",
        "--repo",
        str(b.path),
        "--base",
        base,
        "--head",
        head,
        "--format",
        "json",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    # each copy meets the 300 copies in each of its sketch's filled bins, so 100,000 matches hold
    # 100,000 // (300 × filled) copies (the others are not compared)
    filled = int((content_sketch(body.encode()) != EMPTY).sum())
    compared = 100_000 // (300 * filled)
    assert 0 < compared < 300
    note = (
        f"content near-duplicates: {compared} of 300 changed files compared (their files shared "
        "100,000 sketch values: files.similarity_max_matches)"
    )
    assert json.loads(out.read_text())["inputs"]["limits_hit"] == [note]
    assert f"warning: {note}" in capsys.readouterr().err


def test_near_duplicates_look_only_at_shared_sketch_values() -> None:
    import numpy as np

    from knowing_pr.history.similarity import near_duplicates

    matrix = np.arange(20_000 * 64, dtype=np.uint32).reshape(20_000, 64)  # 20,000 distinct files
    matrix[1] = matrix[0]  # and one pair of copies
    found = near_duplicates(matrix, list(range(20_000)), max_matches=10**9)
    # all-pairs would look at 20,000 × 20,000 × 64 bins; the buckets meet each file and its copy
    assert found.compared == 20_000 and found.matches == 20_000 * 64 + 2 * 64
    assert found.best[0] == found.best[1] == 1.0 and found.best[2:].max() == 0.0


def test_the_bounded_similarities_equal_the_all_pairs_ones() -> None:
    import random

    import numpy as np

    from knowing_pr.graph.paths import is_test_path
    from knowing_pr.history.fileinputs import dir_steps, path_info
    from knowing_pr.history.similarity import best_token_overlap, directory_distances, near_duplicates
    from knowing_pr.parse.sketch import resemblance

    rng = random.Random(7)
    words = [f"w{i}" for i in range(400)]
    bases = [[rng.choice(words) for _ in range(rng.randint(0, 200))] for _ in range(6)]
    texts = []
    for _ in range(300):  # families of near-copies, some empty
        text = list(rng.choice(bases))
        for _ in range(rng.randint(0, 30)):
            if text:
                text[rng.randrange(len(text))] = rng.choice(words)
        texts.append(" ".join(text).encode())
    matrix = np.stack([content_sketch(t) for t in texts])
    sources = sorted(rng.sample(range(300), 40))
    expected = np.zeros(300)
    for s in sources:
        alike = resemblance(matrix, matrix[s])
        alike[s] = 0.0
        expected = np.maximum(expected, alike)
    assert np.array_equal(near_duplicates(matrix, sources, 10**9).best, expected)
    assert expected.max() > 0.5  # near-copies were there to find

    dirs = ["", "a", "a/b", "a/b/c", "a/x", "d", "d/e/f"]
    infos = [
        path_info(
            f"{rng.choice(dirs)}/{rng.choice(['foo', 'bar_baz', 'FooTest', 'x'])}{i}.py".lstrip("/"),
            is_test_path,
        )
        for i in range(200)
    ]
    changed = infos[:25]
    overlap = best_token_overlap([i.tokens for i in infos], (c.tokens for c in changed)).tolist()
    distances = directory_distances((c.parts for c in changed), (i.parts for i in infos))
    for k, info in enumerate(infos):
        shared = [len(info.tokens & c.tokens) for c in changed]
        jaccard = max(
            n / (len(info.tokens) + len(c.tokens) - n) for n, c in zip(shared, changed, strict=True)
        )
        assert overlap[k] == jaccard
        assert distances[info.parts] == min(dir_steps(info.parts, c.parts) for c in changed)
