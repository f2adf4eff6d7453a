"""Pack → text: markdown (jinja2; people and the PR comment), JSON (the DESIGN.md contract), XML.

Also the token costs the packer needs, so that the budget holds for the text actually shown:

- ``entry_text(sym, fmt)`` is the exact text of one symbol's entry in that format (for JSON,
  plus its ``",\\n"`` list separator, which the last entry does not carry);
  ``entry_cost`` = ceil(len(entry_text) / chars_per_token).
- ``frame_cost(fmt, mode=…, token_budget=…, inputs=…)`` bounds everything else: headings,
  summary, inputs, PackRoot and replay lines, the co-change list, and the edges. It is computed
  before the selection is known by rendering the frame with worst-case values (every section
  present, symbol counts as large as the budget, other counts 19 digits long, 64-character
  hashes, a full edge reserve).
- Edges (the mermaid diagram in markdown, the ``edges`` list in JSON and XML) get a reserve of
  ``diagram_share`` of the budget (at most ``diagram_max_edges`` edges); edges are taken in
  rank order while they fit, so the reserve is never exceeded.

Invariant (tested with hypothesis): whenever ``sum(entry_cost) + frame_cost <= budget``,
``ceil(len(render_pack(...)) / chars_per_token) <= budget``.

Every untrusted string goes through ``knowing_pr.render.safety`` before it reaches markdown.
Rendering is deterministic: packed order, sorted tie-breaks, fixed float formats, no clock.
"""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import quoteattr

from knowing_pr.errors import UsageError
from knowing_pr.model import Pack, ScoredSymbol
from knowing_pr.render.safety import (
    LINE_CAP_BYTES,
    clean_text,
    code_block,
    first_sentence,
    inline_code,
    mermaid_label,
    one_line,
    plain,
    truncate_bytes,
    xml_text,
)

if TYPE_CHECKING:
    import jinja2

__all__ = [
    "COMMENT_MARKER",
    "FORMATS",
    "RenderLimits",
    "entry_cost",
    "entry_text",
    "frame_cost",
    "render_comment",
    "render_pack",
]

FORMATS = ("markdown", "json", "xml")
COMMENT_MARKER = "<!-- knowing-pr -->"

#: (section key, heading) in the order the markdown shows them
_SECTIONS = (
    ("changed", "Changed symbols"),
    ("caller", "Impacted callers"),
    ("callee", "What the change relies on"),
    ("test", "Tests to run"),
    ("cochange", "Often changed together"),
    ("related", "Related"),
)
_MODE_TITLES = {
    "pr": "what this pull request touches",
    "files": "what these files touch",
    "task": "code for this task",
}
_SECTION_OF_REASON = {"changed": "changed", "caller": "caller", "callee": "callee", "test": "test"}
#: stands in for any count not known before the selection (tokens used, dropped, edges)
_WORST_COUNT = 10**19 - 1
_WORST_HASH = "f" * 64
_KIND_WORD = re.compile(r"[^a-z_]")
_HEX = re.compile(r"[^0-9a-f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class RenderLimits:
    """Sizes of rendered fields (UTF-8 bytes unless named otherwise) and of the edge reserve.

    The defaults keep every markdown line under ``safety.LINE_CAP_BYTES``.
    """

    name_bytes: int = 300
    path_bytes: int = 300
    signature_bytes: int = 400
    doc_bytes: int = 400
    text_bytes: int = 500
    revision_bytes: int = 100
    label_chars: int = 32
    diagram_max_edges: int = 40
    diagram_share: float = 0.1
    chars_per_token: float = 4.0
    cochange_max: int = 10
    comment_open_entries: int = 5

    def __post_init__(self) -> None:
        header_bytes = self.name_bytes + self.path_bytes + 120
        longest = max(header_bytes, self.signature_bytes + 20, self.doc_bytes + 10, self.text_bytes + 20)
        if longest > LINE_CAP_BYTES:
            raise UsageError(
                f"render limits allow {longest}-byte lines, over the {LINE_CAP_BYTES}-byte cap",
                hint="lower name_bytes/path_bytes/signature_bytes/doc_bytes/text_bytes",
            )

    def edge_reserve_chars(self, token_budget: int) -> int:
        return max(int(token_budget * self.diagram_share * self.chars_per_token), 0)


@dataclass(frozen=True)
class _Frame:
    """Everything of a pack that is not a symbol entry."""

    mode: str
    token_budget: int
    tokens_used: int
    pack_root: str
    graph_root: str
    commit: str | None
    inputs: Mapping[str, object]
    params: Mapping[str, object]
    cochange: Sequence[tuple[str, int, int]]
    dropped_count: int
    replay_command: str
    limits: RenderLimits = field(default_factory=RenderLimits)


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}", hint="use one of: " + ", ".join(FORMATS))


def _limits(limits: RenderLimits | None) -> RenderLimits:
    return limits if limits is not None else RenderLimits()


# ---------------------------------------------------------------- entries


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    import jinja2  # lazy: ~160 ms of imports that the hook path never needs

    return jinja2.Environment(
        loader=jinja2.PackageLoader("knowing_pr.render", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "xml"), default=False),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        undefined=jinja2.StrictUndefined,
    )


def _score_text(value: float) -> str:
    if math.isfinite(value) and abs(value) < 1e6:
        return f"{value:.3f}"
    return f"{value:.3g}"


def _kind_word(kind: str) -> str:
    return _KIND_WORD.sub("", kind.lower())[:20] or "symbol"


def _markdown_entry(sym: ScoredSymbol, limits: RenderLimits) -> str:
    node = sym.node
    lines = f":{node.start_line}-{node.end_line}"
    path = truncate_bytes(one_line(node.path[: limits.path_bytes * 4]), limits.path_bytes - 60)
    signature = one_line(node.signature[: limits.signature_bytes * 4])
    doc = first_sentence(node.doc[: limits.doc_bytes * 8])
    fields = {
        "kind": _kind_word(node.kind),
        "name": inline_code(node.qualified_name or node.name, limits.name_bytes),
        "location": inline_code(path + lines, limits.path_bytes),
        "score": _score_text(sym.score),
        "signature": inline_code(signature, limits.signature_bytes) if signature else "",
        "doc": plain(doc, limits.doc_bytes) if doc else "",
    }
    return str(_environment().get_template("pack.md.j2").module.entry(fields))  # type: ignore[attr-defined]


def _json_float(value: float) -> float | None:
    return round(value, 6) if math.isfinite(value) else None


def _descriptive(text: str, max_bytes: int) -> str:
    return truncate_bytes(clean_text(text[: max_bytes * 4]).strip(), max_bytes)


def _json_symbol(sym: ScoredSymbol, limits: RenderLimits) -> dict[str, Any]:
    node = sym.node
    return {
        "id": node.id,
        "name": node.name,
        "qualified_name": node.qualified_name,
        "kind": node.kind,
        "file": node.path,
        "start_line": node.start_line,
        "end_line": node.end_line,
        "score": _json_float(sym.score),
        "distance": sym.distance,
        "reason": sym.reason,
        "rwr": _json_float(sym.rwr),
        "authority": _json_float(sym.authority),
        "hub": _json_float(sym.hub),
        "components": {name: _json_float(value) for name, value in sym.components},
        "signature": _descriptive(node.signature, limits.signature_bytes),
        "doc": truncate_bytes(first_sentence(node.doc[: limits.doc_bytes * 8]), limits.doc_bytes),
        "language": node.language,
        "is_test": sym.is_test,
        "is_seed": sym.is_seed,
    }


def _json_dump(value: object, indent_level: int) -> str:
    text = json.dumps(value, ensure_ascii=False, indent=2)
    # lone surrogates (paths decoded with surrogateescape) as \\u escapes: valid JSON, and
    # json.loads gives the same string back, while the text stays encodable as UTF-8
    text = _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
    return text.replace("\n", "\n" + "  " * indent_level)


def _json_entry(sym: ScoredSymbol, limits: RenderLimits) -> str:
    return "    " + _json_dump(_json_symbol(sym, limits), 2) + ",\n"


def _xml_attrs(pairs: Sequence[tuple[str, object]]) -> dict[str, str]:
    return {key: xml_text(str(value)) for key, value in pairs if value is not None}


def _xml_entry(sym: ScoredSymbol, limits: RenderLimits) -> str:
    node = sym.node
    element = ET.Element(
        "symbol",
        _xml_attrs(
            [
                ("id", node.id),
                ("name", node.name),
                ("qualified_name", node.qualified_name),
                ("kind", node.kind),
                ("file", node.path),
                ("start_line", node.start_line),
                ("end_line", node.end_line),
                ("score", f"{sym.score:.6f}"),
                ("distance", sym.distance),
                ("reason", sym.reason),
                ("language", node.language),
                ("is_test", "true" if sym.is_test else "false"),
            ]
        ),
    )
    signature = xml_text(_descriptive(node.signature, limits.signature_bytes))
    doc = xml_text(truncate_bytes(first_sentence(node.doc[: limits.doc_bytes * 8]), limits.doc_bytes))
    if signature:
        ET.SubElement(element, "signature").text = signature
    if doc:
        ET.SubElement(element, "doc").text = doc
    return "  " + ET.tostring(element, encoding="unicode") + "\n"


def entry_text(sym: ScoredSymbol, fmt: str, *, limits: RenderLimits | None = None) -> str:
    """The exact text of ``sym``'s entry in ``fmt`` (JSON: with its ``",\\n"`` separator)."""
    _check_format(fmt)
    chosen = _limits(limits)
    if fmt == "markdown":
        return _markdown_entry(sym, chosen)
    if fmt == "json":
        return _json_entry(sym, chosen)
    return _xml_entry(sym, chosen)


def entry_cost(
    sym: ScoredSymbol, fmt: str, chars_per_token: float = 4.0, *, limits: RenderLimits | None = None
) -> int:
    """Tokens of ``entry_text``: ceil(characters / chars_per_token)."""
    return math.ceil(len(entry_text(sym, fmt, limits=limits)) / chars_per_token)


# ---------------------------------------------------------------- edges


def _ranked_edges(
    symbols: Sequence[ScoredSymbol], edges: Sequence[tuple[str, str, str]]
) -> list[tuple[str, str, str]]:
    """Edges between packed symbols, deduplicated, the best-ranked endpoints first."""
    rank = {sym.node.id: index for index, sym in enumerate(symbols)}
    unique = {edge for edge in edges if edge[0] in rank and edge[1] in rank}
    return sorted(
        unique,
        key=lambda e: (min(rank[e[0]], rank[e[1]]), max(rank[e[0]], rank[e[1]]), e[2], e[0], e[1]),
    )


def _fit_items(items: Sequence[str], separator_chars: int, reserve: int, max_count: int) -> list[str]:
    """Items in order, skipping any that would take the joined text past ``reserve``."""
    kept: list[str] = []
    used = 0
    for item in items:
        if len(kept) >= max_count:
            break
        added = len(item) + (separator_chars if kept else 0)
        if used + added <= reserve:
            kept.append(item)
            used += added
    return kept


def _edge_type_word(kind: str) -> str:
    return _KIND_WORD.sub("", kind.lower())[:16]


def _mermaid_diagram(
    symbols: Sequence[ScoredSymbol], edges: Sequence[tuple[str, str, str]], reserve: int, limits: RenderLimits
) -> str:
    """A ``graph LR`` of the best-ranked edges whose fenced text fits ``reserve`` characters."""
    names = {sym.node.id: sym.node.name or sym.node.qualified_name for sym in symbols}
    used = len(code_block("graph LR", "mermaid"))
    node_ids: dict[str, str] = {}
    lines: list[str] = []
    edge_count = 0
    for source, target, kind in _ranked_edges(symbols, edges):
        if edge_count >= limits.diagram_max_edges:
            break
        new_ids = dict(node_ids)
        added: list[str] = []
        for end in (source, target):
            if end not in new_ids:
                new_ids[end] = f"n{len(new_ids) + 1}"
                added.append(f'  {new_ids[end]}["{mermaid_label(names[end], limits.label_chars)}"]')
        word = _edge_type_word(kind)
        arrow = f" -->|{word}| " if word else " --> "
        added.append(f"  {new_ids[source]}{arrow}{new_ids[target]}")
        cost = sum(len(line) + 1 for line in added)
        if used + cost <= reserve:
            node_ids = new_ids
            lines.extend(added)
            used += cost
            edge_count += 1
    if not edge_count:
        return ""
    return code_block("graph LR\n" + "\n".join(lines), "mermaid")


# ---------------------------------------------------------------- markdown


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"


def _changed_files(inputs: Mapping[str, object]) -> int:
    files = inputs.get("files")
    return len(files) if isinstance(files, (list, tuple)) else 0


def _summary_line(frame: _Frame, symbol_count: int) -> str:
    parts = [
        _plural(symbol_count, "symbol"),
        f"{frame.tokens_used:,} / {frame.token_budget:,} tokens",
    ]
    if frame.mode != "task":
        parts.append(_plural(_changed_files(frame.inputs), "file") + " changed")
    if frame.dropped_count:
        verb = "does" if frame.dropped_count == 1 else "do"
        parts.append(f"{_plural(frame.dropped_count, 'more ranked symbol')} {verb} not fit")
    return " · ".join(parts)


def _input_lines(frame: _Frame) -> list[str]:
    limits = frame.limits
    lines: list[str] = []
    task = frame.inputs.get("task")
    if isinstance(task, str) and one_line(task):
        lines.append("Task: " + plain(task, limits.text_bytes))
    base, head = frame.inputs.get("base"), frame.inputs.get("head")
    if isinstance(base, str) and isinstance(head, str) and base and head:
        base_code = inline_code(base, limits.revision_bytes)
        head_code = inline_code(head, limits.revision_bytes)
        lines.append(f"Base {base_code} → head {head_code}")
    return lines


def _cochange_body(frame: _Frame) -> tuple[int, str]:
    rows = list(frame.cochange)[: frame.limits.cochange_max]
    lines = [
        f"- {inline_code(path, frame.limits.path_bytes)} — changed together in {together:,} "
        f"of the last {out_of:,} changes to these files\n"
        for path, together, out_of in rows
    ]
    return len(rows), "".join(lines)


def _markdown(
    frame: _Frame,
    symbols: Sequence[ScoredSymbol],
    edges: Sequence[tuple[str, str, str]],
    *,
    comment: bool = False,
    worst: bool = False,
    with_diagram: bool = True,
    cut_note: str = "",
    entries: Sequence[str] | None = None,
) -> str:
    """The markdown text; ``entries`` are the symbols' entry texts when already rendered."""
    limits = frame.limits
    if entries is None:
        entries = [_markdown_entry(sym, limits) for sym in symbols]
    groups: dict[str, list[str]] = {key: [] for key, _ in _SECTIONS}
    for sym, entry in zip(symbols, entries, strict=True):
        groups[_SECTION_OF_REASON.get(sym.reason, "related")].append(entry)
    cochange_count, cochange_body = _cochange_body(frame)
    sections = []
    for key, title in _SECTIONS:
        count, body = (
            (cochange_count, cochange_body) if key == "cochange" else (len(groups[key]), "".join(groups[key]))
        )
        if not count and not (worst and key != "cochange"):
            continue
        # each entry costs at least one token, so no section can list more than the budget
        shown = frame.token_budget if worst and key != "cochange" else count
        collapsed = comment and count > limits.comment_open_entries
        sections.append({"title": title, "count": f"{shown:,}", "body": body, "collapsed": collapsed})
    reserve = limits.edge_reserve_chars(frame.token_budget)
    if worst:
        diagram = "x" * reserve
    else:
        diagram = _mermaid_diagram(symbols, edges, reserve, limits) if with_diagram else ""
    pack_root = _HEX.sub("", frame.pack_root)
    text = (
        _environment()
        .get_template("pack.md.j2")
        .render(
            comment=comment,
            pack_root=pack_root,
            title="knowing-pr · " + _MODE_TITLES.get(frame.mode, "context pack"),
            summary=_summary_line(frame, frame.token_budget if worst else len(symbols)),
            input_lines=_input_lines(frame),
            sections=sections,
            diagram=diagram,
            cut_note=cut_note,
            root=inline_code(frame.pack_root, limits.revision_bytes),
            replay=inline_code(frame.replay_command, limits.text_bytes),
        )
    )
    return text


# ---------------------------------------------------------------- JSON and XML


def _json(
    frame: _Frame,
    symbols: Sequence[ScoredSymbol],
    edges: Sequence[tuple[str, str, str]],
    *,
    worst: bool = False,
) -> str:
    limits = frame.limits
    ranked = _ranked_edges(symbols, edges)
    reserve = limits.edge_reserve_chars(frame.token_budget)
    edge_items = [
        "    " + _json_dump({"source": source, "target": target, "type": kind}, 2)
        for source, target, kind in ranked
    ]
    kept_edges = _fit_items(edge_items, 2, reserve, limits.diagram_max_edges)
    entries = "".join(_json_entry(sym, limits) for sym in symbols)
    symbols_text = "[\n" + entries.removesuffix(",\n") + "\n  ]" if worst or entries else "[]"
    if worst:
        edges_text = "[\n" + "x" * reserve + "\n  ]"
    else:
        edges_text = "[\n" + ",\n".join(kept_edges) + "\n  ]" if kept_edges else "[]"
    members = [
        ("pack_root", _json_dump(frame.pack_root, 1)),
        ("mode", _json_dump(frame.mode, 1)),
        ("token_budget", _json_dump(frame.token_budget, 1)),
        ("tokens_used", _json_dump(frame.tokens_used, 1)),
        ("graph_root", _json_dump(frame.graph_root, 1)),
        ("commit", _json_dump(frame.commit, 1)),
        ("inputs", _json_dump(dict(frame.inputs), 1)),
        ("symbols", symbols_text),
        ("edges", edges_text),
        ("edges_total", _json_dump(_WORST_COUNT if worst else len(ranked), 1)),
        ("dropped_count", _json_dump(frame.dropped_count, 1)),
        (
            "cochange",
            _json_dump([{"path": p, "together": t, "out_of": n} for p, t, n in frame.cochange], 1),
        ),
        ("params", _json_dump(dict(frame.params), 1)),
    ]
    return "{\n" + ",\n".join(f"  {json.dumps(key)}: {value}" for key, value in members) + "\n}\n"


def _xml_inputs(inputs: Mapping[str, object]) -> str:
    element = ET.Element("inputs")
    for key in sorted(inputs):
        value = inputs[key]
        item = ET.SubElement(element, "input", {"name": xml_text(str(key))})
        values = value if isinstance(value, (list, tuple)) else ([] if value is None else [value])
        for one in values:
            ET.SubElement(item, "value").text = xml_text(str(one))
    ET.indent(element, space="  ", level=1)
    return "  " + ET.tostring(element, encoding="unicode") + "\n"


def _xml_line(tag: str, pairs: Sequence[tuple[str, object]]) -> str:
    return "  " + ET.tostring(ET.Element(tag, _xml_attrs(pairs)), encoding="unicode") + "\n"


def _xml(
    frame: _Frame,
    symbols: Sequence[ScoredSymbol],
    edges: Sequence[tuple[str, str, str]],
    *,
    worst: bool = False,
) -> str:
    limits = frame.limits
    ranked = _ranked_edges(symbols, edges)
    reserve = limits.edge_reserve_chars(frame.token_budget)
    edge_lines = [_xml_line("edge", [("source", s), ("target", t), ("type", k)]) for s, t, k in ranked]
    edges_text = (
        "x" * reserve if worst else "".join(_fit_items(edge_lines, 0, reserve, limits.diagram_max_edges))
    )
    pack_attrs = [
        ("pack_root", frame.pack_root),
        ("mode", frame.mode),
        ("token_budget", frame.token_budget),
        ("tokens_used", frame.tokens_used),
        ("graph_root", frame.graph_root),
        ("commit", frame.commit),
        ("dropped_count", frame.dropped_count),
        ("edges_total", _WORST_COUNT if worst else len(ranked)),
    ]
    opening = " ".join(
        f"{key}={quoteattr(value, {chr(10): '&#10;', chr(13): '&#13;', chr(9): '&#9;'})}"
        for key, value in _xml_attrs(pack_attrs).items()
    )
    cochange = "".join(
        _xml_line("cochange", [("path", p), ("together", t), ("out_of", n)]) for p, t, n in frame.cochange
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<pack {opening}>\n"
        + _xml_inputs(frame.inputs)
        + "".join(_xml_entry(sym, limits) for sym in symbols)
        + edges_text
        + cochange
        + "</pack>\n"
    )


# ---------------------------------------------------------------- public API


def _ordered(symbols: Sequence[ScoredSymbol]) -> list[ScoredSymbol]:
    """Score descending; a stable sort keeps the packer's tie order; NaN sorts last."""
    return sorted(symbols, key=lambda sym: -sym.score if not math.isnan(sym.score) else math.inf)


def _frame_of(pack: Pack, replay_command: str | None, limits: RenderLimits) -> _Frame:
    return _Frame(
        mode=pack.mode,
        token_budget=pack.token_budget,
        tokens_used=pack.tokens_used,
        pack_root=pack.pack_root,
        graph_root=pack.graph_root,
        commit=pack.commit,
        inputs=pack.inputs,
        params=pack.params,
        cochange=pack.cochange,
        dropped_count=len(pack.dropped),
        replay_command=replay_command or f"knowing-pr replay {pack.pack_root}",
        limits=limits,
    )


def _render(
    frame: _Frame,
    fmt: str,
    symbols: Sequence[ScoredSymbol],
    edges: Sequence[tuple[str, str, str]],
    *,
    worst: bool = False,
) -> str:
    if fmt == "markdown":
        return _markdown(frame, symbols, edges, worst=worst)
    if fmt == "json":
        return _json(frame, symbols, edges, worst=worst)
    return _xml(frame, symbols, edges, worst=worst)


def render_pack(
    pack: Pack, fmt: str, *, replay_command: str | None = None, limits: RenderLimits | None = None
) -> str:
    """The whole pack as ``fmt`` (one of ``FORMATS``); ``UsageError`` for any other format."""
    _check_format(fmt)
    frame = _frame_of(pack, replay_command, _limits(limits))
    return _render(frame, fmt, _ordered(pack.symbols), pack.edges)


def frame_cost(
    fmt: str,
    *,
    mode: str,
    token_budget: int,
    inputs: Mapping[str, object],
    graph_root: str | None = None,
    commit: str | None = None,
    params: Mapping[str, object] | None = None,
    cochange: Sequence[tuple[str, int, int]] = (),
    replay_command: str | None = None,
    chars_per_token: float = 4.0,
    limits: RenderLimits | None = None,
) -> int:
    """Tokens of everything in ``fmt``'s output that is not a symbol entry, at most.

    Pass the values the pack will carry; ``graph_root``/``commit`` left as ``None`` are
    assumed 64 characters long. Counts not known yet are assumed 19 digits long.
    """
    _check_format(fmt)
    frame = _Frame(
        mode=mode,
        token_budget=token_budget,
        tokens_used=_WORST_COUNT,
        pack_root=_WORST_HASH,
        graph_root=graph_root if graph_root is not None else _WORST_HASH,
        commit=commit if commit is not None else _WORST_HASH,
        inputs=inputs,
        params=params or {},
        cochange=cochange,
        dropped_count=_WORST_COUNT,
        replay_command=replay_command or f"knowing-pr replay {_WORST_HASH}",
        limits=_limits(limits),
    )
    return math.ceil(len(_render(frame, fmt, [], [], worst=True)) / chars_per_token)


def _cut_note(cut: int, diagram_dropped: bool) -> str:
    parts = []
    if diagram_dropped:
        parts.append("The diagram was left out")
    if cut:
        parts.append(f"{_plural(cut, 'lower-ranked symbol')} {'was' if cut == 1 else 'were'} cut")
    if not parts:
        return ""
    return (
        " and ".join(parts)
        + " to fit GitHub's comment limit; the full pack is in the job summary / artifact."
    )


def render_comment(
    pack: Pack,
    *,
    max_bytes: int = 65536,
    replay_command: str | None = None,
    limits: RenderLimits | None = None,
) -> str:
    """The sticky PR comment: marker, hidden manifest, the markdown pack in ≤ ``max_bytes`` bytes.

    Long sections sit in ``<details>`` blocks. When the body is too big, the diagram goes
    first, then the lowest-ranked entries, whole, with a note saying so.
    """
    chosen = _limits(limits)
    frame = _frame_of(pack, replay_command, chosen)
    symbols = _ordered(pack.symbols)
    entries = [_markdown_entry(sym, chosen) for sym in symbols]
    entry_bytes = [len(entry.encode("utf-8")) for entry in entries]

    def attempt(keep: int, with_diagram: bool) -> str:
        note = _cut_note(len(symbols) - keep, diagram_dropped=not with_diagram)
        return _markdown(
            frame,
            symbols[:keep],
            pack.edges,
            comment=True,
            with_diagram=with_diagram,
            cut_note=note,
            entries=entries[:keep],
        )

    if sum(entry_bytes) <= max_bytes:
        body = attempt(len(symbols), True)
        if len(body.encode("utf-8")) <= max_bytes:
            return body
    keep = len(symbols)
    excess = sum(entry_bytes) - max_bytes  # the entries alone must fit: a first cut
    while True:
        while keep > 0 and excess > 0:
            keep -= 1
            excess -= entry_bytes[keep]
        body = attempt(keep, False)
        excess = len(body.encode("utf-8")) - max_bytes
        if excess <= 0:
            return body
        if keep == 0:
            raise UsageError(
                f"a comment cannot fit in {max_bytes} bytes",
                hint="allow at least a few kilobytes for the comment",
            )
