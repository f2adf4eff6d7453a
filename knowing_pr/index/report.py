"""One index run → what it did: the commit, the mode, the files parsed, removed and
re-resolved, the skip reasons, the time of each phase."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["IndexReport"]


@dataclass
class IndexReport:
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
        }
