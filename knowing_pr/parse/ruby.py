"""Ruby syntax tree → definitions, references and imports (patterns in ``queries/ruby.scm``).

Definitions: classes and modules (both kind ``class``; ``class A::B`` is ``A.B``), methods
(``def`` and ``def self.x``; a top-level ``def`` is a function) and constants. References:
method calls with or without receiver and bare statement identifiers that are no local
(``Foo.new`` also calls ``Foo``), ``class C < Base`` (extends) and ``include``/``extend``/
``prepend M`` (implements). Imports: ``require`` and ``require_relative`` as written.
"""

from __future__ import annotations

from tree_sitter import Node

from knowing_pr.model import Import, SymbolKind
from knowing_pr.parse.docs import DOC_MAX_CHARS, SIGNATURE_MAX_CHARS, comment_run_before, signature_of
from knowing_pr.parse.syntax import QUALIFIER_MAX_CHARS, Records, Use, assemble_nested
from knowing_pr.parse.treesitter import (
    Captures,
    capped,
    compact_text,
    first_capture,
    line_of,
    load_query,
    node_text,
    query_matches_bounded,
)

__all__ = ["extract"]

_MIXINS = frozenset({"include", "extend", "prepend"})
_REQUIRES = frozenset({"require", "require_relative"})
_CONSTANT_TYPES = frozenset({"constant", "scope_resolution"})
_KINDS = {"class": SymbolKind.CLASS, "function": SymbolKind.FUNCTION, "constant": SymbolKind.CONSTANT}

Candidate = tuple[Node, str, str, str, str]


def extract(root: Node, source: bytes, language: str) -> Records:
    candidates: list[Candidate] = []
    uses: list[Use] = []
    bare: list[Node] = []
    local_names: set[str] = set()
    imports: list[Import] = []
    comments: dict[int, Node] = {}
    for _, captures in query_matches_bounded(load_query("ruby", language), root):
        name_node = first_capture(captures, "name")
        if "comment" in captures:
            comments[captures["comment"][0].end_byte] = captures["comment"][0]
        elif "bare" in captures:
            bare.append(captures["bare"][0])
        elif "local" in captures:
            local_names.update(node_text(node, source) for node in captures["local"])
        elif "import" in captures:
            imports.extend(_import_of(captures["import"][0], source))
        elif name_node is not None:
            candidate = _candidate(captures, name_node, source)
            if candidate is not None:
                candidates.append(candidate)
            else:
                uses.extend(_reference_uses(captures, name_node, source))
    for node in bare:
        name = node_text(node, source)
        if name not in local_names:
            uses.append((node, "call", name, ""))
    candidates = [
        (node, name, kind, signature, _doc_above(node, comments, source))
        for node, name, kind, signature, _ in candidates
    ]
    return assemble_nested(candidates, uses, imports)


def _constant_path(node: Node | None, source: bytes) -> str:
    """``A::B`` → ``A.B`` (a leading ``::`` names the top level and is dropped)."""
    return compact_text(node, source, QUALIFIER_MAX_CHARS).removeprefix("::").replace("::", ".")


def _qualifier(node: Node | None, source: bytes) -> str:
    return compact_text(node, source, QUALIFIER_MAX_CHARS).removeprefix("::")


def _candidate(captures: Captures, name_node: Node, source: bytes) -> Candidate | None:
    for capture, kind in _KINDS.items():
        node = first_capture(captures, f"definition.{capture}")
        if node is not None:
            name = (
                _constant_path(name_node, source)
                if kind == SymbolKind.CLASS
                else node_text(name_node, source)
            )
            return node, name, kind, _signature(node, source), ""
    return None


def _doc_above(node: Node, comments: dict[int, Node], source: bytes) -> str:
    lines = [
        line.strip().lstrip("#").strip()
        for comment in comment_run_before(node.start_byte, comments, source)
        for line in node_text(comment, source).splitlines()
    ]
    return capped(" ".join(line for line in lines if line), DOC_MAX_CHARS)


def _signature(node: Node, source: bytes) -> str:
    """Header of a ``def``/``class``/``module``: up to its last header part (name, parameters,
    superclass), so comments or code on the header line are left out."""
    if node.type == "assignment":
        return signature_of(node, source, None)
    header_end = node.start_byte
    for field in ("name", "parameters", "superclass"):
        part = node.child_by_field_name(field)
        if part is not None:
            header_end = max(header_end, part.end_byte)
    header = source[node.start_byte : header_end]
    return capped(" ".join(header.decode("utf-8", "replace").split()), SIGNATURE_MAX_CHARS)


def _reference_uses(captures: Captures, name_node: Node, source: bytes) -> list[Use]:
    receiver = first_capture(captures, "receiver")
    name = node_text(name_node, source)
    qualifier = _qualifier(receiver, source)
    extends = first_capture(captures, "reference.extends")
    if extends is not None:
        return [(name_node, "extends", name, qualifier)]
    call = first_capture(captures, "reference.call")
    if call is None:
        return []
    if receiver is None and name in _MIXINS:
        return _mixin_uses(call, source)
    if receiver is None and name in _REQUIRES:
        return []
    # the method name's line, not the receiver's: ``MockRequest.new(app).\n  query("/")`` calls
    # ``query`` on the second line
    uses: list[Use] = [(name_node, "call", name, qualifier)]
    if name == "new" and receiver is not None and receiver.type in _CONSTANT_TYPES:
        uses.append(_constant_use(receiver, "call", source))
    return uses


def _constant_use(node: Node, kind: str, source: bytes) -> Use:
    """``Foo`` → (Foo, ""); ``A::B`` → (B, "A")."""
    if node.type == "scope_resolution":
        scope = node.child_by_field_name("scope")
        return node, kind, node_text(node.child_by_field_name("name"), source), _qualifier(scope, source)
    return node, kind, node_text(node, source), ""


def _mixin_uses(call: Node, source: bytes) -> list[Use]:
    arguments = call.child_by_field_name("arguments")
    if arguments is None:
        return []
    return [
        _constant_use(argument, "implements", source)
        for argument in arguments.named_children
        if argument.type in _CONSTANT_TYPES
    ]


def _import_of(call: Node, source: bytes) -> list[Import]:
    arguments = call.child_by_field_name("arguments")
    if arguments is None or not arguments.named_children:
        return []
    text = node_text(arguments.named_children[0], source)
    module = text[1:-1] if len(text) >= 2 else ""
    return [Import(module=module, names=(), line=line_of(call))] if module else []
