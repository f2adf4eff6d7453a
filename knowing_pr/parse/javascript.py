"""JavaScript / TypeScript / TSX syntax tree → definitions, references and imports.

Patterns live in ``queries/javascript.scm`` and ``queries/typescript.scm`` (JSX component uses
in ``queries/tsx.scm``). Definitions: functions (declarations and top-level ``const f = () =>``),
classes and their methods, TS interfaces, type aliases (recorded as interfaces), enums and
top-level ``const UPPER_CASE`` constants; an exported declaration's range, signature and
JSDoc include its ``export`` statement. References: calls and ``new``, JSX components,
``extends``/``implements`` and TS type names. Imports: ES ``import`` and ``require`` (also ``require("m").name``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tree_sitter import Node

from knowing_pr.model import Import, SymbolKind
from knowing_pr.parse.docs import DOC_MAX_CHARS, SIGNATURE_MAX_CHARS, comment_run_before, signature_of
from knowing_pr.parse.js_scopes import JsScopes
from knowing_pr.parse.syntax import QUALIFIER_MAX_CHARS, Records, Use, assemble_nested
from knowing_pr.parse.treesitter import (
    Captures,
    capped,
    compact_text,
    first_capture,
    line_of,
    load_joined_query,
    node_text,
    query_matches_bounded,
)

__all__ = ["extract"]

_QUERY_FILES = {
    "javascript": ("javascript", "tsx"),
    "typescript": ("typescript",),
    "tsx": ("typescript", "tsx"),
}
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_CONSTANT_NAME = re.compile(r"_*[A-Z][A-Z0-9_]*")
#: type names that never resolve to a symbol of the repository
_BUILTIN_TYPES = frozenset(
    {"string", "number", "boolean", "any", "void", "unknown", "never", "object", "undefined", "null"}
)

Candidate = tuple[Node, str, str, str, str]
#: (kind, definition node, name node, enclosing declaration of a declarator or None)
Found = tuple[str, Node, Node, Node | None]


@dataclass
class _Context:
    """What the captures say about surroundings (tree-sitter parent lookups cost O(depth))."""

    exports: dict[int, Node] = field(default_factory=dict)  # declaration start → export
    comments: dict[int, Node] = field(default_factory=dict)  # comment end → comment
    type_parameters: set[str] = field(default_factory=set)


def extract(root: Node, source: bytes, language: str) -> Records:
    found: list[Found] = []
    uses: list[Use] = []
    callees: list[tuple[Node | None, Node]] = []  # each use's (receiver, name) nodes
    type_uses: list[tuple[Node, Node | None]] = []
    imports: list[Import] = []
    context = _Context()
    for _, captures in query_matches_bounded(load_joined_query(_QUERY_FILES[language], language), root):
        name_node = first_capture(captures, "name")
        if "export" in captures:
            context.exports[captures["exported"][0].start_byte] = captures["export"][0]
        elif "reexport" in captures:
            imports.extend(_reexports_of(captures["reexport"][0], source))
        elif "comment" in captures:
            context.comments[captures["comment"][0].end_byte] = captures["comment"][0]
        elif "type_parameter" in captures:
            context.type_parameters.add(node_text(captures["type_parameter"][0], source))
        elif "import" in captures:
            imports.extend(_imports_of(captures["import"][0], source))
        elif "reference.type" in captures and name_node is not None:
            type_uses.append((name_node, first_capture(captures, "receiver")))
        elif name_node is not None:
            definition = _definition_capture(captures)
            if definition is not None:
                found.append((*definition, name_node, first_capture(captures, "declaration")))
            else:
                new = _reference_uses(captures, name_node, source)
                uses.extend(new)
                callees.extend((first_capture(captures, "receiver"), name_node) for _ in new)
    candidates = [c for c in (_candidate(f, context, source) for f in found) if c is not None]
    skipped = {name_node.start_byte for _, _, name_node, _ in found}
    skipped.update(node.start_byte for node, kind, _, _ in uses if kind in ("extends", "implements"))
    for use, receiver in _type_name_uses(type_uses, skipped, context.type_parameters, source):
        uses.append(use)
        callees.append((receiver, use[0]))
    scopes = JsScopes(root, source, language)
    hints: dict[tuple[int, str, str, str], str] = {}
    kept: list[Use] = []
    for use, (receiver, name_node) in zip(uses, callees, strict=True):
        if use[1] == "call" and use[2] == "require" and not use[3]:
            continue
        kept.append(use)
        anchor, kind, name, qualifier = use
        if receiver is not None:
            hints[(anchor.start_byte, kind, name, qualifier)] = scopes.hint_of(receiver, "." + name)
        else:
            hints[(anchor.start_byte, kind, name, qualifier)] = scopes.hint_of(name_node)
    definitions, references, imports, _ = assemble_nested(candidates, kept, imports, hints)
    return definitions, references, imports, scopes.facts()


def _definition_capture(captures: Captures) -> tuple[str, Node] | None:
    for capture, nodes in captures.items():
        if capture.startswith("definition.") and nodes:
            return capture.removeprefix("definition."), nodes[0]
    return None


def _candidate(found: Found, context: _Context, source: bytes) -> Candidate | None:
    kind, node, name_node, declaration = found
    name = node_text(name_node, source)
    if declaration is not None:
        return _declarator_candidate(node, declaration, name, context, source)
    outer = context.exports.get(node.start_byte, node)
    body = _body_of(node)
    return outer, name, kind, _signature(outer, source, body), _jsdoc_before(outer, context, source)


def _declarator_candidate(
    declarator: Node, declaration: Node, name: str, context: _Context, source: bytes
) -> Candidate | None:
    """``const f = () => …`` is a function, ``const MAX = …`` a constant, anything else nothing."""
    value = declarator.child_by_field_name("value")
    if value is not None and value.type in _FUNCTION_VALUES:
        kind = SymbolKind.FUNCTION
        body = value.child_by_field_name("body")
    elif _is_const(declaration, source) and _CONSTANT_NAME.fullmatch(name):
        kind = SymbolKind.CONSTANT
        body = None
    else:
        return None
    statement = context.exports.get(declaration.start_byte, declaration)
    outer = statement if len(declaration.named_children) == 1 else declarator
    signature = _signature(outer, source, body) if body is not None else _first_line(outer, source)
    return outer, name, kind, signature, _jsdoc_before(statement, context, source)


def _is_const(declaration: Node, source: bytes) -> bool:
    keyword = declaration.child_by_field_name("kind")
    if keyword is None and declaration.child_count:
        keyword = declaration.children[0]
    return node_text(keyword, source) == "const"


def _body_of(node: Node) -> Node | None:
    if node.type == "type_alias_declaration":
        return node.child_by_field_name("value")
    return node.child_by_field_name("body")


def _signature(outer: Node, source: bytes, body: Node | None) -> str:
    return signature_of(outer, source, body).removesuffix("=>").removesuffix("=").rstrip()


def _first_line(node: Node, source: bytes) -> str:
    text = node_text(node, source)
    return capped(text.split("\n", 1)[0].rstrip(";"), SIGNATURE_MAX_CHARS)


def _jsdoc_before(node: Node, context: _Context, source: bytes) -> str:
    """The ``/** … */`` comment directly above ``node``, markers stripped."""
    comments = comment_run_before(node.start_byte, context.comments, source)
    text = node_text(comments[-1], source) if comments else ""
    if not text.startswith("/**"):
        return ""
    lines = [re.sub(r"^\*\s?", "", line.strip()) for line in text[3:].removesuffix("*/").splitlines()]
    return capped(" ".join(line for line in lines if line), DOC_MAX_CHARS)


def _reference_uses(captures: Captures, name_node: Node, source: bytes) -> list[Use]:
    qualifier = compact_text(first_capture(captures, "receiver"), source, QUALIFIER_MAX_CHARS)
    name = node_text(name_node, source)
    uses: list[Use] = []
    for kind in ("call", "extends", "implements"):
        if first_capture(captures, f"reference.{kind}") is not None:
            # the name's line, not the call's first: ``g(x)\n  .then(h)`` calls ``then`` on line 2
            uses.append((name_node, kind, name, qualifier))
    return uses


def _type_name_uses(
    names: list[tuple[Node, Node | None]], skipped: set[int], type_parameters: set[str], source: bytes
) -> list[tuple[Use, Node | None]]:
    """Type identifiers used as types: not declared names, type parameters or heritage names.

    ``ns.Foo`` is matched twice (as ``Foo`` alone and with its receiver); the qualified one wins.
    """
    qualified = {node.start_byte for node, receiver in names if receiver is not None}
    uses: list[tuple[Use, Node | None]] = []
    for node, receiver in names:
        name = node_text(node, source)
        if node.start_byte in skipped or name in _BUILTIN_TYPES or name in type_parameters:
            continue
        if receiver is None and node.start_byte in qualified:
            continue
        uses.append(((node, "type", name, compact_text(receiver, source, QUALIFIER_MAX_CHARS)), receiver))
    return uses


def _string_value(node: Node | None, source: bytes) -> str:
    if node is None or node.type != "string":
        return ""
    return node_text(node, source)[1:-1]


def _imports_of(node: Node, source: bytes) -> list[Import]:
    if node.type == "variable_declarator":
        return _require_of(node, source)
    module = _string_value(node.child_by_field_name("source"), source)
    names: list[tuple[str, str]] = []
    for child in node.named_children:
        if child.type == "import_clause":
            names.extend(_clause_names(child, source))
        elif child.type == "import_require_clause":
            module = _string_value(child.child_by_field_name("source"), source)
            alias = next((c for c in child.named_children if c.type == "identifier"), None)
            names.append(("*", node_text(alias, source)))
    if not module:
        return []
    return [Import(module=module, names=tuple(pair for pair in names if pair[1]), line=line_of(node))]


def _reexports_of(node: Node, source: bytes) -> list[Import]:
    """``export { a as b } from "m"``, ``export * from "m"``, ``export * as ns from "m"``: the
    names this module binds (and exports) from another one."""
    module = _string_value(node.child_by_field_name("source"), source)
    if not module:
        return []
    names: list[tuple[str, str]] = []
    for child in node.named_children:
        if child.type == "export_clause":
            for specifier in child.named_children:
                if specifier.type == "export_specifier":
                    imported = node_text(specifier.child_by_field_name("name"), source)
                    alias = specifier.child_by_field_name("alias")
                    names.append((imported, node_text(alias, source) if alias is not None else imported))
        elif child.type == "namespace_export":
            alias = next((c for c in child.named_children if c.type in ("identifier", "string")), None)
            names.append(("*", node_text(alias, source).strip("\"'")))
    if not names:
        names.append(("*", "*"))
    return [Import(module=module, names=tuple(pair for pair in names if pair[1]), line=line_of(node))]


def _clause_names(clause: Node, source: bytes) -> list[tuple[str, str]]:
    names: list[tuple[str, str]] = []
    for part in clause.named_children:
        if part.type == "identifier":
            names.append(("default", node_text(part, source)))
        elif part.type == "namespace_import":
            alias = next((c for c in part.named_children if c.type == "identifier"), None)
            names.append(("*", node_text(alias, source)))
        elif part.type == "named_imports":
            for specifier in part.named_children:
                if specifier.type == "import_specifier":
                    imported = node_text(specifier.child_by_field_name("name"), source)
                    alias = specifier.child_by_field_name("alias")
                    names.append((imported, node_text(alias, source) if alias is not None else imported))
    return names


def _require_of(declarator: Node, source: bytes) -> list[Import]:
    """``const x = require("m")`` binds the module; ``const {a, b: c} = require("m")`` its names;
    ``const x = require("m").a`` the name ``a``."""
    call = declarator.child_by_field_name("value")
    member = ""
    if call is not None and call.type == "member_expression":
        member = node_text(call.child_by_field_name("property"), source)
        call = call.child_by_field_name("object")
    arguments = call.child_by_field_name("arguments") if call is not None else None
    module = (
        _string_value(arguments.named_children[0], source) if arguments and arguments.named_children else ""
    )
    target = declarator.child_by_field_name("name")
    if not module or target is None:
        return []
    names: list[tuple[str, str]] = []
    if member:
        if target.type == "identifier":
            names.append((member, node_text(target, source)))
    elif target.type == "identifier":
        names.append(("*", node_text(target, source)))
    elif target.type == "object_pattern":
        for part in target.named_children:
            if part.type == "shorthand_property_identifier_pattern":
                names.append((node_text(part, source), node_text(part, source)))
            elif part.type == "pair_pattern":
                key = node_text(part.child_by_field_name("key"), source)
                value = part.child_by_field_name("value")
                if value is not None and value.type == "identifier":
                    names.append((key, node_text(value, source)))
    return [Import(module=module, names=tuple(names), line=line_of(declarator))]
