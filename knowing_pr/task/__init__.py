"""Task description (+ stack trace, + diff) + store → seeds → ``Pack`` and ``TaskAnalysis``
(seed 002's ForTask and ExplainSymbol; seed 001's resolve → discover → score → compose).

1. resolve: ``extract_keywords`` (three tiers), ``extract_entities``, ``classify_change``,
   ``parse_frames`` (tracebacks pasted in the task or read with ``--error-file``), the
   equivalence classes that pass the multi-phrase gate;
2. discover: the seed channels of ``channels.py`` fused by weighted RRF (k = ``rrf_k``);
   the best ``max_seeds`` get restart weights 1.0 → 0.4, path-context types a supplemental
   0.3;
3. score + pack: ``engine.build_pack`` (RWR, HITS, scoring, knapsack, PackRoot), with the
   test penalty unless the task is about tests; the packed symbols are then re-ordered by
   ``fusion.py`` (RRF of the walk's order and the seed order);
4. compose: ``folder.write_pack_folder`` (PACK.md, TASK.md, FILES.md, GRAPH.md,
   excerpts/, ctx.json, ctx.tgz).

``explain_symbol`` reruns the same pipeline with the rank trace and says where a symbol
stands or where it dropped out. ``task_seeds`` gives another mode (a PR pack) the task
channel's restart weights for extra text such as a PR title and body.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knowing_pr.config import Settings
from knowing_pr.errors import RepoError, UsageError
from knowing_pr.graph import is_test_path
from knowing_pr.model import Node, Pack, ScoredSymbol, SymbolKind
from knowing_pr.store import Store
from knowing_pr.task.channels import (
    Channel,
    Contribution,
    Hit,
    TaskParams,
    bm25_channel,
    diff_channel,
    equivalence_channel,
    extra_seeds,
    fuse_channels,
    path_channel,
    path_terms,
    restart_weights,
    tiered_channel,
    trace_channel,
)
from knowing_pr.task.entities import (
    Confidence,
    Entities,
    MatchEvidence,
    assess_confidence,
    classify_change,
    extract_entities,
    is_about_tests,
)
from knowing_pr.task.equivalence import (
    ClassMatch,
    EquivalenceClass,
    classes_from_mappings,
    match_classes,
    universal_classes,
)
from knowing_pr.task.fusion import fuse_orders, fuse_symbols, seed_order
from knowing_pr.task.keywords import KeywordSet, extract_keywords
from knowing_pr.task.traces import Frame, parse_frames

if TYPE_CHECKING:
    import scipy.sparse as sp

    from knowing_pr.adjacency import Adjacency
    from knowing_pr.pipeline import Workspace

__all__ = [
    "TaskAnalysis",
    "TaskParams",
    "analyse_task",
    "build_task_pack",
    "describe_explanation",
    "explain_symbol",
    "final_order",
    "normalise_task",
    "read_error_file",
    "task_seeds",
    "write_task_folder",
]

#: the largest error log read with --error-file (the end of a log holds the trace)
MAX_ERROR_BYTES = 1 << 20


@dataclass
class TaskAnalysis:
    """Everything the resolve and discover stages learned about one task."""

    task: str
    prose: str
    keywords: KeywordSet
    entities: Entities
    change_type: str
    about_tests: bool
    frames: list[tuple[Frame, str | None, str | None]]
    equivalence: list[ClassMatch]
    path_terms: list[str]
    channels: dict[str, list[Hit]]
    fused: list[tuple[str, float]]
    contributions: dict[str, list[Contribution]]
    seeds: dict[str, float]
    confidence: Confidence
    error_sha256: str | None = None
    diff: tuple[str, str] | None = None
    nodes: dict[str, Node] = field(default_factory=dict)

    def seed_order(self) -> list[str]:
        """The order the final fusion reads: seeds by restart weight, then the other fused nodes."""
        return seed_order(self.seeds, self.fused)

    def seed_rank_in_order(self, node_id: str) -> int | None:
        """1-based position in ``seed_order`` (the fusion's seed list)."""
        for position, nid in enumerate(self.seed_order(), 1):
            if nid == node_id:
                return position
        return None

    def seed_rank(self, node_id: str) -> int | None:
        for position, (nid, _) in enumerate(self.fused, 1):
            if nid == node_id:
                return position
        return None

    def as_dict(self) -> dict[str, Any]:
        """JSON-able summary (TASK.md, ctx.json, ``why --json``)."""
        seeds = sorted(self.seeds.items(), key=lambda kv: (-kv[1], kv[0]))
        return {
            "task": self.task,
            "change_type": self.change_type,
            "about_tests": self.about_tests,
            "confidence": {
                "score": self.confidence.score,
                "level": self.confidence.level,
                "suggestions": list(self.confidence.suggestions),
            },
            "keywords": {
                "exact": list(self.keywords.exact),
                "compounds": list(self.keywords.compounds),
                "components": list(self.keywords.components),
                "priority": list(self.keywords.priority),
            },
            "entities": {
                "files": list(self.entities.files),
                "classes": list(self.entities.classes),
                "methods": list(self.entities.methods),
                "routes": list(self.entities.routes),
                "error_codes": list(self.entities.error_codes),
            },
            "equivalence_classes": [
                {"name": m.cls.name, "source": m.cls.source, "phrases": list(m.phrases)}
                for m in self.equivalence
            ],
            "path_terms": list(self.path_terms),
            "frames": [
                {
                    "path": f.path,
                    "line": f.line,
                    "function": f.function,
                    "language": f.language,
                    "indexed_path": path,
                    "symbol": self._label(nid) if nid else None,
                }
                for f, path, nid in self.frames
            ],
            "error_sha256": self.error_sha256,
            "diff": list(self.diff) if self.diff else None,
            "channels": {name: len(hits) for name, hits in self.channels.items()},
            "seeds": [
                {
                    "id": nid,
                    "symbol": self._label(nid),
                    "restart_weight": weight,
                    "channels": [c.channel for c in self.contributions.get(nid, [])],
                }
                for nid, weight in seeds
            ],
        }

    def _label(self, node_id: str) -> str:
        node = self.nodes.get(node_id)
        return node.qualified_name if node else node_id

    def seed_summary(self, node_id: str) -> str:
        """``tiered exact `x` + bm25 #3`` — how a seed was found (empty if it was not)."""
        parts = []
        for c in self.contributions.get(node_id, []):
            if c.channel == "tiered":
                parts.append(f"{c.channel} {c.tier} '{c.via}'")
            elif c.channel in ("equivalence", "path"):
                parts.append(f"{c.channel} '{c.via}'")
            elif c.channel == "trace":
                parts.append(f"stack frame {c.via}")
            else:
                parts.append(f"{c.channel} #{c.rank}")
        return " + ".join(parts)


def normalise_task(text: str) -> str:
    """Lowercased, whitespace collapsed: the task text that enters the PackRoot."""
    return " ".join(text.lower().split())


def read_error_file(path: str | Path, *, max_bytes: int = MAX_ERROR_BYTES) -> str:
    """The last ``max_bytes`` of a log (decoded leniently); ``UsageError`` if unreadable."""
    target = Path(path)
    try:
        with target.open("rb") as fh:
            size = target.stat().st_size
            if size > max_bytes:
                fh.seek(size - max_bytes)
            data = fh.read(max_bytes)
    except OSError as exc:
        raise UsageError(f"cannot read the error file {path}: {exc.strerror or exc}") from None
    return data.decode("utf-8", "replace")


_TRACE_LINE = re.compile(
    r'File "[^"]+", line \d+|^\s*at\s+\S|[\w/]\.\w{1,6}:\d+|^Traceback \(|^goroutine \d+|'
    r"^stack backtrace|^\s+\d+: \S|^\s+\S+\.go:\d+"
)


def prose_of(text: str) -> str:
    """The task text without stack-trace lines (and the source lines Python echoes under them)."""
    lines = text.replace("\r\n", "\n").split("\n")
    kept: list[str] = []
    skip_echo = False
    for position, line in enumerate(lines):
        following = lines[position + 1] if position + 1 < len(lines) else ""
        is_go_func = bool(re.match(r"^\s+\S+\.go:\d+", following)) and "(" in line
        if _TRACE_LINE.search(line) or is_go_func:
            skip_echo = 'File "' in line
            continue
        if skip_echo and line.startswith((" ", "\t")) and line.strip():
            skip_echo = False
            continue
        skip_echo = False
        kept.append(line)
    return "\n".join(kept)


def _classes(settings: Settings) -> list[EquivalenceClass]:
    user = classes_from_mappings(settings.equivalence_classes, source="user", default_weight=1.0)
    return [*universal_classes(), *user]


def _indexed_paths(store: Store) -> list[str]:
    return sorted(p for p, row in store.files().items() if row.status == "indexed")


def _named_file_nodes(store: Store, entities: Entities, indexed: Sequence[str]) -> tuple[list[Node], int]:
    """Symbols of files the task names (by path suffix); and how many named files matched."""
    nodes: list[Node] = []
    found = 0
    for name in entities.files:
        wanted = name.lstrip("./")
        matches = [p for p in indexed if p == wanted or p.endswith("/" + wanted)]
        if matches:
            found += 1
            file_nodes = store.nodes_in_paths(matches[:3])
            nodes.extend(sorted(file_nodes, key=lambda n: (n.kind == SymbolKind.MODULE, n.start_line, n.id)))
    return nodes, found


def analyse_task(
    store: Store,
    settings: Settings,
    description: str,
    *,
    error_text: str | None = None,
    diff_seeds: Mapping[str, float] | None = None,
    diff: tuple[str, str] | None = None,
    params: TaskParams | None = None,
) -> TaskAnalysis:
    """Resolve and discover: keywords, entities, frames, classes → channels → fused seeds."""
    chosen = params or TaskParams()
    prose = prose_of(description)
    keywords = extract_keywords(prose)
    entities = extract_entities(prose)
    frames = parse_frames(description + "\n" + (error_text or ""))
    about_tests = is_about_tests(prose)
    matches = match_classes(prose, _classes(settings))
    indexed = _indexed_paths(store)

    def accept(node: Node) -> bool:
        return node.kind != SymbolKind.MODULE

    def demote(node: Node) -> bool:
        return not about_tests and is_test_path(node.path)

    file_nodes, files_found = _named_file_nodes(store, entities, indexed)
    terms = path_terms(keywords, chosen.path_min_chars)
    tiered = tiered_channel(store, keywords, chosen, accept=accept, demote=demote)
    if file_nodes:
        named = [Hit(n.id, "file", n.path) for n in file_nodes if n.kind != SymbolKind.MODULE]
        tiered.hits = _merge_after_exact(tiered.hits, named[: chosen.prefix_cap])
    bm25 = bm25_channel(store, keywords, terms, chosen, accept=accept, demote=demote)
    equivalence_cap = max(chosen.equivalence_min_cap, 2 * (len(tiered.hits) + len(bm25.hits)))
    equivalence = equivalence_channel(
        store,
        matches,
        chosen,
        generic_names=settings.index.generic_names,
        accept=accept,
        demote=demote,
        cap=equivalence_cap,
    )
    path = path_channel(store, terms, indexed, chosen, accept=accept, demote=demote)
    trace, resolved = trace_channel(store, frames, indexed, chosen)
    channels: list[Channel] = [tiered, bm25, equivalence, path, trace]
    if diff_seeds:
        diff_nodes = store.nodes_by_ids(diff_seeds)
        channels.append(diff_channel(diff_seeds, diff_nodes, chosen))
    fused, contributions = fuse_channels(channels, settings.rank.rrf_k)
    seeds = restart_weights(fused, settings.rank.max_seeds, chosen)
    explicit = _explicit_nodes(tiered, trace, keywords)
    if explicit:
        scaled = {nid: round(w * chosen.explicit_others_scale, 6) for nid, w in seeds.items()}
        seeds = {nid: chosen.restart_max if nid in explicit else w for nid, w in scaled.items() if w > 0}
        seeds.update({nid: chosen.restart_max for nid in explicit})
    else:
        supplements = [h.node_id for h in path.hits if h.node_id not in seeds][: chosen.path_supplement_max]
        seeds.update({nid: chosen.path_supplement_weight for nid in supplements})
        seeds.update(extra_seeds(fused, seeds, chosen))
    nodes = store.nodes_by_ids({nid for nid, _ in fused} | {nid for _, _, nid in resolved if nid})
    evidence = _evidence(store, keywords, entities, files_found, resolved, matches, tiered)
    confidence = assess_confidence(entities, evidence, low_below=chosen.low_confidence_below)
    return TaskAnalysis(
        task=description,
        prose=prose,
        keywords=keywords,
        entities=entities,
        change_type=classify_change(prose, has_trace=bool(frames)),
        about_tests=about_tests,
        frames=resolved,
        equivalence=matches,
        path_terms=terms,
        channels={c.name: c.hits for c in channels},
        fused=fused,
        contributions=contributions,
        seeds=seeds,
        confidence=confidence,
        error_sha256=hashlib.sha256(error_text.encode("utf-8", "replace")).hexdigest()
        if error_text
        else None,
        diff=diff,
        nodes=nodes,
    )


def _explicit_nodes(tiered: Channel, trace: Channel, keywords: KeywordSet) -> set[str]:
    """Nodes the task names outright: backtick identifiers found by name, stack-frame symbols."""
    named = {k.lower() for k in keywords.exact}
    found = {h.node_id for h in tiered.hits if h.tier == "exact" and h.via.lower() in named}
    return found | {h.node_id for h in trace.hits}


def _merge_after_exact(hits: list[Hit], extra: list[Hit]) -> list[Hit]:
    exact = [h for h in hits if h.tier == "exact"]
    rest = [h for h in hits if h.tier != "exact"]
    seen: set[str] = set()
    merged: list[Hit] = []
    for hit in (*exact, *extra, *rest):
        if hit.node_id not in seen:
            seen.add(hit.node_id)
            merged.append(hit)
    return merged


def _evidence(
    store: Store,
    keywords: KeywordSet,
    entities: Entities,
    files_found: int,
    frames: Sequence[tuple[Frame, str | None, str | None]],
    matches: Sequence[ClassMatch],
    tiered: Channel,
) -> MatchEvidence:
    distinct = {k.lower() for k in keywords.exact}
    exact_found = sum(1 for k in distinct if store.nodes_named(k.split(".")[-1], limit=1))
    vocabulary = [k for k in (*keywords.compounds, *keywords.components)][:30]
    matched_terms = {h.via.lower() for h in tiered.hits}
    matched = 0
    for term in vocabulary:
        lowered = term.lower()
        if lowered in matched_terms or store.nodes_where_name_like(f"%{_like(lowered)}%", limit=1):
            matched += 1
    return MatchEvidence(
        keywords=len(vocabulary),
        keywords_matched=matched,
        exact_named=len(distinct),
        exact_found=exact_found,
        files_named=len(entities.files),
        files_found=files_found,
        frames=len(frames),
        frames_found=sum(1 for _, _, nid in frames if nid),
        equivalence_classes=len(matches),
    )


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def task_seeds(
    store: Store,
    settings: Settings,
    text: str,
    *,
    scale: float = 0.25,
    max_seeds: int | None = None,
    params: TaskParams | None = None,
) -> dict[str, float]:
    """Restart weights for extra task text (a PR title + body), scaled to stay weaker than a change.

    The task channels' best seeds get ``scale * (1.0 → 0.4)`` by fused rank (at most
    ``max_seeds``, default ``settings.rank.max_seeds``); path supplements are left out.
    Merge into change seeds with ``max`` so changed symbols keep their own weight.
    """
    if not text.strip():
        return {}
    analysis = analyse_task(store, settings, text, params=params)
    limit = settings.rank.max_seeds if max_seeds is None else max_seeds
    weights = restart_weights(analysis.fused, limit, params or TaskParams())
    return {nid: round(w * scale, 6) for nid, w in weights.items()}


def final_order(walk: Sequence[str], analysis: TaskAnalysis, params: TaskParams) -> list[tuple[str, float]]:
    """The walk's node order fused with the task's seed order: what ``task`` ranks by."""
    return fuse_orders(
        walk,
        analysis.seed_order(),
        seed_weight=params.fusion_seed_weight,
        walk_weight=params.fusion_walk_weight,
        k=params.fusion_k,
    )


# -- the whole pipeline ------------------------------------------------------------------------


@dataclass
class _Run:
    pack: Pack
    analysis: TaskAnalysis
    head: str


def _identity(analysis: TaskAnalysis, params: TaskParams, settings: Settings) -> dict[str, Any]:
    seeding = hashlib.sha256(
        repr((params.canonical(), [dict(c) for c in settings.equivalence_classes])).encode()
    ).hexdigest()[:16]
    identity: dict[str, Any] = {
        "task": normalise_task(analysis.task),
        "error_sha256": analysis.error_sha256,
        "seeding": seeding,
    }
    if analysis.diff:
        identity["diff"] = list(analysis.diff)
    return identity


def _diff_seeds(ws: Workspace, store: Store, rev: str, head: str) -> tuple[dict[str, float], tuple[str, str]]:
    from knowing_pr.rank.seeds import ChangedFile, change_seeds

    base = ws.repo.resolve(rev)
    diffs = ws.repo.diff_hunks(base, head)
    changes = [ChangedFile(d.new_path, tuple(d.added)) for d in diffs if d.new_path and d.status != "D"]
    by_path: dict[str, list[Node]] = {}
    for node in store.nodes_in_paths(c.path for c in changes):
        by_path.setdefault(node.path, []).append(node)
    return change_seeds(changes, by_path, (), ws.settings.rank), (base, head)


def _fresh_head(ws: Workspace) -> str:
    from knowing_pr.indexer import index_commit

    report = index_commit(ws.repo, ws.settings, db_path=ws.db_path)
    if report.commit is None:
        raise RepoError("the repository has no commits yet", hint="commit something first")
    return report.commit


def _pack_task(
    ws: Workspace,
    store: Store,
    head: str,
    description: str,
    *,
    fmt: str,
    error_text: str | None,
    diff_rev: str | None,
    params: TaskParams,
) -> _Run:
    from knowing_pr import render
    from knowing_pr.engine import PackRequest, build_pack

    if not description.strip() and not error_text:
        raise UsageError("the task description is empty", hint='describe the task, e.g. "fix the retry loop"')
    diff_seeds, diff = _diff_seeds(ws, store, diff_rev, head) if diff_rev else ({}, None)
    analysis = analyse_task(
        store,
        ws.settings,
        description,
        error_text=error_text,
        diff_seeds=diff_seeds,
        diff=diff,
        params=params,
    )
    walk: list[str] = []

    def record(symbol: ScoredSymbol) -> bool:
        """Keeps every candidate; notes the walk's order (the engine offers them best first)."""
        walk.append(symbol.node.id)
        return True

    inputs: dict[str, Any] = {
        "task": description,
        "base": diff[0] if diff else None,
        "head": head,
        "error_sha256": analysis.error_sha256,
        "change_type": analysis.change_type,
        "confidence": analysis.confidence.score,
    }
    request = PackRequest(
        mode="task",
        seeds=analysis.seeds,
        identity_inputs=_identity(analysis, params, ws.settings),
        inputs=inputs,
        fmt=fmt,
        commit=head,
        penalise_tests=not analysis.about_tests,
        keep=record,
    )
    pack = build_pack(store, ws.settings, request)
    # the walk's order fused with the seed order, so centrality cannot bury the best match
    fused = fuse_symbols(
        pack.symbols,
        walk,
        analysis.seed_order(),
        seed_weight=params.fusion_seed_weight,
        walk_weight=params.fusion_walk_weight,
        k=params.fusion_k,
    )
    # a task has no "changed" symbols: seeds are the ones that matched the task
    pack.symbols = [replace(s, reason="match") if s.is_seed else s for s in fused]
    pack.tokens_used = math.ceil(len(render.render_pack(pack, fmt)) / ws.settings.pack.chars_per_token)
    return _Run(pack, analysis, head)


def build_task_pack(
    ws: Workspace,
    description: str,
    *,
    fmt: str = "markdown",
    error_text: str | None = None,
    diff_rev: str | None = None,
    params: TaskParams | None = None,
) -> tuple[Pack, TaskAnalysis]:
    """ForTask: index if stale, seed from the task, pack; the manifest is recorded for replay."""
    from knowing_pr.indexer import open_store
    from knowing_pr.replay import manifest_of

    head = _fresh_head(ws)
    store, _ = open_store(ws.db_path)
    try:
        run = _pack_task(
            ws,
            store,
            head,
            description,
            fmt=fmt,
            error_text=error_text,
            diff_rev=diff_rev,
            params=params or TaskParams(),
        )
        request = {
            "mode": "task",
            "task": description,
            "error_sha256": run.analysis.error_sha256,
            "diff": diff_rev,
            "budget": ws.settings.pack.budget_tokens,
            "format": fmt,
            "head": head,
        }
        store.save_pack(run.pack.pack_root, head, manifest_of(run.pack, request))
        return run.pack, run.analysis
    finally:
        store.close()


def write_task_folder(ws: Workspace, pack: Pack, analysis: TaskAnalysis, out_dir: str | Path) -> list[str]:
    """``--out-dir``: PACK.md, TASK.md, FILES.md, GRAPH.md, excerpts/, ctx.json, ctx.tgz."""
    from knowing_pr.indexer import open_store
    from knowing_pr.task.folder import write_pack_folder

    store, _ = open_store(ws.db_path)
    try:
        return write_pack_folder(ws.repo, store, pack, analysis, out_dir)
    finally:
        store.close()


# -- why ---------------------------------------------------------------------------------------


def _resolve_symbol(store: Store, query: str) -> list[Node]:
    """``path:line``, a qualified name (or a dotted suffix of one), or a plain name."""
    text = query.strip()
    located = re.fullmatch(r"(.+?):(\d+)", text)
    if located:
        path = located.group(1).replace("\\", "/").lstrip("./") if located.group(1) else ""
        line = int(located.group(2))
        nodes = store.nodes_in_paths([path])
        enclosing = [n for n in nodes if n.start_line <= line <= n.end_line and n.kind != SymbolKind.MODULE]
        return sorted(enclosing, key=lambda n: (n.end_line - n.start_line, n.id))[:1]
    dotted = text.replace("::", ".").replace("#", ".")
    if "." in dotted:
        exact = store.nodes_where_qualified_like(_like(dotted))
        if exact:
            return exact
        suffix = store.nodes_where_qualified_like("%." + _like(dotted))
        if suffix:
            return suffix
        leaf = dotted.rsplit(".", 1)[-1]
        return [n for n in store.nodes_named(leaf) if n.qualified_name.endswith(dotted)]
    return store.nodes_named(text)


def explain_symbol(
    ws: Workspace,
    description: str,
    symbol: str,
    *,
    error_text: str | None = None,
    diff_rev: str | None = None,
    params: TaskParams | None = None,
) -> dict[str, Any]:
    """Rank, score, seed channels, RWR, HITS, components of ``symbol`` for the task; or where
    it dropped out: not in the index / never seeded and not reached / below the cutoff / cut
    by the budget."""
    from knowing_pr.engine import MAX_CANDIDATES, load_adjacency
    from knowing_pr.indexer import open_store
    from knowing_pr.rank import rank_with_trace

    head = _fresh_head(ws)
    store, _ = open_store(ws.db_path)
    try:
        run = _pack_task(
            ws,
            store,
            head,
            description,
            fmt="markdown",
            error_text=error_text,
            diff_rev=diff_rev,
            params=params or TaskParams(),
        )
        candidates = _resolve_symbol(store, symbol)
        adjacency = load_adjacency(store)
        matrix = _walk_matrix(store, ws.settings, adjacency)
        all_nodes: dict[str, Node | None] = {}

        def node_of(node_id: str) -> Node | None:
            if node_id not in all_nodes:
                all_nodes[node_id] = store.nodes_by_ids([node_id]).get(node_id)
            return all_nodes[node_id]

        def is_test(node_id: str) -> bool:
            node = node_of(node_id)
            return node is not None and is_test_path(node.path)

        ranked, trace = rank_with_trace(
            adjacency,
            matrix,
            run.analysis.seeds,
            ws.settings.rank,
            is_test=is_test,
            penalise_tests=not run.analysis.about_tests,
        )
        kinds = {n.id: n.kind for n in store.nodes_by_ids([r.node_id for r in ranked]).values()}
        ordered = [r for r in ranked if r.node_id in kinds and kinds[r.node_id] != SymbolKind.MODULE]
        ordered = ordered[:MAX_CANDIDATES]
        chosen_params = params or TaskParams()
        by_id = {r.node_id: r for r in ordered}
        fused_order = final_order([r.node_id for r in ordered], run.analysis, chosen_params)
        fused_score = dict(fused_order)
        positions = {nid: (i, by_id[nid]) for i, (nid, _) in enumerate(fused_order, 1)}
        packed = {s.node.id for s in run.pack.symbols}

        def position_key(node: Node) -> tuple[int, str]:
            found = positions.get(node.id)
            return (found[0] if found else len(ordered) + 1, node.id)

        chosen_nodes = sorted(candidates, key=position_key)
        base = _explanation_base(run, symbol, len(ordered))
        if not chosen_nodes:
            base.update(
                status="not_in_index",
                verdict=f"not in the index: no symbol matches {symbol!r}",
            )
            return base
        node = chosen_nodes[0]
        base["symbol"] = _node_dict(node)
        base["alternatives"] = [_node_dict(n) for n in chosen_nodes[1:10]]
        node_trace = trace.node(node.id)
        at = positions.get(node.id)
        classes = sorted(
            {c.via for c in run.analysis.contributions.get(node.id, []) if c.channel == "equivalence"}
        )
        base.update(
            is_seed=node_trace.is_seed,
            restart_weight=run.analysis.seeds.get(node.id, 0.0),
            seed_rank=run.analysis.seed_rank(node.id),
            seed_channels=[asdict(c) for c in run.analysis.contributions.get(node.id, [])],
            seed_summary=run.analysis.seed_summary(node.id),
            equivalence_classes_of_symbol=classes,
            rwr=node_trace.rwr,
            rwr_normalised=round(node_trace.rwr_normalised, 6),
            reached=node_trace.reached,
            above_cutoff=node_trace.above_cutoff,
            in_hits=node_trace.in_hits,
            hops=node_trace.hops,
            cutoff=trace.cutoff,
            is_test=is_test_path(node.path),
        )
        if at is not None:
            _, ranked_node = at
            base.update(
                rank=at[0],
                score=fused_score[node.id],
                components={
                    **dict(ranked_node.components),
                    "walk_score": ranked_node.score,
                    "seed_rank": float(run.analysis.seed_rank_in_order(node.id) or 0),
                },
                authority=ranked_node.authority,
                hub=ranked_node.hub,
                distance=ranked_node.distance,
                reason=ranked_node.reason if not ranked_node.is_seed else "match",
            )
        base.update(_verdict(node, node_trace.in_graph, node_trace.reached, at, node.id in packed))
        return base
    finally:
        store.close()


def _walk_matrix(store: Store, settings: Settings, adjacency: Adjacency) -> sp.csr_matrix:
    """The transition matrix the engine walks (with co-change mixing when that module exists)."""
    try:
        from knowing_pr.cochange import cochange_share, walk_matrix
    except ImportError:  # pragma: no cover - older layout
        from knowing_pr.rank import transition_matrix

        return transition_matrix(adjacency, settings.rank.edge_weights)
    return walk_matrix(adjacency, settings, cochange_share(store, settings))


def _verdict(
    node: Node, in_graph: bool, reached: bool, at: tuple[int, Any] | None, in_pack: bool
) -> dict[str, Any]:
    if in_pack and at is not None:
        return {"status": "packed", "in_pack": True, "verdict": f"in the pack, ranked {at[0]}"}
    if node.kind == SymbolKind.MODULE:
        return {
            "status": "module",
            "in_pack": False,
            "verdict": "a file (module) node: it carries the walk but is never packed itself",
        }
    if at is not None:
        return {"status": "cut", "in_pack": False, "verdict": f"ranked {at[0]} but cut by the budget"}
    if not in_graph or not reached:
        return {
            "status": "not_reached",
            "in_pack": False,
            "verdict": "never seeded and not reached by the walk",
        }
    return {"status": "below_cutoff", "in_pack": False, "verdict": "reached but below the score cutoff"}


def _node_dict(node: Node) -> dict[str, Any]:
    return {
        "id": node.id,
        "name": node.name,
        "qualified_name": node.qualified_name,
        "kind": node.kind,
        "file": node.path,
        "start_line": node.start_line,
        "end_line": node.end_line,
    }


def _explanation_base(run: _Run, query: str, total: int) -> dict[str, Any]:
    analysis = run.analysis
    return {
        "task": analysis.task,
        "query": query,
        "pack_root": run.pack.pack_root,
        "commit": run.head,
        "symbol": None,
        "alternatives": [],
        "rank": None,
        "total_ranked": total,
        "packed_count": len(run.pack.symbols),
        "score": None,
        "components": {},
        "authority": None,
        "hub": None,
        "is_seed": False,
        "seed_channels": [],
        "change_type": analysis.change_type,
        "penalise_tests": not analysis.about_tests,
        "keywords": analysis.as_dict()["keywords"],
        "equivalence_classes": [
            {"name": m.cls.name, "phrases": list(m.phrases)} for m in analysis.equivalence
        ],
    }


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "-" if value is None else str(value)


def describe_explanation(data: Mapping[str, Any]) -> str:
    """``why``'s human text."""
    lines = [f"task      {data['task'].strip()[:200]}"]
    symbol = data.get("symbol")
    if symbol:
        lines.append(
            f"symbol    {symbol['qualified_name']} ({symbol['kind']}) "
            f"{symbol['file']}:{symbol['start_line']}-{symbol['end_line']}"
        )
    else:
        lines.append(f"symbol    {data['query']}")
    lines.append(f"verdict   {data['verdict']}")
    if data.get("rank") is not None:
        lines.append(
            f"rank      {data['rank']} of {data['total_ranked']} ranked ({data['packed_count']} packed)"
        )
        lines.append(f"score     {_fmt(data['score'])}")
        for name, value in data.get("components", {}).items():
            lines.append(f"  {name:<14}{_fmt(value)}")
    if symbol:
        seed = "yes" if data.get("is_seed") else "no"
        lines.append(f"seed      {seed} (restart weight {_fmt(data.get('restart_weight'))})")
        if data.get("seed_summary"):
            lines.append(f"  found by {data['seed_summary']} (fused rank {_fmt(data.get('seed_rank'))})")
        lines.append(
            f"walk      RWR {_fmt(data.get('rwr'))} (normalised {_fmt(data.get('rwr_normalised'))}, "
            f"cutoff {_fmt(data.get('cutoff'))}), hops {_fmt(data.get('hops'))}"
        )
        lines.append(
            f"HITS      authority {_fmt(data.get('authority'))}, hub {_fmt(data.get('hub'))}"
            + ("" if data.get("in_hits") else " (outside the HITS subgraph)")
        )
        if data.get("equivalence_classes_of_symbol"):
            lines.append("classes   " + ", ".join(data["equivalence_classes_of_symbol"]))
        if data.get("is_test") and data.get("penalise_tests"):
            lines.append("note      a test symbol: its score is multiplied by the test penalty")
    keywords = data.get("keywords", {})
    lines.append(
        "keywords  "
        + "; ".join(
            f"{tier}: {', '.join(keywords.get(tier, [])) or '-'}"
            for tier in ("exact", "compounds", "components")
        )
    )
    if data.get("equivalence_classes"):
        lines.append("matched   " + ", ".join(m["name"] for m in data["equivalence_classes"]))
    if data.get("alternatives"):
        lines.append("also      " + ", ".join(a["qualified_name"] for a in data["alternatives"]))
    lines.append(f"pack      {data['pack_root']}")
    return "\n".join(lines)
