"""Globs written in the repository become regular expressions only in shapes whose match cannot
backtrack for long (knowing_pr/globs.py): a test runner's include and a CODEOWNERS rule alike.
The checks are on the shapes, never on a clock."""

from __future__ import annotations

import re

import pytest

from knowing_pr.globs import bounded_glob
from knowing_pr.history.codeowners import parse_codeowners
from knowing_pr.rank.runnerconfig import glob_regex, read_runner_config

#: what real configs write: Jest's default testMatch, Vitest's, vite's end-to-end include
REAL = [
    "**/__tests__/**/*.[jt]s?(x)",
    "**/?(*.)+(spec|test).[jt]s?(x)",
    "**/*.{test,spec}.?(c|m)[jt]s?(x)",
    "./playground/**/*.spec.[tj]s",
    "src/**/*.{test,spec}.{ts,tsx}",
]
#: each backtracks for seconds or more on a name of a few dozen characters in Python's re
HOSTILE = [
    "*a*a*a*a*a*a*a*a*a*a*b",  # polynomial of degree 11 in one segment
    "+(+(a))b",  # a repetition inside a repetition: exponential
    "+(a|aa)b",  # alternatives that repeat in many ways: exponential
    "*(a|ab)c",
    "{a,{b,c}}x",
    "**/**/**/**/**/x",
    "a" * 300,
    "*a**a**a**a**b",  # a "**" inside a name crosses "/" and multiplies with the stars beside it
    "x**a**a**a**b",
    "**/*a*/**/*a*/**/*a*/**/*a*/b",  # each "**" may take any number of directories: C(n, k)
    "**/a/**/b/**/c",
]


@pytest.mark.parametrize("glob", REAL)
def test_the_globs_real_configs_write_are_read(glob: str) -> None:
    assert bounded_glob(glob) and glob_regex(glob) is not None


@pytest.mark.parametrize("glob", HOSTILE)
def test_a_glob_that_could_backtrack_for_long_is_not_read(glob: str) -> None:
    assert not bounded_glob(glob)
    assert glob_regex(glob) is None


def test_stars_in_different_segments_do_not_add_up() -> None:
    assert bounded_glob("*a*/*b*/*c*/*d*")
    assert not bounded_glob("*a*b*")


def test_a_runner_config_with_a_hostile_include_binds_nothing() -> None:
    source = (
        "export default { test: { include: ['" + HOSTILE[0] + "'], setupFiles: ['./setup.ts'] } }\n"
    ).encode()
    assert read_runner_config("vitest.config.ts", source) is None


def test_a_hostile_codeowners_rule_owns_nothing_and_the_others_still_do() -> None:
    owners = parse_codeowners(
        "*a" * 15 + "*b @stars\n" + "**/" * 40 + "x @deep\n" + "+(a|aa)b @ext\n" + "/src/**/y.py @ok\n"
    )
    assert [rule.pattern for rule in owners.rules] == ["/src/**/y.py"]
    assert owners.owners_of("a" * 30 + "b") == ()
    assert owners.owners_of("src/p/q/y.py") == ("@ok",)


def test_the_directories_of_a_long_hostile_path_are_read_one_way() -> None:
    """Within the bounds, a match reads a path's directories one way: "**" is whole segments, each
    step ends at a "/" (a CODEOWNERS "**" was ``.*/`` before, and took seconds on long paths). The
    match is not timed here: the worst allowed shape must still read and say no."""
    from knowing_pr.history.codeowners import _pattern_regex

    path = "a/" * 400 + "c"
    for glob in ("*a*/**/*a*/**/b", "**/a*a/**/b"):
        for regex in (glob_regex(glob), _pattern_regex(glob)):
            assert regex is not None and regex.fullmatch(path) is None
            assert ".*/" not in regex.pattern  # no step that can end at any "/" (the match is not timed)
    assert "(?:[^/]*/)*" in (_pattern_regex("docs/**/x.md") or re.compile("")).pattern


@pytest.mark.parametrize("glob", ["a/[a--z].ts", "a/[a&&b].ts", "a/[~~x].ts", "a/[a||b].ts", "a/[[x].ts"])
def test_a_character_class_of_set_operators_reads_without_a_warning(glob: str) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # re's FutureWarning would print repository text on stderr
        regex = glob_regex(glob)
    assert regex is None or not regex.fullmatch("a/zz.ts")
