"""Frame + symbols + edges → JSON (the DESIGN.md contract) and XML, entry by entry.

Both are assembled from separately rendered parts so that one symbol's entry text is
exactly what it adds to the whole: a JSON entry carries its ``",\\n"`` list separator
(the last one drops it), an XML entry is one ``<symbol>`` element and its line break.
Edges take the best-ranked ones while they fit the edge reserve.
"""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any

from knowing_pr.graph.merkle import params_digest
from knowing_pr.model import RankedFile, ScoredSymbol
from knowing_pr.render.frame import WORST_COUNT, Frame, RenderLimits, ranked_edges
from knowing_pr.render.jsontext import indented_json
from knowing_pr.render.safety import clean_text, first_sentence, truncate_bytes, xml_quoteattr, xml_text
from knowing_pr.render.summary import summary_json, summary_xml, summary_xml_attrs, together_rows
from knowing_pr.visible import json_visible


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


def _descriptive(text: str, max_bytes: int) -> str:
    return truncate_bytes(clean_text(text[: max_bytes * 4]).strip(), max_bytes)


# ---------------------------------------------------------------- JSON


def _json_float(value: float) -> float | None:
    return round(value, 6) if math.isfinite(value) else None


def _change_fields(sym: ScoredSymbol, limits: RenderLimits) -> dict[str, Any]:
    """What the change did to a changed symbol: its signature (before, and what differs), new."""
    if sym.reason != "changed":
        return {}
    fields: dict[str, Any] = {"signature_changed": bool(sym.signature_changes)}
    if sym.signature_changes:
        fields["signature_changes"] = list(sym.signature_changes)
        fields["signature_before"] = _descriptive(sym.signature_before, limits.signature_bytes)
    if sym.is_new:
        fields["new"] = True
    return fields


def _json_symbol(sym: ScoredSymbol, limits: RenderLimits) -> dict[str, Any]:
    node = sym.node
    contract = {
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
    }
    if sym.brief:  # a changed symbol the budget could only name: the contract fields, marked brief
        return {**contract, **_change_fields(sym, limits), "brief": True}
    return {
        **contract,
        "rwr": _json_float(sym.rwr),
        "authority": _json_float(sym.authority),
        "hub": _json_float(sym.hub),
        "components": {name: _json_float(value) for name, value in sym.components},
        "signature": _descriptive(node.signature, limits.signature_bytes),
        "doc": truncate_bytes(first_sentence(node.doc[: limits.doc_bytes * 8]), limits.doc_bytes),
        "language": node.language,
        "is_test": sym.is_test,
        "is_seed": sym.is_seed,
        **_change_fields(sym, limits),
    }


def _json_file(ranked: RankedFile, limits: RenderLimits) -> dict[str, Any]:
    """A ranked file's entry: path, score, reasons (strongest first) and the evidence in words."""
    return {
        "path": ranked.path,
        "score": _json_float(ranked.score),
        "reasons": list(ranked.reasons),
        "evidence": _descriptive(ranked.evidence, limits.text_bytes),
    }


def _json_dump(value: object, indent_level: int) -> str:
    # lone surrogates (paths decoded with surrogateescape), controls, bidi and zero-width
    # characters as \\u escapes: valid JSON, json.loads gives the same string back, and the
    # text stays encodable as UTF-8 and shows a terminal nothing it would act on
    text = json_visible(indented_json(value))
    return text.replace("\n", "\n" + "  " * indent_level)


def json_entry(sym: ScoredSymbol, limits: RenderLimits) -> str:
    """One symbol's JSON object, indented for the ``symbols`` list, with its ``",\\n"``."""
    return "    " + _json_dump(_json_symbol(sym, limits), 2) + ",\n"


def render_json(
    frame: Frame,
    symbols: Sequence[ScoredSymbol],
    edges: Sequence[tuple[str, str, str]],
    *,
    worst: bool = False,
) -> str:
    limits = frame.limits
    ranked = ranked_edges(symbols, edges)
    reserve = limits.edge_reserve_chars(frame.token_budget)
    edge_items = [
        "    " + _json_dump({"source": source, "target": target, "type": kind}, 2)
        for source, target, kind in ranked
    ]
    kept_edges = _fit_items(edge_items, 2, reserve, limits.diagram_max_edges)
    entries = "".join(json_entry(sym, limits) for sym in symbols)
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
        ("edges_total", _json_dump(WORST_COUNT if worst else len(ranked), 1)),
        ("dropped_count", _json_dump(frame.dropped_count, 1)),
        (
            "cochange",
            _json_dump(
                [
                    {"path": p, "together": t, "out_of": n, **({"with": w} if w else {})}
                    for p, t, n, w in together_rows(frame.cochange, frame.summary, frame.files)
                ],
                1,
            ),
        ),
        ("files", _json_dump([_json_file(f, limits) for f in frame.files], 1)),
        # the digest, not the parameters: they are a few thousand characters, and the manifest keeps them
        ("params", _json_dump({"digest": params_digest(frame.params)}, 1)),
    ]
    if frame.summary is not None:
        members += summary_json(frame.summary, _json_dump, worst_counts=WORST_COUNT if worst else None)
    return "{\n" + ",\n".join(f"  {json.dumps(key)}: {value}" for key, value in members) + "\n}\n"


# ---------------------------------------------------------------- XML


def _xml_attrs(pairs: Sequence[tuple[str, object]]) -> dict[str, str]:
    return {key: xml_text(str(value)) for key, value in pairs if value is not None}


def xml_entry(sym: ScoredSymbol, limits: RenderLimits) -> str:
    """One symbol's ``<symbol>`` element, indented, with its line break."""
    node = sym.node
    change = _change_fields(sym, limits)
    attrs: list[tuple[str, object]] = [
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
    if change:
        attrs.append(("signature_changed", "true" if change["signature_changed"] else "false"))
        if sym.signature_changes:
            attrs.append(("signature_changes", ", ".join(sym.signature_changes)))
        if sym.is_new:
            attrs.append(("new", "true"))
    if sym.brief:
        attrs.append(("brief", "true"))
    element = ET.Element("symbol", _xml_attrs(attrs))
    if not sym.brief:
        signature = xml_text(_descriptive(node.signature, limits.signature_bytes))
        doc = xml_text(truncate_bytes(first_sentence(node.doc[: limits.doc_bytes * 8]), limits.doc_bytes))
        if signature:
            ET.SubElement(element, "signature").text = signature
        if sym.signature_changes:
            ET.SubElement(element, "signature_before").text = xml_text(change["signature_before"])
        if doc:
            ET.SubElement(element, "doc").text = doc
    return "  " + ET.tostring(element, encoding="unicode") + "\n"


def _xml_inputs(inputs: Mapping[str, object]) -> str:
    element = ET.Element("inputs")
    for key in sorted(inputs):
        value = inputs[key]
        item = ET.SubElement(element, "input", {"name": xml_text(str(key))})
        values = value if isinstance(value, (list, tuple)) else ([] if value is None else [value])
        for one in values:
            if isinstance(one, Mapping):  # e.g. a not-indexed file: {"path": …, "reason": …}
                ET.SubElement(item, "value", {xml_text(str(k)): xml_text(str(v)) for k, v in one.items()})
            else:
                ET.SubElement(item, "value").text = xml_text(str(one))
    ET.indent(element, space="  ", level=1)
    return "  " + ET.tostring(element, encoding="unicode") + "\n"


def _xml_line(tag: str, pairs: Sequence[tuple[str, object]]) -> str:
    return "  " + ET.tostring(ET.Element(tag, _xml_attrs(pairs)), encoding="unicode") + "\n"


def render_xml(
    frame: Frame,
    symbols: Sequence[ScoredSymbol],
    edges: Sequence[tuple[str, str, str]],
    *,
    worst: bool = False,
) -> str:
    limits = frame.limits
    ranked = ranked_edges(symbols, edges)
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
        ("edges_total", WORST_COUNT if worst else len(ranked)),
    ]
    if frame.summary is not None:
        pack_attrs += summary_xml_attrs(frame.summary, WORST_COUNT if worst else None)
    opening = " ".join(f"{key}={xml_quoteattr(value)}" for key, value in _xml_attrs(pack_attrs).items())
    cochange = "".join(
        _xml_line("cochange", [("path", p), ("together", t), ("out_of", n), ("with", w or None)])
        for p, t, n, w in together_rows(frame.cochange, frame.summary, frame.files)
    )
    if frame.summary is not None:
        cochange += summary_xml(frame.summary)
    ranked_files = "".join(
        _xml_line(
            "file",
            [
                ("path", f.path),
                ("score", f"{f.score:.6f}"),
                ("reasons", " ".join(f.reasons)),
                ("evidence", _descriptive(f.evidence, limits.text_bytes)),
            ],
        )
        for f in frame.files
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<pack {opening}>\n"
        + _xml_inputs(frame.inputs)
        + "".join(xml_entry(sym, limits) for sym in symbols)
        + edges_text
        + cochange
        + ranked_files
        + "</pack>\n"
    )
