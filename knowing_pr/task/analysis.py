"""Task description (+ stack trace, + diff seeds) + store → ``TaskAnalysis``: the resolve and
discover stages of task mode (seed 001's resolve → discover; seed 002's ForTask seeding).

1. resolve: ``extract_keywords`` (three tiers), ``extract_entities``, ``classify_change``,
   ``read_frames`` (tracebacks pasted in the task or read with ``read_error_file``), the
   equivalence classes that pass the multi-phrase gate;
2. discover: the seed channels of ``channels.py`` fused by weighted RRF (k = ``rrf_k``);
   the best ``max_seeds`` get restart weights 1.0 → 0.4, path-context types a supplemental
   0.3; symbols the task names outright get the full restart weight.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowing_pr.config import Settings
from knowing_pr.errors import UsageError
from knowing_pr.graph import is_test_path
from knowing_pr.model import Node, SymbolKind
from knowing_pr.rank.fusion import seed_order
from knowing_pr.rank.task_rank import word_key
from knowing_pr.store import Store
from knowing_pr.task.channels import (
    Channel,
    Hit,
    TaskParams,
    bm25_channel,
    diff_channel,
    equivalence_channel,
    names_channel,
    names_something,
    path_channel,
    path_terms,
    tiered_channel,
    trace_channel,
    weak_terms,
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
from knowing_pr.task.fusion import Contribution, extra_seeds, fuse_channels, restart_weights
from knowing_pr.task.keywords import KeywordSet, extract_keywords
from knowing_pr.task.traces import MAX_LINE_CHARS, Frame, read_frames

__all__ = ["MAX_ERROR_BYTES", "TaskAnalysis", "analyse_task", "prose_of", "read_error_file"]

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
    #: the symbols the task names outright (backticks, stack frames): they lead the final order
    explicit: frozenset[str] = frozenset()
    #: components naming a large share of the indexed paths (``channels.weak_terms``)
    weak: frozenset[str] = frozenset()
    #: the bounds on hostile input this task hit (``task.max_text_chars``, ``task.trace_max_line_chars``)
    limits_hit: tuple[str, ...] = ()

    def seed_order(self) -> list[str]:
        """The order the final fusion reads: seeds by restart weight, then the other fused nodes."""
        return seed_order(self.seeds, self.fused)

    def task_words(self) -> frozenset[str]:
        """The task's words as the final order compares them with names (``rank.task_rank.word_key``),
        weak terms left out."""
        words = (*self.keywords.priority, *self.keywords.components)
        return frozenset(word_key(w) for w in words if w.lower() not in self.weak and len(w) >= 3)

    def demoted_segments(self, segments: Sequence[str]) -> frozenset[str]:
        """The directory names of ``segments`` (samples, examples, …) the task does not name."""
        named = {w.lower() for w in (*self.keywords.components, *self.keywords.priority)}
        return frozenset(s for s in segments if s not in named and s.rstrip("s") not in named)

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


def prose_of(text: str, *, max_line_chars: int = MAX_LINE_CHARS) -> str:
    """The task text without stack-trace lines (and the source lines Python echoes under them); a
    line longer than ``max_line_chars`` is prose (``traces``: no frame line is that long)."""
    lines = text.replace("\r\n", "\n").split("\n")
    kept: list[str] = []
    skip_echo = False
    for position, line in enumerate(lines):
        following = lines[position + 1] if position + 1 < len(lines) else ""
        if len(line) > max_line_chars:
            skip_echo = False
            kept.append(line)
            continue
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
    chosen = params or settings.task
    description, limits_hit = _bounded_text(description, chosen.max_text_chars)
    prose = prose_of(description, max_line_chars=chosen.trace_max_line_chars)
    keywords = extract_keywords(prose)
    entities = extract_entities(prose)
    trace = read_frames(description + "\n" + (error_text or ""), max_line_chars=chosen.trace_max_line_chars)
    frames = trace.frames
    if trace.long_lines:
        limits_hit += (
            f"{trace.long_lines:,} line(s) longer than {chosen.trace_max_line_chars:,} characters "
            "not read as stack frames (task.trace_max_line_chars)",
        )
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
    weak = weak_terms(keywords, indexed, chosen.weak_term_share)
    bm25 = bm25_channel(store, keywords, terms, chosen, accept=accept, demote=demote, weak=weak)
    names = names_channel(store, keywords, weak, chosen, demote=demote)
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
    trace_hits, resolved = trace_channel(store, frames, indexed, chosen)
    channels: list[Channel] = [tiered, bm25, names, equivalence, path, trace_hits]
    if diff_seeds:
        diff_nodes = store.nodes_by_ids(diff_seeds)
        channels.append(diff_channel(diff_seeds, diff_nodes, chosen))
    fused, contributions = fuse_channels(channels, settings.rank.rrf_k)
    seeds = restart_weights(fused, settings.rank.max_seeds, chosen)
    explicit = _explicit_nodes(tiered, trace_hits, keywords)
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
        explicit=frozenset(explicit),
        weak=weak,
        limits_hit=limits_hit,
    )


def _bounded_text(text: str, max_chars: int) -> tuple[str, tuple[str, ...]]:
    """The task text cut to its first ``max_chars`` characters, and the note saying so if it was."""
    if len(text) <= max_chars:
        return text, ()
    note = (
        f"the task text was cut to its first {max_chars:,} of {len(text):,} characters (task.max_text_chars)"
    )
    return text[:max_chars], (note,)


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
        if lowered in matched_terms or names_something(store, lowered):
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
