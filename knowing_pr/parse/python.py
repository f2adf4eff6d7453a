"""Python syntax tree → definitions, references and imports (patterns in ``queries/python.scm``).

Definitions: classes, functions (methods when directly in a class body), module-level
``UPPER_CASE`` constants; the byte range of a decorated definition includes its decorators.
References: calls (decorators count as calls), base classes (``extends``) and names used in
annotations (``type``). Imports: ``import a.b [as c]`` and ``from .x import y [as z]``.
"""

from __future__ import annotations

import inspect

from tree_sitter import Node

from knowing_pr.model import Import, SymbolKind
from knowing_pr.parse.docs import DOC_MAX_CHARS, signature_of
from knowing_pr.parse.syntax import QUALIFIER_MAX_CHARS, Records, Use, assemble_nested
from knowing_pr.parse.treesitter import (
    Captures,
    capped,
    compact_text,
    descendants,
    first_capture,
    line_of,
    load_query,
    node_text,
    query_matches_bounded,
)

__all__ = ["extract"]

#: annotation names that never resolve to a symbol of the repository
_BUILTIN_TYPES = frozenset(
    {"int", "str", "bool", "float", "bytes", "object", "None", "complex", "list", "dict", "tuple", "set"}
)
_STRING_PREFIX_CHARS = "rRbBuUfF"


def extract(root: Node, source: bytes, language: str) -> Records:
    candidates: list[tuple[Node, str, str, str, str]] = []
    uses: list[Use] = []
    imports: list[Import] = []
    decorations: dict[int, Node] = {}
    for _, captures in query_matches_bounded(load_query("python", language), root):
        name_node = first_capture(captures, "name")
        if "decoration" in captures:
            decorations[captures["decorated"][0].start_byte] = captures["decoration"][0]
        elif "import" in captures:
            imports.extend(_imports_of(captures["import"][0], source))
        elif "reference.type" in captures:
            uses.extend(_type_uses(captures["reference.type"][0], source))
        elif name_node is not None:
            candidate = _candidate(captures, name_node, source)
            if candidate is not None:
                candidates.append(candidate)
            else:
                uses.extend(_reference_uses(captures, name_node, source))
    candidates = [
        (decorations.get(node.start_byte, node), name, kind, signature, doc)
        for node, name, kind, signature, doc in candidates
    ]
    return assemble_nested(candidates, uses, imports)


def _candidate(captures: Captures, name_node: Node, source: bytes) -> tuple[Node, str, str, str, str] | None:
    name = node_text(name_node, source)
    for kind in (SymbolKind.CLASS, SymbolKind.FUNCTION):
        node = first_capture(captures, f"definition.{kind}")
        if node is not None:
            body = node.child_by_field_name("body")
            return node, name, kind, signature_of(node, source, body), _docstring(body, source)
    node = first_capture(captures, "definition.constant")
    if node is not None:
        return node, name, SymbolKind.CONSTANT, signature_of(node, source, None), ""
    return None


def _reference_uses(captures: Captures, name_node: Node, source: bytes) -> list[Use]:
    qualifier = compact_text(first_capture(captures, "receiver"), source, QUALIFIER_MAX_CHARS)
    name = node_text(name_node, source)
    uses: list[Use] = []
    for kind in ("call", "extends"):
        node = first_capture(captures, f"reference.{kind}")
        if node is not None:
            uses.append((node, kind, name, qualifier))
    return uses


def _type_uses(type_node: Node, source: bytes) -> list[Use]:
    """Names in an annotation: ``Foo``, ``mod.Foo``, the parts of ``dict[str, Foo]``."""
    uses: list[Use] = []
    for node in descendants(type_node, stop_types=frozenset({"attribute", "string"})):
        if node.type == "identifier":
            name = node_text(node, source)
            if name not in _BUILTIN_TYPES:
                uses.append((node, "type", name, ""))
        elif node.type == "attribute":
            attribute = node.child_by_field_name("attribute")
            receiver = node.child_by_field_name("object")
            if attribute is not None and attribute.type == "identifier":
                qualifier = compact_text(receiver, source, QUALIFIER_MAX_CHARS)
                uses.append((node, "type", node_text(attribute, source), qualifier))
    return uses


def _docstring(body: Node | None, source: bytes) -> str:
    if body is None:
        return ""
    first = body.named_children[0] if body.named_children else None
    if first is not None and first.type == "expression_statement" and first.named_children:
        first = first.named_children[0]
    if first is None or first.type != "string":
        return ""
    text = node_text(first, source).lstrip(_STRING_PREFIX_CHARS)
    for quote in ('"""', "'''", '"', "'"):
        if text.startswith(quote):
            text = text[len(quote) :].removesuffix(quote)
            break
    return capped(" ".join(inspect.cleandoc(text).split()), DOC_MAX_CHARS)


def _module_spec(node: Node | None, source: bytes) -> str:
    return "".join(node_text(node, source).split())


def _imports_of(statement: Node, source: bytes) -> list[Import]:
    line = line_of(statement)
    if statement.type == "import_statement":
        return [
            Import(module=imported, names=(("*", alias),), line=line)
            for imported, alias in _imported_names(statement, source)
        ]
    module = _module_spec(statement.child_by_field_name("module_name"), source)
    if not module:
        return []
    if any(child.type == "wildcard_import" for child in statement.children):
        return [Import(module=module, names=(("*", "*"),), line=line)]
    return [Import(module=module, names=tuple(_imported_names(statement, source)), line=line)]


def _imported_names(statement: Node, source: bytes) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for node in statement.children_by_field_name("name"):
        if node.type == "aliased_import":
            imported = _module_spec(node.child_by_field_name("name"), source)
            alias = _module_spec(node.child_by_field_name("alias"), source)
            pairs.append((imported, alias or imported))
        elif node.type == "dotted_name":
            imported = _module_spec(node, source)
            pairs.append((imported, imported))
    return [(imported, alias) for imported, alias in pairs if imported]
