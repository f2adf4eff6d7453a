"""Frame + symbols + edges → markdown (jinja2, ``templates/pack.md.j2``): entries, sections, diagram.

Used for people and for the PR comment. Every untrusted string goes through
``knowing_pr.render.safety`` before it reaches the template; the template receives values
already sanitised. The mermaid diagram takes the best-ranked edges while they fit the edge
reserve, so the reserve is never exceeded.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from knowing_pr.model import ScoredSymbol
from knowing_pr.render.frame import Frame, RenderLimits, ranked_edges
from knowing_pr.render.safety import (
    code_block,
    first_sentence,
    inline_code,
    mermaid_label,
    one_line,
    plain,
    truncate_bytes,
)

if TYPE_CHECKING:
    import jinja2

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
_KIND_WORD = re.compile(r"[^a-z]")
_HEX = re.compile(r"[^0-9a-f]")


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


# ---------------------------------------------------------------- entries


def _score_text(value: float) -> str:
    if math.isfinite(value) and abs(value) < 1e6:
        return f"{value:.3f}"
    return f"{value:.3g}"


def _kind_word(kind: str) -> str:
    """The kind as one bold word of letters: an ``_`` could open emphasis (``**_a_**``)."""
    return _KIND_WORD.sub("", kind.lower())[:20] or "symbol"


@lru_cache(maxsize=4096)  # a pack costs its candidates' entries, then renders the chosen ones again
def markdown_entry(sym: ScoredSymbol, limits: RenderLimits) -> str:
    """The markdown text of one symbol's entry, exactly as the pack shows it."""
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


# ---------------------------------------------------------------- diagram


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
    for source, target, kind in ranked_edges(symbols, edges):
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


# ---------------------------------------------------------------- frame lines and sections


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"


def _changed_files(inputs: Mapping[str, object]) -> int:
    total = inputs.get("files_total")
    if isinstance(total, int):
        return total
    files = inputs.get("files")
    return len(files) if isinstance(files, (list, tuple)) else 0


def _summary_line(frame: Frame, symbol_count: int) -> str:
    parts = [
        plural(symbol_count, "symbol"),
        f"{frame.tokens_used:,} / {frame.token_budget:,} tokens",
    ]
    if frame.mode != "task":
        parts.append(plural(_changed_files(frame.inputs), "file") + " changed")
    if frame.dropped_count:
        verb = "does" if frame.dropped_count == 1 else "do"
        parts.append(f"{plural(frame.dropped_count, 'more ranked symbol')} {verb} not fit")
    return " · ".join(parts)


def _input_lines(frame: Frame) -> list[str]:
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
    not_indexed = _not_indexed_line(frame)
    if not_indexed:
        lines.append(not_indexed)
    return lines


def _not_indexed_line(frame: Frame) -> str:
    """Changed files with no symbols in the pack because the index skipped them."""
    entries = frame.inputs.get("not_indexed")
    if not isinstance(entries, (list, tuple)) or not entries:
        return ""
    named = [
        f"{inline_code(str(e.get('path', '')), frame.limits.path_bytes)} ({plain(str(e.get('reason', '')), 40)})"
        for e in entries
        if isinstance(e, Mapping)
    ]
    total = frame.inputs.get("not_indexed_total")
    more = total - len(named) if isinstance(total, int) and total > len(named) else 0
    tail = f" and {more:,} more" if more else ""
    return "Changed but not indexed (no symbols from them): " + ", ".join(named) + tail


def _cochange_body(frame: Frame) -> tuple[int, str]:
    rows = list(frame.cochange)[: frame.limits.cochange_max]
    lines = [
        f"- {inline_code(path, frame.limits.path_bytes)} — changed together in {together:,} "
        f"of the last {out_of:,} changes to these files\n"
        for path, together, out_of in rows
    ]
    return len(rows), "".join(lines)


def _sections(
    frame: Frame, symbols: Sequence[ScoredSymbol], entries: Sequence[str], *, comment: bool, worst: bool
) -> list[dict[str, object]]:
    """The template's sections: entries grouped by reason, in ``_SECTIONS`` order."""
    groups: dict[str, list[str]] = {key: [] for key, _ in _SECTIONS}
    for sym, entry in zip(symbols, entries, strict=True):
        groups[_SECTION_OF_REASON.get(sym.reason, "related")].append(entry)
    cochange_count, cochange_body = _cochange_body(frame)
    sections: list[dict[str, object]] = []
    for key, title in _SECTIONS:
        count, body = (
            (cochange_count, cochange_body) if key == "cochange" else (len(groups[key]), "".join(groups[key]))
        )
        if not count and not (worst and key != "cochange"):
            continue
        # each entry costs at least one token, so no section can list more than the budget
        shown = frame.token_budget if worst and key != "cochange" else count
        collapsed = comment and count > frame.limits.comment_open_entries
        sections.append({"title": title, "count": f"{shown:,}", "body": body, "collapsed": collapsed})
    return sections


def render_markdown(
    frame: Frame,
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
        entries = [markdown_entry(sym, limits) for sym in symbols]
    sections = _sections(frame, symbols, entries, comment=comment, worst=worst)
    reserve = limits.edge_reserve_chars(frame.token_budget)
    if worst:
        diagram = "x" * reserve
    else:
        diagram = _mermaid_diagram(symbols, edges, reserve, limits) if with_diagram else ""
    pack_root = _HEX.sub("", frame.pack_root)
    return (
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
