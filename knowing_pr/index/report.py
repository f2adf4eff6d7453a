"""One index run → what it did: the commit, the mode, the files parsed, removed and
re-resolved, the skip reasons, the time of each phase; and what a store is stamped with (the
settings key that forces a full re-index when the graph would differ, the grammar version)."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field

from knowing_pr import __version__
from knowing_pr.config import Settings

__all__ = ["IndexReport", "grammar_version", "settings_key"]


@dataclass
class IndexReport:
    """What an index run did (``knowing-pr index --json`` prints it)."""

    commit: str | None
    previous: str | None
    graph_root: str
    mode: str  # "full" | "incremental" | "up-to-date"
    files_parsed: int = 0
    files_removed: int = 0
    files_affected: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)
    recovered_from: str | None = None
    adjacency: str = ""  # "patched" | "rebuilt" | "" (nothing written)
    #: path → references of it whose analysis failed this run (they have no edge)
    analysis_failures: dict[str, int] = field(default_factory=dict)
    #: of ``files_parsed``, the results taken as kept for a file version parsed before
    parses_kept: int = 0

    def as_dict(self) -> dict[str, object]:
        return {
            "commit": self.commit,
            "previous": self.previous,
            "graph_root": self.graph_root,
            "mode": self.mode,
            "files_parsed": self.files_parsed,
            "files_removed": self.files_removed,
            "files_affected": self.files_affected,
            "skipped": dict(sorted(self.skipped.items())),
            "timings_ms": {k: round(v, 1) for k, v in self.timings_ms.items()},
            "recovered_from": self.recovered_from,
            "adjacency": self.adjacency,
            "analysis_failures": dict(self.analysis_failures),
            "parses_kept": self.parses_kept,
        }


@functools.lru_cache(maxsize=1)  # a process checks the store's freshness on every answer
def grammar_version() -> str:
    versions = [_installed_version(m, d) for m, d in _GRAMMAR_PACKAGES]
    if None in versions:
        return "unknown"
    return f"tree-sitter {versions[0]}; pack {versions[1]}"


#: (import name, distribution name) of the packages whose versions the parse output depends on
_GRAMMAR_PACKAGES = (
    ("tree_sitter", "tree-sitter"),
    ("tree_sitter_language_pack", "tree-sitter-language-pack"),
)


def _installed_version(module: str, distribution: str) -> str | None:
    """A distribution's version, read from the ``<name>-<version>.dist-info`` folder beside the
    package (one directory listing, no import), else from ``importlib.metadata`` (whose import
    and metadata parsing cost tens of milliseconds on every run)."""
    import importlib.util
    import os

    spec = importlib.util.find_spec(module)
    if spec is not None and spec.origin:
        folder = os.path.dirname(os.path.dirname(spec.origin))
        prefix = distribution.replace("-", "_") + "-"
        try:
            found = [n for n in os.listdir(folder) if n.startswith(prefix) and n.endswith(".dist-info")]
        except OSError:
            found = []
        if len(found) == 1:
            return found[0][len(prefix) : -len(".dist-info")]
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def settings_key(settings: Settings) -> str:
    return json.dumps(
        {"index": settings.index.canonical(), "tool": __version__, "grammars": grammar_version()},
        sort_keys=True,
        default=str,
    )
