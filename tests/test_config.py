"""``.knowing-pr.yml`` → ``Settings``: every section is settable and validated."""

from __future__ import annotations

import dataclasses

import pytest

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
    fields = {f.name for f in dataclasses.fields(Settings)} - {"equivalence_classes"}
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
