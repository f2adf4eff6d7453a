"""Graph nodes + edges → the ``export`` formats: JSON Lines (the contract), GraphML, DOT.

JSON Lines (one object per line, nodes first, then edges; both sorted, so the same graph
gives the same bytes)::

    {"type": "node", "id", "kind", "name", "qualified_name", "file", "start_line",
     "end_line", "language"}
    {"type": "edge", "source", "target", "kind", "confidence", "rule"}

Ids are the pack JSON's node ids; ``kind`` of an edge is its type label (``calls``,
``imports``, …); ``confidence`` lies in [0, 1]; ``rule`` names how the edge was made
(``knowing_pr.graph.rules``). GraphML carries the same attributes as ``<data>`` keys (networkx's
``read_graphml`` reads it into a ``MultiDiGraph``); DOT is for small graphs (a label per node,
one line per edge).

Every function yields text in chunks so a repository of a million edges is written without
holding the whole document in memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from knowing_pr.model import Node
from knowing_pr.render.safety import xml_escape, xml_quoteattr, xml_text
from knowing_pr.visible import json_visible, visible

__all__ = ["EXPORT_FORMATS", "ExportEdge", "export_lines"]

EXPORT_FORMATS = ("jsonl", "graphml", "dot")


@dataclass(frozen=True, slots=True)
class ExportEdge:
    """One edge as the export contract states it."""

    source: str
    target: str
    kind: str
    confidence: float
    rule: str


def export_lines(fmt: str, nodes: Iterable[Node], edges: Iterable[ExportEdge]) -> Iterator[str]:
    """The document in ``fmt``, line by line (each line ends with a newline)."""
    if fmt == "jsonl":
        return _jsonl(nodes, edges)
    if fmt == "graphml":
        return _graphml(nodes, edges)
    if fmt == "dot":
        return _dot(nodes, edges)
    raise ValueError(f"unknown export format {fmt!r}")


def _node_record(node: Node) -> dict[str, object]:
    return {
        "type": "node",
        "id": node.id,
        "kind": node.kind,
        "name": node.name,
        "qualified_name": node.qualified_name,
        "file": node.path,
        "start_line": node.start_line,
        "end_line": node.end_line,
        "language": node.language,
    }


def _edge_record(edge: ExportEdge) -> dict[str, object]:
    return {
        "type": "edge",
        "source": edge.source,
        "target": edge.target,
        "kind": edge.kind,
        "confidence": round(edge.confidence, 4),
        "rule": edge.rule,
    }


def _jsonl(nodes: Iterable[Node], edges: Iterable[ExportEdge]) -> Iterator[str]:
    for node in nodes:
        yield json_visible(json.dumps(_node_record(node), ensure_ascii=False, separators=(",", ":"))) + "\n"
    for edge in edges:
        yield json_visible(json.dumps(_edge_record(edge), ensure_ascii=False, separators=(",", ":"))) + "\n"


_NODE_KEYS = (
    ("kind", "string"),
    ("name", "string"),
    ("qualified_name", "string"),
    ("file", "string"),
    ("start_line", "int"),
    ("end_line", "int"),
    ("language", "string"),
)
_EDGE_KEYS = (("kind", "string"), ("confidence", "double"), ("rule", "string"))


def _xml_text(value: object) -> str:
    """XML 1.0 has no place for most control characters, even escaped: they are shown as
    escapes (``\\x1b``), with the invisible ones (``\\u202e``)."""
    return xml_escape(xml_text(str(value)))


def _graphml(nodes: Iterable[Node], edges: Iterable[ExportEdge]) -> Iterator[str]:
    yield '<?xml version="1.0" encoding="UTF-8"?>\n'
    yield '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
    for key, kind in _NODE_KEYS:
        yield f'  <key id="n_{key}" for="node" attr.name="{key}" attr.type="{kind}"/>\n'
    for key, kind in _EDGE_KEYS:
        yield f'  <key id="e_{key}" for="edge" attr.name="{key}" attr.type="{kind}"/>\n'
    yield '  <graph id="knowing-pr" edgedefault="directed">\n'
    for node in nodes:
        record = _node_record(node)
        yield f"    <node id={xml_quoteattr(node.id)}>"
        yield "".join(f'<data key="n_{key}">{_xml_text(record[key])}</data>' for key, _ in _NODE_KEYS)
        yield "</node>\n"
    for edge in edges:
        record = _edge_record(edge)
        yield f"    <edge source={xml_quoteattr(edge.source)} target={xml_quoteattr(edge.target)}>"
        yield "".join(f'<data key="e_{key}">{_xml_text(record[key])}</data>' for key, _ in _EDGE_KEYS)
        yield "</edge>\n"
    yield "  </graph>\n</graphml>\n"


def _dot_string(*lines: str) -> str:
    """A quoted DOT string; several lines are joined with DOT's own line break escape. Control,
    bidi and zero-width characters from the repository are shown as escapes (``visible``)."""
    escaped = (visible(line).replace("\\", "\\\\").replace('"', '\\"') for line in lines)
    return '"' + "\\n".join(escaped) + '"'


def _dot(nodes: Iterable[Node], edges: Iterable[ExportEdge]) -> Iterator[str]:
    yield "digraph knowing_pr {\n"
    yield "  node [shape=box, fontname=monospace];\n"
    for node in nodes:
        label = _dot_string(node.qualified_name, f"{node.kind} · {node.path}:{node.start_line}")
        yield f"  {_dot_string(node.id)} [label={label}];\n"
    for edge in edges:
        yield (
            f"  {_dot_string(edge.source)} -> {_dot_string(edge.target)}"
            f" [label={_dot_string(edge.kind)}, confidence={edge.confidence:.4f}, rule={_dot_string(edge.rule)}];\n"
        )
    yield "}\n"
