"""Python syntax tree → definitions, references and imports (patterns in ``queries/python.scm``).

Definitions: classes, functions (methods when directly in a class body), module-level
``UPPER_CASE`` constants; the byte range of a decorated definition includes its decorators.
References: calls (decorators count as calls), base classes (``extends``) and names used in
annotations (``type``). Imports: ``import a.b [as c]`` and ``from .x import y [as z]``.
"""

from __future__ import annotations

import inspect

from tree_sitter import Node, QueryCursor

from knowing_pr.model import Fact, Import, SymbolKind
from knowing_pr.parse.docs import DOC_MAX_CHARS, signature_of
from knowing_pr.parse.python_scopes import FileScopes
from knowing_pr.parse.syntax import QUALIFIER_MAX_CHARS, Records, Use, assemble_nested
from knowing_pr.parse.treesitter import (
    QUERY_MAX_START_DEPTH,
    Captures,
    capped,
    captures_in_order,
    compact_text,
    descendants,
    line_of,
    load_query,
    node_text,
)

__all__ = ["extract"]

#: annotation names that never resolve to a symbol of the repository
_BUILTIN_TYPES = frozenset(
    {"int", "str", "bool", "float", "bytes", "object", "None", "complex", "list", "dict", "tuple", "set"}
)
_STRING_PREFIX_CHARS = "rRbBuUfF"


def extract(root: Node, source: bytes, language: str) -> Records:
    captures = _captures(root, language)
    statements = sorted(captures.get("import", ()), key=lambda n: n.start_byte)
    imported = [(statement, _imports_of(statement, source)) for statement in statements]
    imports = [i for _, found in imported for i in found]
    decorations = {
        decorated.start_byte: node
        for node in captures.get("decorated", ())
        if (decorated := node.child_by_field_name("definition")) is not None
    }
    scope_nodes = [(n, "class") for n in captures.get("class", ())] + [
        (n, "function") for n in captures.get("function", ())
    ]
    scopes = FileScopes(root, source, scope_nodes, captures)
    stubs = scopes.overload_stubs()
    candidates = [
        _definition(node, kind, source, decorations)
        for node, kind in scope_nodes
        if node.start_byte not in stubs
    ]
    candidates.extend(_constants(captures, source))
    local_lines = [
        str(line_of(statement))
        for statement, found in imported
        if scopes.bind_local_imports(statement, found)
    ]
    scopes.bind_call_arguments(captures.get("call", []))
    scopes.finish()
    hints: dict[tuple[int, str, str, str], str] = {}
    uses = _uses(captures, source, scopes, hints)
    for use, hint in _flow_uses(scopes, source):
        uses.append(use)
        hints[_use_key(use)] = hint
    definitions, references, imports, _ = assemble_nested(candidates, uses, imports, hints)
    facts = scopes.facts()
    if local_lines:  # imports inside functions bind names there only
        facts.append(Fact("local_imports", "", "", tuple(local_lines)))
    return definitions, references, imports, facts


def _captures(root: Node, language: str) -> Captures:
    """Every node ``queries/python.scm`` names, by capture name, in document order (one pass)."""
    cursor = QueryCursor(load_query("python", language))
    cursor.set_max_start_depth(QUERY_MAX_START_DEPTH)
    return captures_in_order(cursor, root)


def _definition(
    node: Node, kind: str, source: bytes, decorations: dict[int, Node]
) -> tuple[Node, str, str, str, str]:
    """A class or function: (its range's node — with its decorators —, name, kind, signature, doc)."""
    body = node.child_by_field_name("body")
    name = node_text(node.child_by_field_name("name"), source)
    symbol_kind = SymbolKind.CLASS if kind == "class" else SymbolKind.FUNCTION
    signature = signature_of(node, source, body)
    return decorations.get(node.start_byte, node), name, symbol_kind, signature, _docstring(body, source)


def _constants(captures: Captures, source: bytes) -> list[tuple[Node, str, str, str, str]]:
    """Module-level ``UPPER_CASE = …`` assignments (the query's predicate picked them)."""
    found = []
    for statement in sorted(captures.get("constant", ()), key=lambda n: n.start_byte):
        name = node_text(statement.child_by_field_name("left"), source)
        found.append((statement, name, SymbolKind.CONSTANT, signature_of(statement, source, None), ""))
    return found


def _uses(
    captures: Captures, source: bytes, scopes: FileScopes, hints: dict[tuple[int, str, str, str], str]
) -> list[Use]:
    """Calls (decorators count as calls), base classes (``extends``), names in annotations; each
    one's hint (what the used expression holds) goes into ``hints``."""
    uses: list[Use] = []
    for node in captures.get("call", ()):
        _add_use(uses, hints, scopes, node, node.child_by_field_name("function"), source, "call")
    for node in captures.get("decorator", ()):
        callee = node.named_children[0] if node.named_children else None
        _add_use(uses, hints, scopes, node, callee, source, "call")
    for node in captures.get("class", ()):
        bases = node.child_by_field_name("superclasses")
        for base in bases.named_children if bases is not None else ():
            named = base.child_by_field_name("value") if base.type == "subscript" else base
            _add_use(uses, hints, scopes, base, named, source, "extends")
    for node in captures.get("type", ()):
        for use in _type_uses(node, source):
            uses.append(use)
            hints[_use_key(use)] = scopes.hint_of(use[0])
    return uses


def _add_use(
    uses: list[Use],
    hints: dict[tuple[int, str, str, str], str],
    scopes: FileScopes,
    anchor: Node,
    callee: Node | None,
    source: bytes,
    kind: str,
) -> None:
    """``f`` or ``obj.f`` as a use of ``f`` (qualified by ``obj``'s text), with its hint; other
    callees (``f()()``, ``d[k]()``) are none."""
    if callee is None:
        return
    if callee.type == "call":  # ``f()()``: a call of what ``f()`` returns
        use: Use = (anchor, kind, "()", "")
        uses.append(use)
        hints[_use_key(use)] = scopes.hint_of(callee)
        return
    if callee.type == "identifier":
        use = (anchor, kind, node_text(callee, source), "")
        hint = scopes.hint_of(callee)
    elif callee.type == "attribute":
        attribute = callee.child_by_field_name("attribute")
        receiver = callee.child_by_field_name("object")
        if attribute is None or receiver is None or attribute.type != "identifier":
            return
        name = node_text(attribute, source)
        # the attribute's line, not the receiver's: ``(g\n  .h())`` calls ``h`` on line 2
        use = (attribute, kind, name, compact_text(receiver, source, QUALIFIER_MAX_CHARS))
        hint = scopes.hint_of(receiver, "." + name)
    else:
        return
    uses.append(use)
    hints[_use_key(use)] = hint


def _use_key(use: Use) -> tuple[int, str, str, str]:
    node, kind, name, qualifier = use
    return node.start_byte, kind, name, qualifier


def _flow_uses(scopes: FileScopes, source: bytes) -> list[tuple[Use, str]]:
    """Calls no call expression spells: ``raise A`` constructs ``A``; ``for x in it`` calls
    ``it.__iter__()`` and that iterator's ``__next__``."""
    found: list[tuple[Use, str]] = []
    for node in scopes.raised:
        name = node_text(node, source).rsplit(".", 1)[-1]
        found.append(((node, "call", name, ""), scopes.hint_of(node)))
    for node in scopes.iterables:
        values = scopes.values_at(node)
        if any(v not in ("?", "!") for v in values):
            found.append(((node, "call", "__iter__", ""), scopes.hint_of(node, ".__iter__")))
            found.append(((node, "call", "__next__", ""), scopes.hint_of(node, ".__iter__().__next__")))
    return found


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
