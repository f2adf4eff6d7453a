"""Go syntax tree → definitions, references and imports (patterns in ``queries/go.scm``).

Definitions: functions; methods ``func (r *T[K]) M()`` as ``T.M`` with parent ``T`` (the
receiver type, pointer and type arguments stripped; ``T`` may be declared in another file of
the package); type declarations (``struct``, ``interface``, any other named type or alias is a
``class``); top-level constants whose name is exported or ``ALL_CAPS``. A type declared alone
spans its ``type`` keyword; one inside a ``type ( … )`` group spans its own line(s).

References: calls (``f()``, ``pkg.F()``, ``x.y.M()`` with qualifier ``x.y``, conversions
``T(x)``), composite literals ``T{…}`` (``type``), named types in parameters, results, fields
and type declarations (``type``), embedded struct fields and embedded interfaces
(``extends``). Builtin types (``GO_BUILTIN_TYPES``) and type parameters are never reported.

Imports: one ``Import`` per import spec, module = the path as written, names
``(("*", local name),)`` where the local name is the alias (``_`` and ``.`` included) or the
path's last segment without a major-version suffix (``a/b/v2`` → ``b``, ``yaml.v3`` → ``yaml``).
"""

from __future__ import annotations

import re
from dataclasses import replace

from tree_sitter import Node

from knowing_pr.model import Import, SymbolKind
from knowing_pr.parse.docs import comments_above, doc_text, signature_of
from knowing_pr.parse.go_scopes import GoScopes
from knowing_pr.parse.syntax import (
    DefinitionCandidate,
    ExtractionRules,
    Records,
    Use,
    call_use,
    extract_with_rules,
    import_route,
    named_type_uses,
    use_route,
)
from knowing_pr.parse.treesitter import Captures, descendants, first_capture, line_of, node_text

__all__ = ["GO_BUILTIN_TYPES", "extract"]

#: predeclared type names: never a symbol of the repository
GO_BUILTIN_TYPES = frozenset(
    {
        "any",
        "bool",
        "byte",
        "comparable",
        "complex64",
        "complex128",
        "error",
        "float32",
        "float64",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "rune",
        "string",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
    }
)
_COMMENT_TYPES = frozenset({"comment"})
#: type expressions whose inner names are reported by their own query patterns
_TYPE_WALK_STOPS = frozenset({"struct_type", "interface_type", "qualified_type", "parameter_list"})
_ALL_CAPS = re.compile(r"^[A-Z][A-Z0-9_]*$")
_MAJOR_VERSION = re.compile(r"^v[0-9]+$")


def extract(root: Node, source: bytes, language: str) -> Records:
    callees: dict[int, tuple[Node | None, Node]] = {}  # a call's name node → (operand, name)

    def call_uses(callee: Node, text: bytes) -> list[Use]:
        return _call_uses(callee, text, callees)

    rules = replace(
        _RULES, routes=(*_RULES.routes[:1], use_route("reference.call", call_uses), *_RULES.routes[2:])
    )
    scopes = GoScopes(root, source, language)

    def hint_of(use: Use) -> str:
        anchor, _, name, qualifier = use
        operand, _ = callees.get(anchor.start_byte, (None, anchor))
        if operand is not None:
            return scopes.hint_of(operand, "." + name)
        if qualifier and qualifier.isidentifier():
            return scopes.hint_of_name(qualifier, anchor.start_byte, "." + name)
        return scopes.hint_of(anchor)

    definitions, references, imports, _ = extract_with_rules(rules, root, source, language, hint_of)
    return definitions, references, imports, scopes.facts()


def _is_receiver_type(type_node: Node) -> bool:
    """The ``*T`` of ``func (r *T) M()``: the method's parent already says so."""
    declaration = type_node.parent
    receiver = declaration.parent if declaration is not None else None
    method = receiver.parent if receiver is not None else None
    return (
        method is not None
        and method.type == "method_declaration"
        and method.child_by_field_name("receiver") == receiver
    )


def _candidates(captures: Captures, source: bytes) -> list[DefinitionCandidate]:
    names = captures.get("name", [])
    if not names:
        return []
    name = node_text(names[0], source)
    body = first_capture(captures, "body")
    if "definition.function" in captures:
        node = captures["definition.function"][0]
        return [_candidate(node, name, SymbolKind.FUNCTION, source, body)]
    if "definition.method" in captures:
        node = captures["definition.method"][0]
        owner = _receiver_type(captures["receiver"][0], source)
        return [_candidate(node, name, SymbolKind.METHOD, source, body, owner=owner)]
    if "definition.type" in captures:
        return [_type_candidate(captures["definition.type"][0], name, source)]
    if "definition.constant" in captures:
        spec = captures["definition.constant"][0]
        node = _lone_spec_declaration(spec)
        return [
            _candidate(node, text, SymbolKind.CONSTANT, source, None, leaf=True, doc_node=spec)
            for text in (node_text(n, source) for n in names)
            if text[:1].isupper() or _ALL_CAPS.match(text)
        ]
    return []


def _candidate(
    node: Node,
    name: str,
    kind: str,
    source: bytes,
    body: Node | None,
    *,
    owner: str | None = None,
    leaf: bool = False,
    doc_node: Node | None = None,
) -> DefinitionCandidate:
    doc_nodes = comments_above(node, _COMMENT_TYPES)
    if not doc_nodes and doc_node is not None and doc_node is not node:
        doc_nodes = comments_above(doc_node, _COMMENT_TYPES)
    return DefinitionCandidate(
        node=node,
        name=name,
        kind=kind,
        signature=signature_of(node, source, body),
        doc=doc_text([node_text(n, source) for n in doc_nodes]),
        leaf=leaf,
        owner=owner,
    )


def _lone_spec_declaration(spec: Node) -> Node:
    """A spec alone in its declaration spans the whole declaration (its keyword and doc)."""
    parent = spec.parent
    if parent is not None and parent.named_child_count == 1 and "(" not in {c.type for c in parent.children}:
        return parent
    return spec


def _type_candidate(spec: Node, name: str, source: bytes) -> DefinitionCandidate:
    underlying = spec.child_by_field_name("type")
    kind = SymbolKind.CLASS
    body: Node | None = None
    if underlying is not None and underlying.type == "struct_type":
        kind = SymbolKind.STRUCT
        body = underlying.named_children[0] if underlying.named_child_count else None
    elif underlying is not None and underlying.type == "interface_type":
        kind = SymbolKind.INTERFACE
        body = next((c for c in underlying.children if c.type == "{"), None)
    node = _lone_spec_declaration(spec)
    return _candidate(node, name, kind, source, body, doc_node=spec)


def _receiver_type(receiver: Node, source: bytes) -> str:
    """``(s *Server)`` → ``Server``; ``(l List[T])`` → ``List``."""
    for node in descendants(receiver):
        if node.type == "type_identifier":
            return node_text(node, source)
    return node_text(receiver, source).strip("()* ") or "?"


def _call_uses(callee: Node, source: bytes, callees: dict[int, tuple[Node | None, Node]]) -> list[Use]:
    node: Node | None = callee
    while node is not None and node.type in ("parenthesized_expression", "index_expression", "generic_type"):
        node = node.named_children[0] if node.type != "generic_type" else node.child_by_field_name("type")
    if node is None:
        return []
    if node.type in ("identifier", "type_identifier"):
        return [call_use(node, source)]
    if node.type == "selector_expression":
        field = node.child_by_field_name("field")
        if field is not None:
            operand = node.child_by_field_name("operand")
            callees[field.start_byte] = (operand, field)
            return [call_use(field, source, operand)]
    if node.type == "qualified_type":
        return [_qualified_use(node, source, "call")]
    return []


def _type_uses(type_node: Node, source: bytes, kind: str) -> list[Use]:
    """Every named type inside a type expression, in document order."""
    if type_node.type in ("struct_type", "interface_type") and kind == "type":
        return []
    return named_type_uses(type_node, source, kind, _TYPE_WALK_STOPS, ("qualified_type", _qualified_use))


def _type_expression_uses(type_node: Node, source: bytes) -> list[Use]:
    return [] if _is_receiver_type(type_node) else _type_uses(type_node, source, "type")


def _embedded_type_uses(type_node: Node, source: bytes) -> list[Use]:
    return _type_uses(type_node, source, "extends")[:1]


def _qualified_use(node: Node, source: bytes, kind: str) -> Use:
    name = node.child_by_field_name("name")
    package = node.child_by_field_name("package")
    anchor = name if name is not None else node
    return (anchor, kind, node_text(name, source), node_text(package, source))


def _imports_of(spec: Node, source: bytes) -> list[Import]:
    path_node = spec.child_by_field_name("path")
    module = node_text(path_node, source).strip('"`')
    alias_node = spec.child_by_field_name("name")
    local = node_text(alias_node, source) if alias_node is not None else _package_name(module)
    return [Import(module=module, names=(("*", local),), line=line_of(spec))]


def _package_name(module: str) -> str:
    segments = [s for s in module.split("/") if s]
    if len(segments) > 1 and _MAJOR_VERSION.match(segments[-1]):
        segments.pop()
    last = segments[-1] if segments else module
    return re.sub(r"\.v[0-9]+$", "", last)


_RULES = ExtractionRules(
    query_name="go",
    routes=(
        import_route("import", _imports_of),
        use_route("reference.call", lambda callee, source: _call_uses(callee, source, {})),
        use_route("reference.type", _type_expression_uses),
        use_route("reference.extends", _embedded_type_uses),
    ),
    define=_candidates,
    builtin_types=GO_BUILTIN_TYPES,
    checked_kinds=frozenset({"type", "extends"}),
)
