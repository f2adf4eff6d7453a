"""Java syntax tree → definitions, references and imports (patterns in ``queries/java.scm``).

Definitions: classes and records (``class``), interfaces and ``@interface`` annotation types
(``interface``), enums, methods and constructors (``method``, ``C.m``; overloads share one
qualified name and the first one is kept), nested types (``Outer.Inner``) and ``static
final`` fields with ``UPPER_CASE`` names (any ``UPPER_CASE`` field of an interface) as
``constant``. The doc is the Javadoc ``/** … */`` directly above (annotations may sit in
between: they belong to the declaration), with ``{@code x}``-style tags and HTML unwrapped.

References: method calls ``m()``/``obj.m()`` (qualifier ``obj``), ``new C()`` (a call to
``C``), method references ``C::m`` (``new`` in ``C::new`` is a call to ``C``), ``extends``
(class) and ``implements`` (class, enum, record) lists, an interface's ``extends``, and named
types of parameters, return values and fields (``type``). Type parameters and the
``java.lang``/collection names in ``JAVA_BUILTIN_TYPES`` are never reported as types.

Imports: ``import a.b.C;`` → module ``a.b``, names ``(("C", "C"),)``; ``import a.b.*;`` →
module ``a.b``, names ``(("*", "*"),)``; ``import static a.B.m;`` → module ``a.B``, names
``(("m", "m"),)``. The file's ``package x.y;`` is recorded as
``Import("x.y", (("package", "x.y"),))`` so the resolver can find same-package names.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from knowing_pr.model import Definition, Import, Reference, SymbolKind
from knowing_pr.parse.syntax import (
    DefinitionCandidate,
    build_definitions,
    comments_above,
    compact_text,
    descendants,
    doc_text,
    line_of,
    load_query,
    node_text,
    query_matches,
    scope_references,
    signature_of,
)

__all__ = ["JAVA_BUILTIN_TYPES", "PACKAGE_BINDING", "extract"]

#: ``java.lang`` and collection names that never resolve to a symbol of the repository
#: (primitive types are separate nodes in the grammar and never reported)
JAVA_BUILTIN_TYPES = frozenset(
    {
        "Boolean",
        "Byte",
        "Character",
        "Collection",
        "Double",
        "Float",
        "Integer",
        "Iterable",
        "List",
        "Long",
        "Map",
        "Number",
        "Object",
        "Optional",
        "Set",
        "Short",
        "String",
        "Void",
        "var",
    }
)
#: the imported name of the Import that records the file's package
PACKAGE_BINDING = "package"
_QUALIFIER_MAX_CHARS = 120
_COMMENT_TYPES = frozenset({"block_comment", "line_comment"})
_DEFINITION_KINDS = (SymbolKind.CLASS, SymbolKind.INTERFACE, SymbolKind.ENUM, SymbolKind.METHOD)
_UPPER_CASE = re.compile(r"^[A-Z][A-Z0-9_]*$")
_INLINE_TAG = re.compile(r"\{@\w+\s*([^}]*)\}")
_HTML_TAG = re.compile(r"</?[a-zA-Z][^>]*>")

Use = tuple[Node, str, str, str]


def extract(
    root: Node, source: bytes, language: str
) -> tuple[list[Definition], list[Reference], list[Import]]:
    candidates: list[DefinitionCandidate] = []
    uses: list[Use] = []
    imports: list[Import] = []
    type_parameters: set[str] = set()
    for _, captures in query_matches(load_query("java", language), root):
        if "import" in captures or "package" in captures:
            imports.extend(_import_of(captures, source))
        elif "type_parameter" in captures:
            type_parameters.update(node_text(n, source) for n in captures["type_parameter"])
        elif "reference.call" in captures:
            uses.extend(_call_uses(captures["reference.call"][0], source))
        elif "reference.type" in captures:
            uses.extend(_type_uses(captures["reference.type"][0], source, "type"))
        elif "reference.extends" in captures:
            uses.extend(_supertype_uses(captures["reference.extends"][0], source, "extends"))
        elif "reference.implements" in captures:
            uses.extend(_supertype_uses(captures["reference.implements"][0], source, "implements"))
        else:
            candidates.extend(_definition(captures, source))
    definitions, scopes = build_definitions(candidates)
    kept = [use for use in uses if not _is_noise(use, type_parameters)]
    return definitions, scope_references(scopes, kept), imports


def _is_noise(use: Use, type_parameters: set[str]) -> bool:
    _, kind, name, qualifier = use
    if kind != "type" or qualifier:
        return False
    return name in JAVA_BUILTIN_TYPES or name in type_parameters


def _definition(captures: dict[str, list[Node]], source: bytes) -> list[DefinitionCandidate]:
    names = captures.get("name", [])
    if not names:
        return []
    name = node_text(names[0], source)
    body = captures["body"][0] if "body" in captures else None
    for kind in _DEFINITION_KINDS:
        nodes = captures.get(f"definition.{kind}")
        if nodes:
            return [_candidate(nodes[0], name, kind, source, body)]
    fields = captures.get("definition.field")
    if fields and _is_constant(fields[0], name, source):
        return [_candidate(fields[0], name, SymbolKind.CONSTANT, source, None, leaf=True)]
    return []


def _is_constant(field: Node, name: str, source: bytes) -> bool:
    if not _UPPER_CASE.match(name):
        return False
    body = field.parent
    if body is not None and body.type == "interface_body":
        return True
    modifiers = next((c for c in field.children if c.type == "modifiers"), None)
    words = set(node_text(modifiers, source).split())
    return {"static", "final"} <= words


def _candidate(
    node: Node, name: str, kind: str, source: bytes, body: Node | None, *, leaf: bool = False
) -> DefinitionCandidate:
    return DefinitionCandidate(
        node=node,
        name=name,
        kind=kind,
        signature=signature_of(node, source, body).rstrip(";").strip(),
        doc=_javadoc(node, source),
        leaf=leaf,
    )


def _javadoc(node: Node, source: bytes) -> str:
    texts = [node_text(n, source) for n in comments_above(node, _COMMENT_TYPES)]
    javadocs = [text for text in texts if text.startswith("/**")]
    if not javadocs:
        return ""
    text = _INLINE_TAG.sub(r"\1", javadocs[-1])
    return doc_text([_HTML_TAG.sub("", text)])


def _call_uses(node: Node, source: bytes) -> list[Use]:
    if node.type == "method_invocation":
        name = node.child_by_field_name("name")
        receiver = node.child_by_field_name("object")
        qualifier = compact_text(receiver, source, _QUALIFIER_MAX_CHARS) if receiver is not None else ""
        return [(name, "call", node_text(name, source), qualifier)] if name is not None else []
    if node.type == "method_reference":
        return _method_reference_uses(node, source)
    return [
        (anchor, "call", name, qualifier) for anchor, _, name, qualifier in _head_type(node, source, "call")
    ]


def _method_reference_uses(node: Node, source: bytes) -> list[Use]:
    """``C::m`` → ``m`` qualified ``C``; ``C::new`` → a call to ``C``."""
    parts = node.named_children
    if not parts:
        return []
    target = node.children[-1]
    if target.type == "new":
        return _head_type(parts[0], source, "call")
    if target.type != "identifier" or len(parts) < 2:
        return []
    return [(target, "call", node_text(target, source), compact_text(parts[0], source, _QUALIFIER_MAX_CHARS))]


def _supertype_uses(node: Node, source: bytes, kind: str) -> list[Use]:
    """A superclass or a type list → the head type of each entry (``Base<T>`` → ``Base``)."""
    entries = node.named_children if node.type == "type_list" else [node]
    uses: list[Use] = []
    for entry in entries:
        uses.extend(_head_type(entry, source, kind))
    return uses


def _head_type(node: Node, source: bytes, kind: str) -> list[Use]:
    current: Node | None = node
    while current is not None and current.type == "generic_type":
        current = current.named_children[0] if current.named_child_count else None
    if current is None:
        return []
    if current.type in ("type_identifier", "identifier"):
        return [(current, kind, node_text(current, source), "")]
    if current.type == "scoped_type_identifier":
        return [_scoped_use(current, source, kind)]
    return []


def _scoped_use(node: Node, source: bytes, kind: str) -> Use:
    """``java.util.Map.Entry`` → ``Entry`` qualified ``java.util.Map``."""
    name = node.named_children[-1] if node.named_child_count else node
    qualifier = re.sub(r"\s+", "", source[node.start_byte : name.start_byte].decode("utf-8", "replace"))
    return (name, kind, node_text(name, source), qualifier.rstrip("."))


def _type_uses(type_node: Node, source: bytes, kind: str) -> list[Use]:
    """Every named type inside a type expression (``Map<K, List<Item>>`` → ``Map``, ``K``, ``Item``)."""
    uses: list[Use] = []
    for node in descendants(type_node, frozenset({"scoped_type_identifier"})):
        if node.type == "type_identifier":
            uses.append((node, kind, node_text(node, source), ""))
        elif node.type == "scoped_type_identifier":
            uses.append(_scoped_use(node, source, kind))
    return uses


def _import_of(captures: dict[str, list[Node]], source: bytes) -> list[Import]:
    node = captures["import"][0] if "import" in captures else captures["package"][0]
    path_node = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
    path = re.sub(r"\s+", "", node_text(path_node, source))
    if not path:
        return []
    line = line_of(node)
    if node.type == "package_declaration":
        return [Import(module=path, names=((PACKAGE_BINDING, path),), line=line)]
    if any(child.type == "asterisk" for child in node.children):
        return [Import(module=path, names=(("*", "*"),), line=line)]
    module, _, name = path.rpartition(".")
    return [Import(module=module or name, names=((name, name),), line=line)]
