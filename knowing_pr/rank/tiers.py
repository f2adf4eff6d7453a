"""Store + mined history (+ a query) → every indexed file ranked and put in one of three tiers: the
repository map's ranking (``render/context_map.py`` writes the map).

The ranking of codectx (seed 000), per indexed file, every signal normalised to [0, 1]:

- ``git_frequency``  commits that changed the file / the most any file has;
- ``fan_in``         distinct files importing it (``imports`` edges between module nodes, or
  to its symbols) / the most any file has;
- ``recency``        seed 003's age step of its last change, relative to the newest mined
  commit (0 without history); the ``refactor`` profile reads it upside down (older = higher);
- ``entry_proximity`` 1 / (1 + import hops from the nearest entry point — a file named
  ``main``, ``cli``, ``__main__``, ``index``, ``app`` or ``lib``), 0 when unreachable;
- ``symbol_density`` definitions per line / the densest file's;
- ``directory_depth`` 1 / (1 + directories above the file);
- ``similarity``     (with ``--query``) the file's best BM25 match in the FTS table / the
  best file's; it takes 20% and the profile's weights are rescaled to 80%.

score = Σ weight × signal, minus ``cycle_penalty`` (0.10) for a file inside an import cycle
(a strongly connected component of more than one file). Tiers: the top 15% of the files not
forced down are tier 1, the next 30% tier 2, the rest tier 3; tests, docs, examples,
benchmarks and scripts are always tier 3. The profiles' weights are in ``profile_weights``
and docs/history.md.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from knowing_pr.config import HistoryParams, Settings
from knowing_pr.graph import is_test_path
from knowing_pr.model import EdgeKind, SymbolKind
from knowing_pr.store import Store, fts_tokens

__all__ = ["PROFILES", "FileRank", "import_graph", "is_forced_tier3", "profile_weights", "rank_files"]

PROFILES = ("default", "debug", "feature", "architecture", "refactor")
SIGNALS = ("git_frequency", "fan_in", "recency", "entry_proximity", "symbol_density", "directory_depth")
_FORCED_DIRS = frozenset(
    {"tests", "test", "docs", "doc", "examples", "example", "benchmarks", "bench", "scripts"}
)
_ENTRY_STEMS = frozenset({"main", "cli", "__main__", "index", "app", "lib"})


def profile_weights(profile: str) -> dict[str, float]:
    """Signal weights of a task profile (seed 000; the numbers it leaves open are ours)."""
    table = {
        "default": (0.40, 0.40, 0.10, 0.10, 0.0, 0.0),
        "debug": (0.25, 0.20, 0.50, 0.05, 0.0, 0.0),
        "feature": (0.25, 0.50, 0.05, 0.10, 0.10, 0.0),
        "architecture": (0.15, 0.60, 0.0, 0.15, 0.0, 0.10),
        "refactor": (0.30, 0.30, 0.10, 0.05, 0.25, 0.0),
    }
    if profile not in table:
        from knowing_pr.errors import UsageError

        raise UsageError(f"unknown profile {profile!r}", hint="profiles: " + ", ".join(PROFILES))
    return dict(zip(SIGNALS, table[profile], strict=True))


@dataclass(frozen=True)
class FileRank:
    path: str
    score: float
    tier: int
    signals: tuple[tuple[str, float], ...]
    in_cycle: bool
    forced: bool


def is_forced_tier3(path: str) -> bool:
    """Tests, docs, examples, benchmarks, scripts: never above tier 3."""
    parts = path.lower().split("/")[:-1]
    return is_test_path(path) or any(part in _FORCED_DIRS for part in parts)


def import_graph(
    store: Store, module_path: Mapping[str, str], path_of: Mapping[str, str]
) -> dict[str, set[str]]:
    """File → files it imports (self-imports dropped)."""
    graph: dict[str, set[str]] = {path: set() for path in module_path.values()}
    for edge in store.all_edges():
        if edge.kind != EdgeKind.IMPORTS or edge.source not in module_path:
            continue
        source = module_path[edge.source]
        target = path_of.get(edge.target)
        if target is not None and target != source:
            graph[source].add(target)
    return graph


def _hops_from_entries(graph: Mapping[str, Collection[str]]) -> dict[str, int]:
    entries = sorted(p for p in graph if posixpath.basename(p).split(".", 1)[0].lower() in _ENTRY_STEMS)
    hops = {p: 0 for p in entries}
    frontier = list(entries)
    while frontier:
        following: list[str] = []
        for path in frontier:
            for target in sorted(graph.get(path, ())):
                if target not in hops:
                    hops[target] = hops[path] + 1
                    following.append(target)
        frontier = following
    return hops


def _files_in_cycles(graph: Mapping[str, Collection[str]]) -> set[str]:
    import networkx as nx

    digraph = nx.DiGraph()
    digraph.add_nodes_from(graph)
    digraph.add_edges_from((a, b) for a, targets in graph.items() for b in targets)
    return {
        p for component in nx.strongly_connected_components(digraph) if len(component) > 1 for p in component
    }


def _age_step(age_days: float, params: HistoryParams) -> float:
    if age_days < 1:
        return params.recency_within_1d
    if age_days < 7:
        return params.recency_within_7d
    if age_days < 30:
        return params.recency_within_30d
    return params.recency_older


def _normalised(values: Mapping[str, float]) -> dict[str, float]:
    top = max(values.values(), default=0.0)
    return {k: (v / top if top > 0 else 0.0) for k, v in values.items()}


def _query_similarity(store: Store, query: str, path_of: Mapping[str, str]) -> dict[str, float]:
    words = [w for w in re.findall(r"[A-Za-z0-9_]+", fts_tokens(query)) if len(w) > 1]
    if not words:
        return {}
    expression = " OR ".join(f'"{w}"' for w in sorted(set(words)))
    best: dict[str, float] = {}
    for nid, bm25 in store.search_fts(expression, limit=500):
        path = path_of.get(nid)
        if path is not None:
            best[path] = max(best.get(path, 0.0), -bm25)
    return _normalised(best)


def rank_files(
    store: Store, settings: Settings, *, profile: str = "default", query: str | None = None
) -> list[FileRank]:
    """Every indexed file with its score and tier, best first (ties by path)."""
    history, params = settings.history, settings.map
    nodes = store.all_nodes()
    path_of = {n.id: n.path for n in nodes}
    module_path = {n.id: n.path for n in nodes if n.kind == SymbolKind.MODULE}
    files = sorted(set(module_path.values()))
    if not files:
        return []
    graph = import_graph(store, module_path, path_of)
    importers: dict[str, set[str]] = {p: set() for p in files}
    for source, targets in graph.items():
        for target in targets:
            importers.setdefault(target, set()).add(source)
    hist = {path: (commits, last) for path, commits, last, _ in store.history_files()}
    reference = int(store.get_meta("history_reference_time") or 0)
    lines = {p: max(r.line_count, 1) for p, r in store.files().items()}
    defs: dict[str, int] = {}
    for n in nodes:
        if n.kind != SymbolKind.MODULE:
            defs[n.path] = defs.get(n.path, 0) + 1
    hops = _hops_from_entries(graph)
    signals: dict[str, dict[str, float]] = {
        "git_frequency": _normalised({p: float(hist.get(p, (0, 0))[0]) for p in files}),
        "fan_in": _normalised({p: float(len(importers.get(p, ()))) for p in files}),
        "recency": {
            p: (_age_step((reference - hist[p][1]) / 86_400, history) if p in hist and reference else 0.0)
            for p in files
        },
        "entry_proximity": {p: (1.0 / (1 + hops[p]) if p in hops else 0.0) for p in files},
        "symbol_density": _normalised({p: defs.get(p, 0) / lines.get(p, 1) for p in files}),
        "directory_depth": {p: 1.0 / (1 + p.count("/")) for p in files},
    }
    if profile == "refactor":
        signals["recency"] = {p: (1.0 - v if p in hist else 0.0) for p, v in signals["recency"].items()}
    weights = profile_weights(profile)
    if query:
        weights = {k: v * (1.0 - params.query_share) for k, v in weights.items()}
        weights["similarity"] = params.query_share
        signals["similarity"] = _query_similarity(store, query, path_of)
    cycles = _files_in_cycles(graph)
    scored: list[tuple[float, str, tuple[tuple[str, float], ...]]] = []
    for path in files:
        parts = tuple((name, round(signals[name].get(path, 0.0), 6)) for name in weights)
        score = sum(weights[name] * value for name, value in parts)
        if path in cycles:
            score -= params.cycle_penalty
        scored.append((round(score, 6), path, parts))
    scored.sort(key=lambda item: (-item[0], item[1]))
    eligible = [path for _, path, _ in scored if not is_forced_tier3(path)]
    tier1 = math.ceil(len(eligible) * params.tier1_share)
    tier2 = math.ceil(len(eligible) * (params.tier1_share + params.tier2_share))
    position = {path: i for i, path in enumerate(eligible)}
    out: list[FileRank] = []
    for score, path, parts in scored:
        forced = path not in position
        tier = 3 if forced else (1 if position[path] < tier1 else 2 if position[path] < tier2 else 3)
        out.append(FileRank(path, score, tier, parts, path in cycles, forced))
    return out
