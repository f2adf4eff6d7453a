"""Defaults + ``.knowing-pr.yml`` + flags → one frozen ``Settings`` passed down explicitly.

- ``params.py``: every tunable, one frozen dataclass per stage, gathered in ``Settings``;
- ``defaults.py``: the built-in tables (edge weights, excludes, generic names);
- ``load.py``: the config file and a pack's recorded parameters → ``Settings``; the store's path.

The settings that can change a pack are serialised into the PackRoot (``pack_parameters``) and
restored from a manifest by ``replay --verify`` (``settings_from_params``).
"""

from __future__ import annotations

from knowing_pr.config.defaults import DEFAULT_EXCLUDES, GENERIC_NAMES, LOCK_FILES, default_edge_weights
from knowing_pr.config.load import (
    CONFIG_FILENAME,
    STORE_ENV,
    default_db_path,
    equivalence_class_fields,
    load_settings,
    removed_setting_warnings,
    repository_settings,
    settings_from_mapping,
    settings_from_params,
)
from knowing_pr.config.params import (
    FILE_MODEL_PRIOR,
    PACK_SECTIONS,
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
    canonical,
    pack_parameters,
)

__all__ = [
    "FILE_MODEL_PRIOR",
    "PACK_SECTIONS",
    "CONFIG_FILENAME",
    "DEFAULT_EXCLUDES",
    "GENERIC_NAMES",
    "LOCK_FILES",
    "STORE_ENV",
    "FileRankParams",
    "FusionParams",
    "HistoryParams",
    "IndexParams",
    "MapParams",
    "PackParams",
    "RankParams",
    "ReviewerParams",
    "Settings",
    "TaskParams",
    "canonical",
    "default_db_path",
    "default_edge_weights",
    "equivalence_class_fields",
    "load_settings",
    "removed_setting_warnings",
    "repository_settings",
    "pack_parameters",
    "settings_from_mapping",
    "settings_from_params",
]
