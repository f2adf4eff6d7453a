"""Rust syntax tree → definitions, references and imports (patterns in ``queries/rust.scm``).

Definitions: ``fn`` (``function``; ``method`` inside an ``impl`` or a ``trait``), ``struct``
and ``union`` (``struct``), ``enum``, ``trait``, ``const``/``static`` (``constant``) and
``mod m { … }`` (``module``). An ``impl T`` or ``impl Trait for T`` block is not reported
itself but names the scope of its items: ``T.f`` with parent ``T`` (``T`` is the last path
segment without type arguments, and may be declared in another file). Inside ``mod m``,
names are ``m.f``, ``m.T.f``. Doc comments: ``///``, ``//!``, ``/** */`` directly above the
item, ``#[…]`` attributes in between allowed.

References: calls (``f()``; ``a::b::f()`` qualifier ``a::b``; ``x.m()`` qualifier ``x``;
``Type::new()`` is a call to ``new`` qualified ``Type`` and a call to ``Type``; ``name(…)``
inside a macro's arguments), ``impl Trait for T`` (``implements`` scoped ``T``), supertraits
(``extends`` scoped to the trait), struct literals ``S { … }`` and named types in parameters,
return types, fields, consts and type aliases (``type``). Type parameters and the std names
in ``RUST_BUILTIN_TYPES`` are never reported as types.

Imports: ``use a::b::C`` → module ``a::b``, names ``(("C", "C"),)``; one ``Import`` per
module a ``use`` tree names (``use a::{b::C, D as E}`` gives ``a::b`` and ``a``); a glob
binds ``("*", "*")``; ``use a::b`` binds ``("b", "b")`` from ``a``; a single segment
``use a`` binds ``("*", "a")`` from ``a``. ``mod x;`` and ``extern crate x;`` are
``Import("x", (("*", "x"),))``.
"""

from __future__ import annotations

import re
from dataclasses import replace

from tree_sitter import Node

from knowing_pr.model import Import, SymbolKind
from knowing_pr.parse.docs import comments_above, doc_text
from knowing_pr.parse.syntax import (
    QUALIFIER_MAX_CHARS,
    DefinitionCandidate,
    ExtractionRules,
    MatchRecords,
    Records,
    Use,
    call_use,
    extract_with_rules,
    import_route,
    kind_candidate,
    kind_use_route,
    named_type_uses,
    use_route,
)
from knowing_pr.parse.treesitter import Captures, compact_text, descendants, line_of, node_text, squeezed_text

__all__ = ["RUST_BUILTIN_TYPES", "extract"]

#: std/prelude type names that never resolve to a symbol of the repository (primitives are
#: separate nodes in the grammar and never reported)
RUST_BUILTIN_TYPES = frozenset(
    {
        "Self",
        "String",
        "str",
        "Vec",
        "Option",
        "Result",
        "Box",
        "Rc",
        "Arc",
        "Cow",
        "Cell",
        "RefCell",
        "Mutex",
        "RwLock",
        "HashMap",
        "HashSet",
        "BTreeMap",
        "BTreeSet",
        "VecDeque",
    }
)
_COMMENT_TYPES = frozenset({"line_comment", "block_comment"})
_ATTRIBUTE_TYPES = frozenset({"attribute_item"})
_DOC_PREFIX = re.compile(r"^(///(?!/)|//!|/\*\*(?!\*)|/\*!)")
_DEFINITION_KINDS = (
    SymbolKind.FUNCTION,
    SymbolKind.STRUCT,
    SymbolKind.ENUM,
    SymbolKind.TRAIT,
    SymbolKind.MODULE,
    SymbolKind.CONSTANT,
)
_UNWRAP_TYPES = frozenset({"generic_type", "reference_type", "pointer_type"})
_IMPL_SCOPE_KIND = "impl"

UseLeaf = tuple[list[str], str | None, bool]


def extract(root: Node, source: bytes, language: str) -> Records:
    return extract_with_rules(_RULES, root, source, language)


def _definition(captures: Captures, source: bytes) -> list[DefinitionCandidate]:
    candidate = kind_candidate(captures, source, _DEFINITION_KINDS, _doc_of)
    if candidate is None:
        return []
    if candidate.kind == SymbolKind.FUNCTION and _in_impl_or_trait(candidate.node):
        candidate = replace(candidate, kind=SymbolKind.METHOD)
    return [candidate]


def _add_impl(captures: Captures, source: bytes, found: MatchRecords) -> None:
    """``impl [Trait for] T``: a scope named ``T`` for its items, and the trait it implements."""
    found.candidates.append(_impl_scope(captures, source))
    found.uses.extend(_implemented_trait(captures, source))


def _in_impl_or_trait(node: Node) -> bool:
    body = node.parent
    owner = body.parent if body is not None else None
    return owner is not None and owner.type in ("impl_item", "trait_item")


def _doc_of(node: Node, source: bytes) -> str:
    texts = [node_text(n, source) for n in comments_above(node, _COMMENT_TYPES, _ATTRIBUTE_TYPES)]
    return doc_text([text for text in texts if _DOC_PREFIX.match(text)])


def _impl_scope(captures: Captures, source: bytes) -> DefinitionCandidate:
    """``impl [Trait for] T``: a scope named ``T``, tagged with the trait (its methods may share
    names with ``T``'s own: ``T.<Trait>.name`` then)."""
    node = captures["impl"][0]
    traits = captures.get("impl.trait")
    return DefinitionCandidate(
        node=node,
        name=_type_name(captures["impl.type"][0], source),
        kind=_IMPL_SCOPE_KIND,
        emit=False,
        tag=compact_text(traits[0], source, QUALIFIER_MAX_CHARS) if traits else "",
    )


def _type_name(node: Node, source: bytes) -> str:
    """``Wrap<T>`` → ``Wrap``; ``m::S`` → ``S``; ``&'a T`` → ``T``."""
    current: Node | None = node
    while current is not None and current.type in _UNWRAP_TYPES:
        current = current.child_by_field_name("type")
    if current is None:
        return compact_text(node, source, QUALIFIER_MAX_CHARS)
    if current.type == "scoped_type_identifier":
        name = current.child_by_field_name("name")
        return (
            node_text(name, source)
            if name is not None
            else compact_text(current, source, QUALIFIER_MAX_CHARS)
        )
    return compact_text(current, source, QUALIFIER_MAX_CHARS)


def _implemented_trait(captures: Captures, source: bytes) -> list[Use]:
    traits = captures.get("impl.trait")
    if not traits:
        return []
    found = _type_uses(traits[0], source, "implements")
    return found[:1]


def _call_uses(callee: Node, source: bytes) -> list[Use]:
    node: Node | None = callee
    while node is not None and node.type == "generic_function":
        node = node.child_by_field_name("function")
    if node is None:
        return []
    if node.type == "identifier":
        return [call_use(node, source)]
    if node.type == "field_expression":
        field = node.child_by_field_name("field")
        if field is not None:
            return [call_use(field, source, node.child_by_field_name("value"))]
    if node.type == "scoped_identifier":
        return _path_call_uses(node, source)
    return []


def _path_call_uses(node: Node, source: bytes) -> list[Use]:
    """``a::b::f()`` → ``f`` qualified ``a::b``; ``m::Type::new()`` also calls ``Type`` (``m``)."""
    name = node.child_by_field_name("name")
    path = node.child_by_field_name("path")
    if name is None:
        return []
    if path is not None and path.type == "generic_type":
        path = path.child_by_field_name("type")
    qualifier = squeezed_text(path, source)
    uses: list[Use] = [(name, "call", node_text(name, source), qualifier)]
    if path is None:
        return uses
    segments = qualifier.split("::")
    if segments[-1][:1].isupper() and segments[-1] not in RUST_BUILTIN_TYPES:
        uses.append((path, "call", segments[-1], "::".join(segments[:-1])))
    return uses


def _macro_call_uses(token_tree: Node, source: bytes) -> list[Use]:
    """``name(…)`` and ``a.b(…)``/``a::b(…)`` inside macro arguments, which the grammar leaves unparsed."""
    uses: list[Use] = []
    for node in descendants(token_tree):
        if node.type != "token_tree" or node.child_count == 0 or node.children[0].type != "(":
            continue
        callee = node.prev_sibling
        if callee is None or callee.type != "identifier":
            continue
        parts: list[str] = []
        cursor = callee.prev_sibling
        while cursor is not None and cursor.type in (".", "::"):
            owner = cursor.prev_sibling
            if owner is None or owner.type not in ("identifier", "self", "crate", "super"):
                break
            parts.insert(0, node_text(owner, source) + cursor.type)
            cursor = owner.prev_sibling
        joined = "".join(parts)
        qualifier = joined[:-1] if joined.endswith(".") else joined.removesuffix("::")
        uses.append((callee, "call", node_text(callee, source), qualifier))
    return uses


def _type_uses(type_node: Node, source: bytes, kind: str) -> list[Use]:
    """Every named type inside a type expression (``&mut Foo<Bar>`` → ``Foo``, ``Bar``)."""
    scoped = frozenset({"scoped_type_identifier"})
    return named_type_uses(type_node, source, kind, scoped, ("scoped_type_identifier", _scoped_type_use))


def _scoped_type_use(node: Node, source: bytes, kind: str) -> Use:
    """``a::b::T`` → ``T`` qualified ``a::b``."""
    name = node.child_by_field_name("name")
    qualifier = squeezed_text(node.child_by_field_name("path"), source)
    return (name or node, kind, node_text(name, source), qualifier)


def _imports_of(node: Node, source: bytes) -> list[Import]:
    line = line_of(node)
    if node.type in ("mod_item", "extern_crate_declaration"):
        name = node_text(node.child_by_field_name("name"), source)
        alias_node = node.child_by_field_name("alias")
        local = node_text(alias_node, source) if alias_node is not None else name
        return [Import(module=name, names=(("*", local),), line=line)] if name else []
    argument = node.child_by_field_name("argument")
    if argument is None:
        return []
    grouped: dict[str, list[tuple[str, str]]] = {}
    for segments, alias, glob in _use_leaves(argument, source):
        module, binding = _binding(segments, alias, glob)
        if module:
            grouped.setdefault(module, []).append(binding)
    return [Import(module=module, names=tuple(names), line=line) for module, names in grouped.items()]


def _binding(segments: list[str], alias: str | None, glob: bool) -> tuple[str, tuple[str, str]]:
    if glob:
        return "::".join(segments), ("*", "*")
    if len(segments) == 1:
        return segments[0], ("*", alias or segments[0])
    return "::".join(segments[:-1]), (segments[-1], alias or segments[-1])


def _path_segments(node: Node | None, source: bytes) -> list[str]:
    text = squeezed_text(node, source)
    return [segment for segment in text.split("::") if segment]


def _use_leaves(argument: Node, source: bytes) -> list[UseLeaf]:
    """Flatten a ``use`` tree into (path segments, alias, is glob) leaves, in order, iteratively."""
    leaves: list[UseLeaf] = []
    stack: list[tuple[Node, list[str]]] = [(argument, [])]
    while stack:
        node, prefix = stack.pop()
        if node.type == "scoped_use_list":
            path = prefix + _path_segments(node.child_by_field_name("path"), source)
            listing = node.child_by_field_name("list")
            if listing is not None:
                stack.extend((child, path) for child in reversed(listing.named_children))
        elif node.type == "use_list":
            stack.extend((child, prefix) for child in reversed(node.named_children))
        elif node.type == "use_as_clause":
            segments = prefix + _path_segments(node.child_by_field_name("path"), source)
            leaves.append((_drop_self(segments), node_text(node.child_by_field_name("alias"), source), False))
        elif node.type == "use_wildcard":
            inner = node.named_children[0] if node.named_child_count else None
            leaves.append((prefix + _path_segments(inner, source), None, True))
        elif node.type in ("identifier", "scoped_identifier", "self", "crate", "super"):
            leaves.append((_drop_self(prefix + _path_segments(node, source)), None, False))
    return [leaf for leaf in leaves if leaf[0]]


def _drop_self(segments: list[str]) -> list[str]:
    """``a::b::{self}`` imports ``a::b`` itself."""
    return segments[:-1] if len(segments) > 1 and segments[-1] == "self" else segments


_RULES = ExtractionRules(
    query_name="rust",
    routes=(
        import_route("import", _imports_of),
        use_route("reference.call", _call_uses),
        use_route("reference.macro", _macro_call_uses),
        kind_use_route("reference.type", _type_uses, "type"),
        kind_use_route("reference.extends", _type_uses, "extends"),
        ("impl", _add_impl),
    ),
    define=_definition,
    builtin_types=RUST_BUILTIN_TYPES,
)
