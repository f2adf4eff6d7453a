"""Defaults + ``.knowing-pr.yml`` + flags → one frozen ``Settings`` passed down explicitly.

Every tunable of the tool lives here; no module keeps its own tuning globals. The parts of
``RankParams`` and ``PackParams`` that change a pack are serialised into the PackRoot.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowing_pr.errors import ConfigError
from knowing_pr.model import EdgeKind

__all__ = [
    "CONFIG_FILENAME",
    "HistoryParams",
    "IndexParams",
    "PackParams",
    "RankParams",
    "Settings",
    "default_edge_weights",
    "load_settings",
]

CONFIG_FILENAME = ".knowing-pr.yml"


def default_edge_weights() -> dict[EdgeKind, float]:
    """RWR transition weights per edge kind (seeds 002/003, RWR edge weights table)."""
    return {
        EdgeKind.CALLS: 1.0,
        EdgeKind.IMPLEMENTS: 0.8,
        EdgeKind.CONTAINS: 0.8,
        EdgeKind.EXTENDS: 0.7,
        EdgeKind.TESTS: 0.6,
        EdgeKind.MEMBER_OF: 0.6,
        EdgeKind.IMPORTS: 0.5,
        EdgeKind.REFERENCES: 0.4,
        EdgeKind.INHERITS: 0.3,
        EdgeKind.CO_CHANGED_WITH: 0.5,
    }


DEFAULT_EXCLUDES = (
    "node_modules/**",
    "**/node_modules/**",
    "vendor/**",
    "**/vendor/**",
    "dist/**",
    "**/dist/**",
    "build/**",
    "**/build/**",
    "third_party/**",
    "**/third_party/**",
    "*.min.js",
    "**/*.min.js",
    "*.bundle.js",
    "**/*.bundle.js",
)

LOCK_FILES = frozenset(
    {
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "Pipfile.lock",
        "Cargo.lock",
        "go.sum",
        "composer.lock",
        "Gemfile.lock",
        "uv.lock",
    }
)


GENERIC_NAMES = (
    "get",
    "set",
    "run",
    "add",
    "put",
    "post",
    "call",
    "new",
    "init",
    "__init__",
    "close",
    "open",
    "read",
    "write",
    "update",
    "delete",
    "remove",
    "append",
    "start",
    "stop",
    "main",
    "apply",
    "process",
    "handle",
    "execute",
    "len",
    "str",
    "list",
    "dict",
    "map",
    "filter",
    "send",
    "emit",
    "load",
    "save",
    "parse",
    "format",
    "render",
    "validate",
    "clean",
    "copy",
    "reset",
    "clear",
    "build",
    "create",
    "make",
    "next",
    "value",
    "values",
    "keys",
    "items",
    "push",
    "pop",
    "join",
    "split",
    "first",
    "last",
    "find",
    "count",
    "size",
    "length",
    "toString",
    "equals",
    "hashCode",
    "to_s",
    "each",
    "inspect",
    "then",
    "catch",
    "log",
    "debug",
    "info",
    "warn",
    "error",
    "print",
    "println",
    "printf",
    "Printf",
    "Println",
    "Sprintf",
    "Errorf",
    "New",
    "Error",
    "String",
    "test",
    "setUp",
    "tearDown",
    "__str__",
    "__repr__",
    "__eq__",
    "__call__",
    "default",
    "from",
    "into",
    "unwrap",
    "clone",
    "fmt",
    "drop",
    "Dispose",
    "ToString",
    "Equals",
    "GetHashCode",
    "is",
    "has",
)


@dataclass(frozen=True)
class IndexParams:
    max_file_bytes: int = 1 << 20
    #: a line longer than this marks a file as minified/generated
    max_line_bytes: int = 5000
    excludes: tuple[str, ...] = DEFAULT_EXCLUDES
    extra_excludes: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()  # empty = all supported
    parse_timeout_s: float = 10.0
    parse_memory_mb: int = 1024
    #: run the parser in a worker process (protects against C-level crashes)
    isolate_parser: bool = True
    #: batches up to this size are parsed in a fork of the indexing process (still isolated)
    fork_max_files: int = 16
    fork_max_bytes: int = 1 << 20
    #: ``PRAGMA quick_check`` before a write when the file changed since this tool last wrote
    #: it (restored caches, copies, damage), so a damaged page is never built upon
    verify_before_write: bool = True
    #: an incremental update that resolves at least this share of the indexed files loads the
    #: whole symbol table at once (as a full index does) instead of asking the store per name:
    #: per-name lookups win for everyday commits, one bulk read for a 2,000-file PR
    eager_symbols_share: float = 0.02
    workers: int = 0  # 0 = os.cpu_count()
    # confidence of a resolved edge by how it was resolved (import > class > file > package > global)
    confidence_import: float = 0.95
    confidence_same_class: float = 0.9
    confidence_same_file: float = 0.85
    confidence_same_package: float = 0.7
    confidence_global_unique: float = 0.5
    confidence_receiver_guess: float = 0.4
    #: names too generic to resolve by package or global uniqueness (seed 003's blocklist, widened)
    generic_names: tuple[str, ...] = GENERIC_NAMES

    def canonical(self) -> dict[str, Any]:
        """What changes the graph: a different value forces a full re-index."""
        data = dataclasses.asdict(self)
        for key in (
            "parse_timeout_s",
            "parse_memory_mb",
            "isolate_parser",
            "workers",
            "verify_before_write",
            "fork_max_files",
            "fork_max_bytes",
            "eager_symbols_share",  # the same graph either way: only the speed differs
        ):
            data.pop(key)
        return data

    def is_excluded(self, path: str) -> bool:
        name = path.rsplit("/", 1)[-1]
        if name in LOCK_FILES:
            return True
        return any(fnmatch.fnmatchcase(path, pat) for pat in (*self.excludes, *self.extra_excludes))


@dataclass(frozen=True)
class RankParams:
    restart_prob: float = 0.2
    max_iter: int = 20
    tol_l1: float = 1e-3
    score_cutoff: float = 0.05
    hits_top_n: int = 200
    hits_iter: int = 10
    #: BFS depth for the distance component (seed 003); a node further away counts as one more
    max_hops: int = 4
    #: recency of a symbol whose file has no history (seed 003: static-only symbols get 0.3)
    unknown_recency: float = 0.3
    edge_weights: Mapping[EdgeKind, float] = field(default_factory=default_edge_weights)
    #: restart weight of a symbol overlapping a changed hunk vs. another symbol of a changed file
    seed_weight_hunk: float = 1.0
    seed_weight_file: float = 0.3
    seed_weight_deleted_caller: float = 0.6
    # scoring formula (seed 003, HITS-enhanced mode)
    weight_blast: float = 0.35
    weight_confidence: float = 0.20
    weight_recency: float = 0.15
    weight_distance: float = 0.15
    authority_seed_bonus: float = 0.25
    authority_nonseed_penalty: float = 0.15
    authority_seed_threshold: float = 0.05
    authority_nonseed_threshold: float = 0.2
    hub_seed_bonus: float = 0.10
    hub_seed_threshold: float = 0.1
    test_penalty: float = 0.3
    # task mode (seeds 002/003)
    rrf_k: int = 60
    max_seeds: int = 15

    def canonical(self) -> dict[str, Any]:
        """The parameters that change a pack, in a stable JSON-able form (for the PackRoot)."""
        data = dataclasses.asdict(self)
        data["edge_weights"] = {k.label: round(v, 6) for k, v in sorted(self.edge_weights.items())}
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in sorted(data.items())}


@dataclass(frozen=True)
class PackParams:
    budget_tokens: int = 8000
    proximity_exponent: float = 0.3
    chars_per_token: float = 4.0
    #: share of the budget reserved for tests in a PR pack (they fill their own group)
    test_share: float = 0.25

    def canonical(self) -> dict[str, Any]:
        return {
            k: (round(v, 6) if isinstance(v, float) else v)
            for k, v in sorted(dataclasses.asdict(self).items())
        }


@dataclass(frozen=True)
class HistoryParams:
    enabled: bool = True
    max_files_per_commit: int = 30
    half_life_days: float = 180.0
    max_commits: int = 50000
    min_support: int = 2
    # -- co-change in ranking (knowing_pr/cochange.py; docs/history.md) --
    #: co-change edges kept per file (its partners with the highest confidence)
    cochange_max_partners: int = 8
    #: share of the walk leaving a file node along co-change edges =
    #: edge_weights[co_changed_with] x cochange_gain x predictiveness, at most cochange_max_share
    cochange_gain: float = 6.0
    cochange_max_share: float = 0.8
    #: first-parent commits of the head replayed to measure how predictive the history is
    predictiveness_window: int = 40
    predictiveness_top_k: int = 10
    #: "often changed together" rows in a PR pack
    cochange_list_limit: int = 8
    # recency of a file's last change, relative to the newest mined commit (seed 003's steps)
    recency_within_1d: float = 1.0
    recency_within_7d: float = 0.8
    recency_within_30d: float = 0.5
    recency_older: float = 0.2
    #: share of the recency signal taken by the file's decayed churn (vs. the age step)
    churn_share: float = 0.3


@dataclass(frozen=True)
class Settings:
    index: IndexParams = field(default_factory=IndexParams)
    rank: RankParams = field(default_factory=RankParams)
    pack: PackParams = field(default_factory=PackParams)
    history: HistoryParams = field(default_factory=HistoryParams)
    equivalence_classes: tuple[Mapping[str, Any], ...] = ()

    def with_budget(self, budget_tokens: int | None) -> Settings:
        if budget_tokens is None:
            return self
        if budget_tokens < 1:
            raise ConfigError(f"budget must be a positive number of tokens, got {budget_tokens}")
        return dataclasses.replace(self, pack=dataclasses.replace(self.pack, budget_tokens=budget_tokens))


_SECTIONS: dict[str, type[Any]] = {
    "index": IndexParams,
    "rank": RankParams,
    "pack": PackParams,
    "history": HistoryParams,
}


def _coerce(section: str, cls: type[Any], raw: Any) -> Any:
    if not isinstance(raw, dict):
        raise ConfigError(f"{CONFIG_FILENAME}: '{section}' must be a mapping, got {type(raw).__name__}")
    known = {f.name: f for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in known:
            raise ConfigError(
                f"{CONFIG_FILENAME}: unknown setting '{section}.{key}'",
                hint="known settings: " + ", ".join(sorted(known)),
            )
        default = getattr(cls(), key)
        if key == "edge_weights":
            values[key] = _edge_weights(value)
            continue
        if isinstance(default, tuple):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{CONFIG_FILENAME}: '{section}.{key}' must be a list of strings")
            values[key] = tuple(value)
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise ConfigError(f"{CONFIG_FILENAME}: '{section}.{key}' must be true or false")
            values[key] = value
        elif isinstance(default, (int, float)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"{CONFIG_FILENAME}: '{section}.{key}' must be a number")
            if value < 0:
                raise ConfigError(f"{CONFIG_FILENAME}: '{section}.{key}' must not be negative")
            values[key] = type(default)(value)
        else:
            values[key] = value
    return cls(**values)


def _edge_weights(raw: Any) -> dict[EdgeKind, float]:
    if not isinstance(raw, dict):
        raise ConfigError(f"{CONFIG_FILENAME}: 'rank.edge_weights' must be a mapping")
    weights = default_edge_weights()
    for key, value in raw.items():
        try:
            kind = EdgeKind[str(key).upper()]
        except KeyError:
            raise ConfigError(
                f"{CONFIG_FILENAME}: unknown edge type '{key}'",
                hint="edge types: " + ", ".join(k.label for k in EdgeKind),
            ) from None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ConfigError(f"{CONFIG_FILENAME}: weight of '{key}' must be a number >= 0")
        weights[kind] = float(value)
    return weights


def settings_from_mapping(data: Mapping[str, Any]) -> Settings:
    """Validate a parsed config mapping into ``Settings`` (clear errors, no tracebacks)."""
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key in _SECTIONS:
            kwargs[key] = _coerce(key, _SECTIONS[key], value)
        elif key == "exclude":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{CONFIG_FILENAME}: 'exclude' must be a list of glob patterns")
            kwargs.setdefault("index", IndexParams())
            kwargs["index"] = dataclasses.replace(kwargs["index"], extra_excludes=tuple(value))
        elif key == "budget":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{CONFIG_FILENAME}: 'budget' must be a positive integer")
            kwargs["pack"] = dataclasses.replace(kwargs.get("pack", PackParams()), budget_tokens=value)
        elif key == "equivalence_classes":
            if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                raise ConfigError(f"{CONFIG_FILENAME}: 'equivalence_classes' must be a list of mappings")
            kwargs[key] = tuple(value)
        else:
            raise ConfigError(
                f"{CONFIG_FILENAME}: unknown top-level key '{key}'",
                hint="known keys: budget, exclude, index, rank, pack, history, equivalence_classes",
            )
    return Settings(**kwargs)


def load_settings(config_path: str | os.PathLike[str] | None = None, *, text: str | None = None) -> Settings:
    """Read ``.knowing-pr.yml`` (from a path or given text); a missing file means defaults."""
    if text is None:
        if config_path is None:
            return Settings()
        path = Path(config_path)
        if not path.is_file():
            return Settings()
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read {path.name}: {exc}") from None
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{CONFIG_FILENAME} is not valid YAML: {exc}") from None
    if data is None:
        return Settings()
    if not isinstance(data, dict):
        raise ConfigError(f"{CONFIG_FILENAME} must be a mapping at the top level")
    return settings_from_mapping(data)


STORE_ENV = "KNOWING_PR_DB"


def default_db_path(git_dir: str | os.PathLike[str]) -> Path:
    """Where a repository's store lives: ``<git dir>/knowing-pr/index.sqlite``.

    The per-worktree git dir (not the common dir) keeps linked worktrees, which have their
    own HEAD, from fighting over one store. ``KNOWING_PR_DB`` overrides it.
    """
    override = os.environ.get(STORE_ENV)
    if override:
        return Path(override)
    return Path(git_dir) / "knowing-pr" / "index.sqlite"


def settings_from_params(base: Settings, params: Mapping[str, Any]) -> Settings:
    """``base`` with the ranking and packing parameters a pack recorded (for exact replay)."""
    rank_raw = dict(params.get("rank") or {})
    pack_raw = dict(params.get("pack") or {})
    rank_fields = {f.name for f in dataclasses.fields(RankParams)}
    pack_fields = {f.name for f in dataclasses.fields(PackParams)}
    try:
        weights = {
            EdgeKind[str(k).upper()]: float(v) for k, v in (rank_raw.pop("edge_weights", None) or {}).items()
        }
        changes: dict[str, Any] = {k: v for k, v in rank_raw.items() if k in rank_fields}
        if weights:
            changes["edge_weights"] = weights
        rank = dataclasses.replace(base.rank, **changes)
        pack = dataclasses.replace(base.pack, **{k: v for k, v in pack_raw.items() if k in pack_fields})
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"the recorded pack parameters are invalid: {exc}") from None
    return dataclasses.replace(base, rank=rank, pack=pack)
