"""``.knowing-pr.yml`` (and a pack's recorded parameters) → a validated ``Settings``; where a
repository's store lives.

Validation gives one clear ``ConfigError`` per problem, naming the key; unknown keys are errors.
A key a release removed (``REMOVED_SETTINGS``) is no error: a file written for an older release
still loads, the key is ignored and named in ``Settings.removed_keys``, which the command line
and the Action turn into one warning each (``removed_setting_warnings``).
"""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from knowing_pr.config.defaults import default_edge_weights
from knowing_pr.config.limits import LIMITS, Limit, checked_number, shown, shown_name
from knowing_pr.config.params import (
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
)
from knowing_pr.errors import ConfigError
from knowing_pr.model import LANGUAGES, EdgeKind

__all__ = [
    "CONFIG_FILENAME",
    "STORE_ENV",
    "default_db_path",
    "equivalence_class_fields",
    "load_settings",
    "removed_setting_warnings",
    "repository_settings",
    "settings_from_mapping",
    "settings_from_params",
]

CONFIG_FILENAME = ".knowing-pr.yml"

#: settings a release removed ("section.key", or a top-level key) → that release: a file that
#: still sets one loads, with a warning, and the value changes nothing
REMOVED_SETTINGS: Mapping[str, str] = {
    "files.budget_share": "0.5.0",  # the JSON/XML file list is whole, whatever the budget
}

_SECTIONS: dict[str, type[Any]] = {
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


#: a model weight read from the file (``files.weights``, ``files.prior``)
MODEL_WEIGHT = Limit(-1000, 1000)
#: the file model's fit objectives (``history.filemodel``)
FILE_MODEL_OBJECTIVES = ("pairwise", "pointwise")


def _coerce(section: str, cls: type[Any], raw: Any, removed: list[str]) -> Any:
    """The section's dataclass from its mapping; the removed keys it sets go to ``removed``."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{CONFIG_FILENAME}: '{section}' must be a mapping, got {type(raw).__name__}")
    known = {f.name: f for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in known and f"{section}.{key}" in REMOVED_SETTINGS:
            removed.append(f"{section}.{key}")
            continue
        if key not in known:
            raise ConfigError(
                f"{CONFIG_FILENAME}: unknown setting '{section}.{shown_name(key)}'",
                hint="known settings: " + ", ".join(sorted(known)),
            )
        default = getattr(cls(), key)
        if key == "edge_weights":
            values[key] = _edge_weights(value)
            continue
        if isinstance(default, Mapping):
            values[key] = _number_map(f"{section}.{key}", value)
            continue
        if isinstance(default, tuple):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(
                    f"{CONFIG_FILENAME}: '{section}.{key}' must be a list of strings, got {shown(value)}"
                )
            if section == "index" and key == "languages":
                _check_languages(value)
            values[key] = tuple(value)
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise ConfigError(
                    f"{CONFIG_FILENAME}: '{section}.{key}' must be true or false, got {shown(value)}"
                )
            values[key] = value
        elif isinstance(default, (int, float)):
            values[key] = _number(f"{section}.{key}", default, value, CONFIG_FILENAME)
        elif section == "files" and key == "objective":
            values[key] = _choice("files.objective", value, FILE_MODEL_OBJECTIVES)
        else:
            values[key] = value
    return cls(**values)


def _number_map(name: str, raw: Any) -> dict[str, float]:
    """A mapping of names to finite numbers (a model's weights, each within ``MODEL_WEIGHT``)."""
    if not isinstance(raw, Mapping) or not all(isinstance(k, str) for k in raw):
        raise ConfigError(
            f"{CONFIG_FILENAME}: '{name}' must be a mapping of names to numbers, got {shown(raw)}"
        )
    return {
        k: float(checked_number(CONFIG_FILENAME, f"{name}.{k}", v, whole=False, limit=MODEL_WEIGHT))
        for k, v in raw.items()
    }


def _choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ConfigError(
            f"{CONFIG_FILENAME}: '{name}' must be one of {', '.join(choices)}, got {shown(value)}"
        )
    return str(value)


def _check_languages(names: list[str]) -> None:
    known = sorted(LANGUAGES)
    for name in names:
        if name not in known:
            raise ConfigError(
                f"{CONFIG_FILENAME}: 'index.languages' names an unknown language {shown(name)}",
                hint="languages: " + ", ".join(known),
            )


def _edge_weights(raw: Any) -> dict[EdgeKind, float]:
    if not isinstance(raw, dict):
        raise ConfigError(f"{CONFIG_FILENAME}: 'rank.edge_weights' must be a mapping")
    weights = default_edge_weights()
    for key, value in raw.items():
        try:
            kind = EdgeKind[str(key).upper()]
        except KeyError:
            raise ConfigError(
                f"{CONFIG_FILENAME}: 'rank.edge_weights' names an unknown edge type '{shown_name(key)}'",
                hint="edge types: " + ", ".join(k.label for k in EdgeKind),
            ) from None
        weights[kind] = float(
            checked_number(
                CONFIG_FILENAME,
                f"rank.edge_weights.{key}",
                value,
                whole=False,
                limit=LIMITS["rank.edge_weights"],
            )
        )
    return weights


def _number(key: str, default: int | float, value: Any, where: str) -> int | float:
    """A numeric setting checked against its limit, as the type of its default."""
    whole = isinstance(default, int)
    checked = checked_number(where, key, value, whole=whole)
    return int(checked) if whole else float(checked)


def settings_from_mapping(data: Mapping[str, Any]) -> Settings:
    """Validate a parsed config mapping into ``Settings`` (clear errors, no tracebacks)."""
    kwargs: dict[str, Any] = {}
    removed: list[str] = []
    for key, value in data.items():
        if key in _SECTIONS:
            kwargs[key] = _coerce(key, _SECTIONS[key], value, removed)
        elif isinstance(key, str) and "." not in key and key in REMOVED_SETTINGS:  # a removed top-level key
            removed.append(key)
        elif key == "exclude":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{CONFIG_FILENAME}: 'exclude' must be a list of glob patterns")
            kwargs.setdefault("index", IndexParams())
            kwargs["index"] = dataclasses.replace(kwargs["index"], extra_excludes=tuple(value))
        elif key == "budget":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"{CONFIG_FILENAME}: 'budget' must be a whole number, got {shown(value)}")
            limit = LIMITS["pack.budget_tokens"]
            if not limit.admits(value):
                raise ConfigError(
                    f"{CONFIG_FILENAME}: 'budget' must be {limit.describe()}, got {shown(value)}"
                )
            kwargs["pack"] = dataclasses.replace(kwargs.get("pack", PackParams()), budget_tokens=value)
        elif key == "equivalence_classes":
            if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                raise ConfigError(f"{CONFIG_FILENAME}: 'equivalence_classes' must be a list of mappings")
            try:  # refused now, not in the middle of a task
                for position, item in enumerate(value, 1):
                    equivalence_class_fields(item, position, 1.0)
            except ConfigError as exc:
                raise ConfigError(
                    f"{CONFIG_FILENAME}: 'equivalence_classes': {exc.message}", hint=exc.hint
                ) from None
            kwargs[key] = tuple(value)
        else:
            raise ConfigError(
                f"{CONFIG_FILENAME}: unknown top-level key '{shown_name(key)}'",
                hint="known keys: budget, exclude, equivalence_classes, " + ", ".join(_SECTIONS),
            )
    return Settings(**kwargs, removed_keys=tuple(removed))


def removed_setting_warnings(settings: Settings) -> list[str]:
    """One warning per removed setting the settings file still sets (``REMOVED_SETTINGS``)."""
    return [
        f"{CONFIG_FILENAME}: '{key}' was removed in release {REMOVED_SETTINGS[key]} and no longer has"
        " any effect: it is ignored (delete it from the file)"
        for key in settings.removed_keys
    ]


def repository_settings(workdir: str | None, config: str | None) -> Settings:
    """The settings a command on a repository uses: the ``config`` file named (``--config``),
    else the work tree's ``.knowing-pr.yml``, else the defaults (a bare repository)."""
    if config is not None:
        _check_config_file(config)
        return load_settings(config)
    if workdir is not None:
        return load_settings(Path(workdir) / CONFIG_FILENAME)
    return Settings()


def _check_config_file(config: str) -> None:
    path = Path(config)
    if not path.exists():
        raise ConfigError(f"--config {config}: no such file")
    if not path.is_file():
        kind = "a directory" if path.is_dir() else "not a regular file"
        raise ConfigError(f"--config {config}: is {kind}", hint="name a .knowing-pr.yml file")


def load_settings(config_path: str | os.PathLike[str] | None = None, *, text: str | None = None) -> Settings:
    """Read ``.knowing-pr.yml`` (from a path or given text); a missing file means defaults.

    The file is read only as a regular file: a symbolic link (or a directory, a pipe) named like
    it is refused, never followed (``read_config_file``)."""
    if text is None:
        if config_path is None:
            return Settings()
        text = read_config_file(Path(config_path))
        if text is None:
            return Settings()
    data = parse_config_text(text)
    if data is None:
        return Settings()
    if not isinstance(data, dict):
        raise ConfigError(f"{CONFIG_FILENAME} must be a mapping at the top level")
    return settings_from_mapping(data)


#: the largest ``.knowing-pr.yml`` read (bytes), and its deepest nesting of mappings and lists:
#: checked before the document is built, so a hostile file costs at most one bounded pass
MAX_CONFIG_BYTES = 256 * 1024
MAX_CONFIG_DEPTH = 16


def read_config_file(path: Path) -> str | None:
    """The text of the config file at ``path`` (``None`` when there is none). The last component
    is opened without following a symbolic link and must be a regular file; at most
    ``MAX_CONFIG_BYTES`` are read. ``ConfigError`` otherwise."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if path.is_symlink():
            raise ConfigError(
                f"{path.name} is a symbolic link: settings are read only from a regular file",
                hint="replace the link with the file itself, or name the file with --config",
            ) from None
        raise ConfigError(f"cannot read {path.name}: {exc.strerror or exc}") from None
    try:
        kind = os.fstat(fd).st_mode
        if not stat.S_ISREG(kind):
            what = "a directory" if stat.S_ISDIR(kind) else "not a regular file"
            raise ConfigError(f"{path.name} is {what}", hint="settings are read only from a regular file")
        with os.fdopen(fd, "rb", closefd=False) as stream:
            data = stream.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read {path.name}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path.name} is larger than {MAX_CONFIG_BYTES:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"cannot read {path.name}: not UTF-8 (byte {exc.start})") from None


def parse_config_text(text: str) -> Any:
    """YAML text → its one document, refusing what makes the cost or the message unbounded: more
    than ``MAX_CONFIG_BYTES``, nesting deeper than ``MAX_CONFIG_DEPTH``, aliases and anchors (an
    alias bomb expands a few hundred bytes into gigabytes), numbers too long to convert."""
    import yaml

    if len(text) > MAX_CONFIG_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{CONFIG_FILENAME} is larger than {MAX_CONFIG_BYTES:,} bytes")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        _check_events(yaml.parse(text, Loader=loader))
        return yaml.load(text, Loader=loader)  # noqa: S506  # nosec B506 (a safe loader)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{CONFIG_FILENAME} is not valid YAML: {_yaml_problem(exc)}") from None
    except (ValueError, RecursionError) as exc:  # an integer of thousands of digits, say
        raise ConfigError(f"{CONFIG_FILENAME} holds a value that cannot be read: {shown(str(exc))}") from None


def _check_events(events: Iterable[Any]) -> None:
    """Walk the parser's events (no document is built yet): ``ConfigError`` at the first alias or
    anchor, or at a nesting deeper than ``MAX_CONFIG_DEPTH``."""
    import yaml

    depth = 0
    for event in events:
        where = _event_place(event)
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise ConfigError(
                f"{CONFIG_FILENAME}: anchors and aliases (&name, *name) are not accepted{where}",
                hint="write each value out in full",
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_CONFIG_DEPTH:
                raise ConfigError(f"{CONFIG_FILENAME} nests deeper than {MAX_CONFIG_DEPTH} levels{where}")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _event_place(event: Any) -> str:
    mark = getattr(event, "start_mark", None)
    return f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""


def _yaml_problem(exc: Exception) -> str:
    """A YAML error in one line: what is wrong and where (PyYAML's own text spans several, and
    may quote the document: the problem is cut to ``MAX_PROBLEM_CHARS``)."""
    problem = getattr(exc, "problem", None) or getattr(exc, "reason", None) or type(exc).__name__
    problem = str(problem)[: MAX_PROBLEM_CHARS + 1]
    problem = "".join(c if c.isprintable() else repr(c)[1:-1] for c in " ".join(problem.split()))
    if len(problem) > MAX_PROBLEM_CHARS:
        problem = problem[: MAX_PROBLEM_CHARS - 3] + "..."
    mark = getattr(exc, "problem_mark", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return f"{problem}{where}"


#: a YAML problem's text in a message (it may quote a tag or a key of the document)
MAX_PROBLEM_CHARS = 80


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
    """``base`` with every setting a pack recorded (``params.pack_parameters``), validated like
    the config file, so a replay rebuilds the pack exactly; sections a manifest lacks (one from
    an older version) keep ``base``'s values, and so do the index's speed-only settings."""
    if not isinstance(params, Mapping):
        raise ConfigError("the recorded pack parameters are invalid: not a mapping")
    recorded = {k: v for k, v in params.items() if k in PACK_SECTIONS}
    try:
        restored = settings_from_mapping(recorded)
    except ConfigError as exc:
        raise ConfigError(f"the recorded pack parameters are invalid: {exc.message}", hint=exc.hint) from None
    changes: dict[str, Any] = {}
    for section, values in recorded.items():
        fields = {k for k in values if k in {f.name for f in dataclasses.fields(getattr(base, section))}}
        taken = {k: getattr(getattr(restored, section), k) for k in fields}
        changes[section] = dataclasses.replace(getattr(base, section), **taken)
    if "equivalence_classes" in params:
        classes = params["equivalence_classes"]
        if not isinstance(classes, list) or not all(isinstance(c, Mapping) for c in classes):
            raise ConfigError("the recorded pack parameters are invalid: equivalence_classes")
        changes["equivalence_classes"] = tuple(dict(c) for c in classes)
    return dataclasses.replace(base, **changes)


def equivalence_class_fields(
    item: Any, position: int, default_weight: float
) -> tuple[str, tuple[str, ...], tuple[str, ...], float]:
    """One equivalence class mapping (``name``, ``phrases``, ``targets``, optional ``weight``) →
    its validated (name, phrases, targets, weight); ``ConfigError`` naming what is wrong."""
    if not isinstance(item, Mapping):
        raise ConfigError(f"equivalence class #{position} must be a mapping")
    name = item.get("name", item.get("concept", f"class-{position}"))
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"equivalence class #{position}: 'name' must be a non-empty string")
    label = shown_name(name)
    unknown = set(item) - {"name", "concept", "phrases", "targets", "weight"}
    if unknown:
        raise ConfigError(
            f"equivalence class '{label}': unknown keys {shown_name(', '.join(sorted(map(str, unknown))))}",
            hint="an equivalence class has name, phrases, targets and an optional weight",
        )
    phrases = _strings(item.get("phrases", []), f"equivalence class '{label}': 'phrases'")
    targets = _strings(item.get("targets", []), f"equivalence class '{label}': 'targets'")
    if not phrases or not targets:
        raise ConfigError(f"equivalence class '{label}' needs at least one phrase and one target")
    weight = item.get("weight", default_weight)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 < weight <= 10:
        raise ConfigError(f"equivalence class '{label}': 'weight' must be a number in (0, 10]")
    return name.strip(), phrases, targets, float(weight)


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings")
    return tuple(v for v in value if v.strip())
