"""Keywords, equivalence matches, stack frames and a diff + the store → ranked seed channels,
fused by weighted Reciprocal Rank Fusion into restart weights (seeds 002/003, "Seed
Retrieval: 5-Channel RRF Fusion").

Channels (each an ordered list of node ids, best first):

- ``tiered``: compound-first name matching: primary keywords (exact + compounds) through
  exact and prefix tiers, the components (exact, prefix, substring, path) only when fewer
  than ``tiered_fallback_below`` nodes were found;
- ``bm25``: ``Store.search_fts`` with a query built here: every term quoted (user text can
  never inject FTS5 syntax), compounds aimed at the ``symbol_name`` column, path terms as
  ``file_path`` prefixes, all joined with OR;
- ``equivalence``: the targets of the classes that passed the multi-phrase gate;
- ``names``: the types (classes, structs, interfaces, traits, enums) whose names the task's words
  make up: BM25 over the ``symbol_name`` column alone, so a short name made of task words
  (``Voucher``, ``DownstreamRoute``) comes first;
- ``path``: types (with methods first) in directories or files whose names match a task term;
- ``trace``: the symbols enclosing the frames of a stack trace, innermost first;
- ``diff``: the symbols a revision range changed (the ForPR change seeds).

Their fusion into restart weights: ``fusion.py``.

One module a little over the style's ~400 lines: the seed channels share their query
helpers and are read side by side when their fusion is tuned.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from knowing_pr.config import TaskParams
from knowing_pr.model import TYPE_KINDS, Node, SymbolKind
from knowing_pr.store import Store
from knowing_pr.task.equivalence import ClassMatch, is_generic_target
from knowing_pr.task.keywords import STOP_WORDS, KeywordSet, light_stem
from knowing_pr.task.traces import Frame

__all__ = [
    "Channel",
    "Hit",
    "TaskParams",
    "bm25_channel",
    "build_fts_query",
    "equivalence_channel",
    "escape_like",
    "names_channel",
    "names_something",
    "path_channel",
    "path_terms",
    "tiered_channel",
    "trace_channel",
    "weak_terms",
]


@dataclass(frozen=True)
class Hit:
    """One node found by a channel: how (tier, keyword or class, frame) and a weight factor."""

    node_id: str
    tier: str = ""
    via: str = ""
    factor: float = 1.0


@dataclass
class Channel:
    name: str
    weight: float
    hits: list[Hit] = field(default_factory=list)

    def ids(self) -> list[str]:
        return [h.node_id for h in self.hits]


NodeFilter = Callable[[Node], bool]


def escape_like(text: str) -> str:
    """``text`` as a literal inside a SQL LIKE pattern (the store's LIKE uses ``ESCAPE '\\'``)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class _Collector:
    """Ordered, de-duplicated hits of one channel, honouring a node filter and caps."""

    def __init__(self, accept: NodeFilter) -> None:
        self.accept = accept
        self.hits: dict[str, Hit] = {}

    def __len__(self) -> int:
        return len(self.hits)

    def add(self, nodes: Iterable[Node], tier: str, via: str, cap: int | None = None) -> int:
        added = 0
        for node in nodes:
            if cap is not None and added >= cap:
                break
            if node.id in self.hits or not self.accept(node):
                continue
            self.hits[node.id] = Hit(node.id, tier, via)
            added += 1
        return added


def _symbol_order(nodes: Iterable[Node], demote: NodeFilter) -> list[Node]:
    """Types and functions before modules, non-demoted before demoted (tests), then by path."""
    return sorted(nodes, key=lambda n: (n.kind == SymbolKind.MODULE, demote(n), n.path, n.start_line, n.id))


def _dotted_parts(keyword: str) -> list[str]:
    return [p for p in re.split(r"\.|::|#", keyword) if p]


def _exact_nodes(store: Store, keyword: str, limit: int) -> list[Node]:
    parts = _dotted_parts(keyword)
    if len(parts) > 1:
        suffix = "." + ".".join(parts).lower()
        named = store.nodes_named(parts[-1], limit=limit * 4)
        qualified = [n for n in named if ("." + n.qualified_name.lower()).endswith(suffix)]
        return qualified or [n for n in named if n.name.lower() == parts[-1].lower()][:limit]
    return store.nodes_named(keyword, limit=limit)


def tiered_channel(
    store: Store, keywords: KeywordSet, params: TaskParams, *, accept: NodeFilter, demote: NodeFilter
) -> Channel:
    """Compound-first tiers: exact > prefix for primary keywords, then components as fallback."""
    found = _Collector(accept)
    cap = params.per_keyword_cap
    primary = _unique_lower(keywords.primary())
    for keyword in primary:
        found.add(_symbol_order(_exact_nodes(store, keyword, cap), demote), "exact", keyword)
    if len(found) < params.prefix_stop_at:
        for keyword in primary:
            if len(found) >= params.prefix_cap:
                break
            leaf = _dotted_parts(keyword)[-1] if _dotted_parts(keyword) else keyword
            nodes = store.nodes_where_name_like(escape_like(leaf) + "%", limit=cap)
            found.add(_symbol_order(nodes, demote), "prefix", keyword, params.prefix_cap - len(found))
    if len(found) < params.tiered_fallback_below:
        components = _unique_lower((*keywords.priority, *keywords.components))
        for keyword in components:
            found.add(_symbol_order(store.nodes_named(keyword, limit=cap), demote), "exact", keyword)
        long_components = [c for c in components if len(c) >= params.min_substring_chars]
        tiers: tuple[tuple[str, Callable[[str], list[Node]]], ...] = (
            ("prefix", lambda c: store.nodes_where_name_like(escape_like(c) + "%", limit=cap)),
            ("substring", lambda c: store.nodes_where_name_like("%" + escape_like(c) + "%", limit=cap)),
            ("path", lambda c: store.nodes_where_path_like("%" + escape_like(c) + "%", limit=cap)),
        )
        for tier, query in tiers:
            if len(found) >= params.prefix_stop_at:
                break
            for keyword in long_components:
                room = params.prefix_cap - len(found)
                if room <= 0:
                    break
                found.add(_symbol_order(query(keyword), demote), tier, keyword, min(room, 10))
    return Channel("tiered", params.weight_tiered, list(found.hits.values()))


def _unique_lower(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = item.lower()
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


_FTS_TOKEN = re.compile(r"[^\w]+", re.UNICODE)


def _fts_term(text: str) -> str:
    """One safe FTS5 string: word characters only, quoted (so AND/NEAR/* are just text)."""
    token = _FTS_TOKEN.sub("", text)
    return f'"{token}"' if token else ""


def build_fts_query(
    keywords: KeywordSet,
    terms_for_paths: Sequence[str],
    max_terms: int,
    *,
    target_columns: bool = True,
    weak: Collection[str] = (),
) -> str:
    """``symbol_name : "Compound" OR "component" OR file_path : "dir"*`` — never raw user text.

    Without ``target_columns``: ``"Compound" OR "component"`` (any column, no path terms).
    Components in ``weak`` (``weak_terms``) are left out.
    """
    clauses: list[str] = []
    column = "symbol_name : " if target_columns else ""
    for keyword in keywords.primary():
        for part in _dotted_parts(keyword)[-2:]:
            term = _fts_term(part)
            if term:
                clauses.append(f"{column}{term}")
    for component in (*keywords.priority, *keywords.components):
        term = _fts_term(component) if component.lower() not in weak else ""
        if term:
            clauses.append(term)
    for path_term in terms_for_paths if target_columns else ():
        term = _fts_term(path_term)
        if term:
            clauses.append(f"file_path : {term}*")
    unique = list(dict.fromkeys(c for c in clauses if c))
    return " OR ".join(unique[:max_terms])


def bm25_channel(
    store: Store,
    keywords: KeywordSet,
    terms_for_paths: Sequence[str],
    params: TaskParams,
    *,
    accept: NodeFilter,
    demote: NodeFilter,
    weak: Collection[str] = (),
) -> Channel:
    query = build_fts_query(
        keywords,
        terms_for_paths,
        params.max_query_terms,
        target_columns=params.bm25_target_columns,
        weak=weak,
    )
    channel = Channel("bm25", params.weight_bm25)
    if not query:
        return channel
    ranked = store.search_fts(query, limit=params.bm25_limit * 2)
    nodes = store.nodes_by_ids(nid for nid, _ in ranked)
    ordered = [nodes[nid] for nid, _ in ranked if nid in nodes]
    # a stable sort keeps BM25 order inside each group: non-demoted first
    ordered.sort(key=demote)
    found = _Collector(accept)
    found.add(ordered, "bm25", query, params.bm25_limit)
    channel.hits = list(found.hits.values())
    return channel


def weak_terms(keywords: KeywordSet, indexed_paths: Sequence[str], share: float) -> frozenset[str]:
    """Components that name a directory or file of at least ``share`` of the indexed files: the
    repository's or product's own name (``ocelot`` in ``src/Ocelot/...``), a framework layer
    (``graphql`` in half of a GraphQL server). They say little about where a task is."""
    if share <= 0 or share > 1 or not indexed_paths:
        return frozenset()
    words = {c.lower() for c in (*keywords.priority, *keywords.components)}
    counts = dict.fromkeys(words, 0)
    for path in indexed_paths:
        present = {w for part in _PATH_WORDS.split(path.lower()) if part for w in (part, light_stem(part))}
        for word in words & present:
            counts[word] += 1
    return frozenset(w for w, n in counts.items() if n >= share * len(indexed_paths))


_PATH_WORDS = re.compile(r"[/._\-]+")


def names_channel(
    store: Store, keywords: KeywordSet, weak: Collection[str], params: TaskParams, *, demote: NodeFilter
) -> Channel:
    """Types whose names the task's words make up, by BM25 over the ``symbol_name`` column."""
    channel = Channel("names", params.weight_names)
    terms = [
        t for c in (*keywords.priority, *keywords.components) if c.lower() not in weak and (t := _fts_term(c))
    ]
    if not terms or params.names_limit <= 0:
        return channel
    query = "symbol_name : (" + " OR ".join(dict.fromkeys(terms[: params.max_query_terms])) + ")"
    ranked = store.search_fts(query, limit=params.names_scan)
    nodes = store.nodes_by_ids(nid for nid, _ in ranked)
    types = [nodes[nid] for nid, _ in ranked if nid in nodes and nodes[nid].kind in TYPE_KINDS]
    found = _Collector(lambda node: not demote(node))
    found.add(types, "type", query, params.names_limit)
    channel.hits = list(found.hits.values())
    return channel


def names_something(store: Store, word: str) -> bool:
    """Whether some symbol's name has a word starting with ``word`` (an FTS prefix query on the
    ``symbol_name`` column: the index answers it without scanning every name)."""
    term = _fts_term(word)
    return bool(term) and bool(store.search_fts(f"symbol_name : {term}*", limit=1))


def _glob_matches(name: str, target: str) -> bool:
    """``*Config`` matches ``AppConfig`` and ``app_config``; plain targets match exactly."""
    if "*" not in target:
        return name.lower() == target.lower()
    if fnmatch.fnmatchcase(name, target):
        return True
    snake = target.lower().replace("*", "*_") if target.startswith("*") else target.lower()
    snake = snake.replace("*_", "*", 1) if not target.startswith("*") else snake
    return fnmatch.fnmatchcase(name.lower(), snake) or fnmatch.fnmatchcase(
        name.lower(), target.lower().strip("*")
    )


def equivalence_channel(
    store: Store,
    matches: Sequence[ClassMatch],
    params: TaskParams,
    *,
    generic_names: Iterable[str],
    accept: NodeFilter,
    demote: NodeFilter,
    cap: int,
) -> Channel:
    """Targets of matched classes, strongest match first, each resolved by exact or glob name."""
    found = _Collector(accept)
    factors: dict[str, float] = {}
    generic = tuple(generic_names)
    ordered = sorted(matches, key=lambda m: (-len(m.phrases), -m.cls.weight, m.cls.name))
    per_target = params.equivalence_per_target
    for match in ordered:
        for target in match.cls.targets:
            if len(found) >= cap:
                break
            if is_generic_target(target, generic):
                continue
            if "*" in target:
                pattern = "".join("%" if ch == "*" else escape_like(ch) for ch in target)
                candidates = store.nodes_where_name_like(pattern, limit=per_target * 5)
                nodes = [n for n in candidates if _glob_matches(n.name, target)]
            else:
                nodes = store.nodes_named(target, limit=per_target)
            before = set(found.hits)
            found.add(_symbol_order(nodes, demote), "class", match.cls.name, per_target)
            for nid in set(found.hits) - before:
                factors[nid] = match.cls.weight
    hits = [dataclasses.replace(h, factor=factors.get(h.node_id, 1.0)) for h in found.hits.values()]
    return Channel("equivalence", params.weight_equivalence, hits)


def path_terms(keywords: KeywordSet, min_chars: int) -> list[str]:
    """Lowercase words that could name a directory or package (stop words excluded; instruction
    verbs are not components in the first place)."""
    out: list[str] = []
    for word in (*keywords.priority, *keywords.components):
        lowered = word.lower()
        if len(lowered) >= min_chars and lowered.isalpha() and lowered not in STOP_WORDS:
            out.append(lowered)
    return list(dict.fromkeys(out))


def _path_keys(paths: Sequence[str]) -> list[tuple[str, frozenset[str], frozenset[str]]]:
    """Per path: its directory names and file stem, lowercase, and their light stems (a term
    matches a segment equal to it or with the same stem)."""
    keyed = []
    for path in paths:
        parts = path.split("/")
        names = frozenset(seg.lower() for seg in (*parts[:-1], parts[-1].split(".", 1)[0]))
        keyed.append((path, names, frozenset(light_stem(name) for name in names)))
    return keyed


def path_channel(
    store: Store,
    terms: Sequence[str],
    indexed_paths: Sequence[str],
    params: TaskParams,
    *,
    accept: NodeFilter,
    demote: NodeFilter,
) -> Channel:
    """Types in directories (or files) named like a task term; types with methods first."""
    channel = Channel("path", params.weight_path)
    found = _Collector(accept)
    keyed = _path_keys(indexed_paths) if terms else []
    for term in terms:
        if len(found) >= params.path_total_cap:
            break
        stem = light_stem(term)
        files = [path for path, names, stems in keyed if term in names or stem in stems][
            : params.path_max_files
        ]
        if not files:
            continue
        nodes = [n for n in store.nodes_in_paths(files) if n.kind != SymbolKind.MODULE]
        children: dict[str, int] = {}
        for node in nodes:
            parent = node.qualified_name.rsplit(".", 1)[0]
            children[parent] = children.get(parent, 0) + 1
        ordered = _symbol_order(nodes, demote)
        rich = [n for n in ordered if n.kind in TYPE_KINDS and children.get(n.qualified_name, 0) > 0]
        lean = [n for n in ordered if n.kind in TYPE_KINDS and children.get(n.qualified_name, 0) == 0]
        other = [n for n in ordered if n.kind not in TYPE_KINDS]
        for tier, group, cap in (
            ("rich type", rich, params.path_rich_cap),
            ("type", lean, params.path_lean_cap),
            ("symbol", other, params.path_other_cap),
        ):
            room = min(cap, params.path_total_cap - len(found))
            if room > 0:
                found.add(group, tier, term, room)
    channel.hits = list(found.hits.values())
    return channel


def match_frame_path(frame_path: str, indexed_paths: Sequence[str]) -> str | None:
    """The longest indexed path that is the frame's path or a ``/``-suffix of it."""
    best: str | None = None
    for path in indexed_paths:
        if (frame_path == path or frame_path.endswith("/" + path)) and (
            best is None or len(path) > len(best)
        ):
            best = path
    return best


def frame_node(frame: Frame, nodes: Sequence[Node]) -> Node | None:
    """The innermost symbol whose lines hold the frame's line, else the frame's function, else
    the file's module node."""
    enclosing = [n for n in nodes if n.kind != SymbolKind.MODULE and n.start_line <= frame.line <= n.end_line]
    if enclosing:
        return min(enclosing, key=lambda n: (n.end_line - n.start_line, n.id))
    named = [n for n in nodes if frame.function and n.name == frame.function]
    if named:
        return min(named, key=lambda n: (n.start_line, n.id))
    modules = [n for n in nodes if n.kind == SymbolKind.MODULE]
    return modules[0] if modules else None


def trace_channel(
    store: Store, frames: Sequence[Frame], indexed_paths: Sequence[str], params: TaskParams
) -> tuple[Channel, list[tuple[Frame, str | None, str | None]]]:
    """Symbols enclosing the frames (innermost first) and, per frame, (path, node id) found."""
    channel = Channel("trace", params.weight_trace)
    resolved: list[tuple[Frame, str | None, str | None]] = []
    seen: set[str] = set()
    nodes_by_path: dict[str, list[Node]] = {}
    for frame in frames:
        path = match_frame_path(frame.path, indexed_paths)
        if path is None:
            resolved.append((frame, None, None))
            continue
        if path not in nodes_by_path:
            nodes_by_path[path] = store.nodes_in_paths([path])
        node = frame_node(frame, nodes_by_path[path])
        resolved.append((frame, path, node.id if node else None))
        if node is not None and node.id not in seen:
            seen.add(node.id)
            channel.hits.append(Hit(node.id, "frame", f"{path}:{frame.line}"))
    return channel, resolved


def diff_channel(seeds: Mapping[str, float], nodes: Mapping[str, Node], params: TaskParams) -> Channel:
    """Change seeds (hunk symbols before the rest of their files), modules left out."""
    ordered = sorted(
        (nid for nid in seeds if nid in nodes and nodes[nid].kind != SymbolKind.MODULE),
        key=lambda nid: (-seeds[nid], nodes[nid].path, nodes[nid].start_line, nid),
    )
    hits = [Hit(nid, "hunk" if seeds[nid] >= 1.0 else "changed file", nodes[nid].path) for nid in ordered]
    return Channel("diff", params.weight_diff, hits)
