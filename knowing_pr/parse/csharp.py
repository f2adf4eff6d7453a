"""C# syntax tree → definitions, references and imports (patterns in ``queries/csharp.scm``).

Definitions: classes and records (``class``; ``record struct`` is a ``struct``), structs,
interfaces, enums, methods and constructors (``method``, ``C.M``; overloads share one
qualified name and the first one is kept), ``const`` fields (``constant``) and local functions
(``function``: top-level programs define theirs so). Properties, events, operators and
destructors are not reported. Qualified names follow
type nesting only (``Outer.Inner.M``): namespaces are not part of them. The doc is the ``///``
XML doc comment directly above, tags stripped (``<see cref="X"/>`` keeps ``X``).

References: invocations ``M()``, ``obj.M()`` (qualifier ``obj``), ``a?.M()``, ``M<T>()``;
``new C()`` (a call to ``C``); base lists; named types of parameters, return values, fields and
properties (``type``). A base list has no syntax telling a base class from an interface, so
the usual naming rule decides: a name matching ``^I[A-Z]`` is ``implements``, any other
``extends``; every base of an interface is ``extends`` (as Java's interface ``extends``).
Type parameters and the names in ``CSHARP_BUILTIN_TYPES`` are never reported as types.

Imports: ``using A.B;`` (also ``global using`` and ``using static A.B;``) → module ``A.B``,
names ``(("*", "*"),)``; ``using X = A.B.C;`` → module ``A.B``, names ``(("C", "X"),)``.
Each namespace (block or file-scoped; nested ones joined with ``.``) is recorded as
``Import("N", (("namespace", "N"),))`` so the resolver can find same-namespace names.
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
    use_route,
)
from knowing_pr.parse.treesitter import Captures, first_capture, line_of, node_text, squeezed_text

__all__ = ["CSHARP_BUILTIN_TYPES", "NAMESPACE_BINDING", "extract"]

#: BCL names that never resolve to a symbol of the repository (``int``, ``string``, … are
#: predefined-type nodes in the grammar and never reported)
CSHARP_BUILTIN_TYPES = frozenset(
    {
        "Action",
        "Dictionary",
        "Func",
        "HashSet",
        "ICollection",
        "IDictionary",
        "IEnumerable",
        "IList",
        "List",
        "Nullable",
        "Object",
        "Span",
        "String",
        "Task",
        "dynamic",
        "object",
        "var",
    }
)
#: the imported name of the Import that records a namespace declaration
NAMESPACE_BINDING = "namespace"
_COMMENT_TYPES = frozenset({"comment"})
_NAMESPACE_TYPES = frozenset({"namespace_declaration", "file_scoped_namespace_declaration"})
_DEFINITION_KINDS = (
    SymbolKind.CLASS,
    SymbolKind.STRUCT,
    SymbolKind.INTERFACE,
    SymbolKind.ENUM,
    SymbolKind.METHOD,
    SymbolKind.FUNCTION,
)
_TYPE_WALK_STOPS = frozenset({"array_rank_specifier", "attribute_list", "alias_qualified_name"})
_INTERFACE_NAME = re.compile(r"^I[A-Z]")
_CREF_TAG = re.compile(r"<\w+\s+(?:cref|name|langword)=\"([^\"]*)\"\s*/>")
_XML_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_GENERIC_ARGUMENTS = re.compile(r"<[^<>]*>")


def extract(root: Node, source: bytes, language: str) -> Records:
    return extract_with_rules(_RULES, root, source, language)


def _definition(captures: Captures, source: bytes) -> list[DefinitionCandidate]:
    candidate = kind_candidate(captures, source, _DEFINITION_KINDS, _xml_doc)
    if candidate is not None:
        return [candidate]
    name = node_text(first_capture(captures, "name"), source)
    if not name:
        return []
    record = first_capture(captures, "definition.record")
    if record is not None:
        is_struct = any(child.type == "struct" for child in record.children)
        kind = SymbolKind.STRUCT if is_struct else SymbolKind.CLASS
        return [header_candidate(record, name, kind, source, first_capture(captures, "body"), _xml_doc)]
    field = first_capture(captures, "definition.field")
    if field is not None and any(
        node_text(c, source) == "const" for c in field.children if c.type == "modifier"
    ):
        return [header_candidate(field, name, SymbolKind.CONSTANT, source, None, _xml_doc, leaf=True)]
    return []


def _is_const(field: Node, source: bytes) -> bool:
    return any(node_text(c, source) == "const" for c in field.children if c.type == "modifier")


def _xml_doc(node: Node, source: bytes) -> str:
    texts = [node_text(n, source) for n in comments_above(node, _COMMENT_TYPES)]
    lines = [text for text in texts if text.startswith("///")]
    return doc_text([_XML_TAG.sub("", _CREF_TAG.sub(r"\1", line)) for line in lines])


def _call_uses(callee: Node, source: bytes) -> list[Use]:
    if callee.parent is not None and callee.parent.type == "object_creation_expression":
        return as_kind(_head_types(callee, source), "call")
    if callee.type in ("identifier", "generic_name"):
        head = _identifier_of(callee)
        return [call_use(head, source)] if head is not None else []
    if callee.type == "member_access_expression":
        head = _identifier_of(callee.child_by_field_name("name"))
        receiver = callee.child_by_field_name("expression")
    elif callee.type == "conditional_access_expression":
        binding = next((c for c in callee.named_children if c.type == "member_binding_expression"), None)
        head = _identifier_of(binding.child_by_field_name("name")) if binding is not None else None
        receiver = callee.child_by_field_name("condition")
    else:
        return []
    if head is None:
        return []
    return [call_use(head, source, receiver)]


def _identifier_of(node: Node | None) -> Node | None:
    """``Foo`` → itself; ``Foo<T>`` → ``Foo``."""
    if node is None or node.type == "identifier":
        return node
    if node.type == "generic_name":
        return next((c for c in node.named_children if c.type == "identifier"), None)
    return None


def _base_uses(base_list: Node, source: bytes) -> list[Use]:
    owner = base_list.parent
    in_interface = owner is not None and owner.type == "interface_declaration"
    uses: list[Use] = []
    for entry in base_list.named_children:
        for anchor, _, name, qualifier in _head_types(entry, source):
            extends = in_interface or not _INTERFACE_NAME.match(name)
            uses.append((anchor, "extends" if extends else "implements", name, qualifier))
    return uses


def _head_types(node: Node, source: bytes) -> list[Use]:
    """The named type a type expression stands for (``A.B<T>`` → ``B`` qualified ``A``)."""
    current: Node | None = node
    while current is not None and current.type in ("nullable_type", "primary_constructor_base_type"):
        current = current.named_children[0] if current.named_child_count else None
    if current is None:
        return []
    if current.type == "qualified_name":
        return [_qualified_use(current, source, "type")]
    head = _identifier_of(current)
    return [(head, "type", node_text(head, source), "")] if head is not None else []


def _qualified_use(node: Node, source: bytes, kind: str) -> Use:
    name = node.child_by_field_name("name")
    head = _identifier_of(name) or name or node
    qualifier = squeezed_text(node.child_by_field_name("qualifier"), source)
    return (head, kind, node_text(head, source), qualifier)


def _type_uses(type_node: Node, source: bytes) -> list[Use]:
    """Every named type inside a type expression (``Dictionary<Key, Foo?>[]`` → ``Key``, ``Foo``…)."""
    uses: list[Use] = []
    stack = [type_node]
    while stack:
        node = stack.pop()
        if node.type == "identifier":
            uses.append((node, "type", node_text(node, source), ""))
        elif node.type == "qualified_name":
            uses.append(_qualified_use(node, source, "type"))
            name = node.child_by_field_name("name")
            if name is not None and name.type == "generic_name":
                stack.extend(c for c in name.named_children if c.type == "type_argument_list")
        elif node.type == "tuple_element":
            element_type = node.child_by_field_name("type")
            if element_type is not None:
                stack.append(element_type)
        elif node.type not in _TYPE_WALK_STOPS:
            stack.extend(reversed(node.named_children))
    return uses


def _namespaces_of(node: Node, source: bytes) -> list[Import]:
    parts = [_namespace_name(node, source)]
    ancestor = node.parent
    while ancestor is not None:
        if ancestor.type in _NAMESPACE_TYPES:
            parts.insert(0, _namespace_name(ancestor, source))
        ancestor = ancestor.parent
    name = ".".join(part for part in parts if part)
    return [Import(module=name, names=((NAMESPACE_BINDING, name),), line=line_of(node))]


def _namespace_name(node: Node, source: bytes) -> str:
    return squeezed_text(node.child_by_field_name("name"), source)


def _using_of(node: Node, source: bytes) -> list[Import]:
    alias = node.child_by_field_name("name")
    target = next(
        (
            c
            for c in node.named_children
            if c != alias and c.type in ("identifier", "qualified_name", "generic_name")
        ),
        None,
    )
    path = squeezed_text(target, source)
    while _GENERIC_ARGUMENTS.search(path):
        path = _GENERIC_ARGUMENTS.sub("", path)
    if not path:
        return []
    if alias is None:
        return [Import(module=path, names=(("*", "*"),), line=line_of(node))]
    module, _, name = path.rpartition(".")
    return [Import(module=module or name, names=((name, node_text(alias, source)),), line=line_of(node))]


_RULES = ExtractionRules(
    query_name="csharp",
    routes=(
        import_route("import", _using_of),
        import_route("namespace", _namespaces_of),
        use_route("reference.call", _call_uses),
        use_route("reference.bases", _base_uses),
        use_route("reference.type", _type_uses),
    ),
    define=_definition,
    builtin_types=CSHARP_BUILTIN_TYPES,
)
