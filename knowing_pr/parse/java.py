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

from knowing_pr.model import Import, SymbolKind
from knowing_pr.parse.docs import comments_above, doc_text
from knowing_pr.parse.syntax import (
    DefinitionCandidate,
    ExtractionRules,
    Records,
    Use,
    as_kind,
    call_use,
    extract_with_rules,
    header_candidate,
    import_route,
    kind_candidate,
    kind_use_route,
    named_type_uses,
    use_route,
)
from knowing_pr.parse.treesitter import Captures, first_capture, line_of, node_text, squeezed_text

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
_COMMENT_TYPES = frozenset({"block_comment", "line_comment"})
_DEFINITION_KINDS = (SymbolKind.CLASS, SymbolKind.INTERFACE, SymbolKind.ENUM, SymbolKind.METHOD)
_UPPER_CASE = re.compile(r"^[A-Z][A-Z0-9_]*$")
_INLINE_TAG = re.compile(r"\{@\w+\s*([^}]*)\}")
_HTML_TAG = re.compile(r"</?[a-zA-Z][^>]*>")


def extract(root: Node, source: bytes, language: str) -> Records:
    return extract_with_rules(_RULES, root, source, language)


def _definition(captures: Captures, source: bytes) -> list[DefinitionCandidate]:
    candidate = kind_candidate(captures, source, _DEFINITION_KINDS, _javadoc)
    if candidate is not None:
        return [candidate]
    name = node_text(first_capture(captures, "name"), source)
    field = first_capture(captures, "definition.field")
    if not name or field is None or not _is_constant(field, name, source):
        return []
    return [header_candidate(field, name, SymbolKind.CONSTANT, source, None, _javadoc, leaf=True)]


def _is_constant(field: Node, name: str, source: bytes) -> bool:
    if not _UPPER_CASE.match(name):
        return False
    body = field.parent
    if body is not None and body.type == "interface_body":
        return True
    modifiers = next((c for c in field.children if c.type == "modifiers"), None)
    words = set(node_text(modifiers, source).split())
    return {"static", "final"} <= words


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
        return [call_use(name, source, node.child_by_field_name("object"))] if name is not None else []
    if node.type == "method_reference":
        return _method_reference_uses(node, source)
    return as_kind(_head_type(node, source, "call"), "call")


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
    return [call_use(target, source, parts[0])]


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
    scoped = frozenset({"scoped_type_identifier"})
    return named_type_uses(type_node, source, kind, scoped, ("scoped_type_identifier", _scoped_use))


def _imports_of(node: Node, source: bytes) -> list[Import]:
    """An ``import`` or the ``package`` declaration → its ``Import``."""
    path_node = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
    path = squeezed_text(path_node, source)
    if not path:
        return []
    line = line_of(node)
    if node.type == "package_declaration":
        return [Import(module=path, names=((PACKAGE_BINDING, path),), line=line)]
    if any(child.type == "asterisk" for child in node.children):
        return [Import(module=path, names=(("*", "*"),), line=line)]
    module, _, name = path.rpartition(".")
    return [Import(module=module or name, names=((name, name),), line=line)]


_RULES = ExtractionRules(
    query_name="java",
    routes=(
        import_route("import", _imports_of),
        import_route("package", _imports_of),
        use_route("reference.call", _call_uses),
        kind_use_route("reference.type", _type_uses, "type"),
        kind_use_route("reference.extends", _supertype_uses, "extends"),
        kind_use_route("reference.implements", _supertype_uses, "implements"),
    ),
    define=_definition,
    builtin_types=JAVA_BUILTIN_TYPES,
)
