"""Defaults + ``.knowing-pr.yml`` + flags → one frozen ``Settings`` passed down explicitly.

- ``params.py``: every tunable, one frozen dataclass per stage, gathered in ``Settings``;
- ``defaults.py``: the built-in tables (edge weights, excludes, generic names);
- ``load.py``: the config file and a pack's recorded parameters → ``Settings``; the store's path.

The parameters that change a pack are serialised into the PackRoot (``Settings.pack_params``).
"""

from __future__ import annotations

from knowing_pr.config.defaults import DEFAULT_EXCLUDES, GENERIC_NAMES, LOCK_FILES, default_edge_weights
from knowing_pr.config.load import (
    CONFIG_FILENAME,
    STORE_ENV,
    default_db_path,
    load_settings,
    settings_from_mapping,
    settings_from_params,
)
from knowing_pr.config.params import (
    FusionParams,
    HistoryParams,
    IndexParams,
    MapParams,
    PackParams,
    RankParams,
    Settings,
    TaskParams,
)

__all__ = [
    "CONFIG_FILENAME",
    "DEFAULT_EXCLUDES",
    "GENERIC_NAMES",
    "LOCK_FILES",
    "STORE_ENV",
    "FusionParams",
    "HistoryParams",
    "IndexParams",
    "MapParams",
    "PackParams",
    "RankParams",
    "Settings",
    "TaskParams",
    "default_db_path",
    "default_edge_weights",
    "load_settings",
    "settings_from_mapping",
    "settings_from_params",
]
