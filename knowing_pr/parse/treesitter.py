"""Language name, query name, syntax node → parser, compiled query, matches, node text (tree-sitter).

The boundary every language module reaches tree-sitter through: grammars come from
tree-sitter-language-pack (``GRAMMAR_NAMES``), queries from ``queries/<name>.scm`` (package
data), matches from a ``QueryCursor`` (optionally bounded in depth); the node helpers read a
node's text, line and descendants without recursion.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from tree_sitter import Language, Node, Parser, Query, QueryCursor

__all__ = [
    "Captures",
    "GRAMMAR_NAMES",
    "QUERY_MAX_START_DEPTH",
    "capped",
    "captures_in_order",
    "compact_text",
    "descendants",
    "first_capture",
    "get_language",
    "get_parser",
    "line_of",
    "load_joined_query",
    "load_query",
    "node_text",
    "query_matches",
    "query_matches_bounded",
    "squeezed_text",
]

#: a query match's captures, by capture name
Captures = dict[str, list[Node]]

#: grammar name in tree-sitter-language-pack for each of our language names
GRAMMAR_NAMES = {
    "python": "python",
    "javascript": "javascript",
    "typescript": "typescript",
    "tsx": "tsx",
    "go": "go",
    "rust": "rust",
    "java": "java",
    "csharp": "csharp",
    "ruby": "ruby",
}


#: where tree-sitter-language-pack keeps a grammar's compiled module: (distribution package, the
#: module under it) for the grammar names it does not keep under ``bindings/``
_BINDING_HOMES = {"csharp": ("tree_sitter_c_sharp", "_binding")}


@cache
def get_language(language: str) -> Language:
    """The grammar of ``language``, from tree-sitter-language-pack's compiled module for it,
    loaded by its path (``_grammar_module``); in any layout where that is not found, through the
    pack's own ``get_language``."""
    name = GRAMMAR_NAMES[language]
    module = _grammar_module(name)
    if module is None:
        from tree_sitter_language_pack import get_language as pack_language

        return pack_language(name)  # type: ignore[arg-type]
    return Language(module.language())


def _grammar_module(name: str) -> Any:
    """The pack's compiled module of grammar ``name``, loaded without importing the pack's package:
    that package loads the C#, YAML and ERB grammars and ``importlib.resources`` (with
    ``tempfile`` and ``random``) on import, which a fresh ``pr`` paid at its first parse. None
    when the file is not where the pack 0.13 keeps it or does not load: the pack's own loader
    then tries, and raises what it meets."""
    import importlib.machinery
    import importlib.util

    package, module = _BINDING_HOMES.get(name, ("tree_sitter_language_pack", f"bindings.{name}"))
    found = importlib.util.find_spec(package)  # finds the package without running it
    if found is None or found.origin is None:
        return None
    folder = Path(found.origin).parent.joinpath(*module.split(".")[:-1])
    leaf = module.rsplit(".", 1)[-1]
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"{leaf}{suffix}"
        if path.is_file():
            fullname = f"{package}.{module}"
            loader = importlib.machinery.ExtensionFileLoader(fullname, str(path))
            spec = importlib.util.spec_from_file_location(fullname, path, loader=loader)
            if spec is None:
                return None
            try:
                loaded = importlib.util.module_from_spec(spec)  # the library is loaded here
                loader.exec_module(loaded)
            except (ImportError, OSError):
                return None
            return loaded
    return None


def get_parser(language: str) -> Parser:
    return Parser(get_language(language))


#: the query files, beside this module in the installed package: a plain path, since the package
#: is never run from a zip (its parsers are native code), and ``importlib.resources`` (with the
#: ``tempfile`` and ``shutil`` it imports) would be one more import for every fresh process
QUERIES = Path(__file__).with_name("queries")


@cache
def load_query(query_name: str, language: str) -> Query:
    """Compile ``queries/<query_name>.scm`` for ``language`` (TS and TSX share one file)."""
    text = (QUERIES / f"{query_name}.scm").read_text("utf-8")
    query: Query = Query(get_language(language), text)
    return query


@lru_cache(maxsize=32)
def load_joined_query(query_names: tuple[str, ...], language: str) -> Query:
    """Compile several ``queries/*.scm`` files as one query (e.g. TypeScript + JSX for TSX)."""
    texts = [(QUERIES / f"{name}.scm").read_text("utf-8") for name in query_names]
    query: Query = Query(get_language(language), "\n".join(texts))
    return query


def query_matches(query: Query, root: Node) -> list[tuple[int, dict[str, list[Node]]]]:
    """All matches of ``query`` under ``root``, in document order."""
    cursor = QueryCursor(query)
    matches: list[tuple[int, dict[str, list[Node]]]] = cursor.matches(root)
    return matches


#: tree-sitter's query cursor slows down sharply on nodes deeper than 32,767 levels (142 s for
#: 100,000 nested calls); real code never nests anywhere near this deep
QUERY_MAX_START_DEPTH = 16_384


def query_matches_bounded(query: Query, root: Node) -> list[tuple[int, dict[str, list[Node]]]]:
    """``query_matches`` that ignores matches starting deeper than ``QUERY_MAX_START_DEPTH``."""
    cursor = QueryCursor(query)
    cursor.set_max_start_depth(QUERY_MAX_START_DEPTH)
    matches: list[tuple[int, dict[str, list[Node]]]] = cursor.matches(root)
    return matches


def captures_in_order(cursor: QueryCursor, root: Node) -> Captures:
    """Every node ``cursor``'s query captures under ``root``, by capture name, each name's nodes
    in document order (an outer node before a node of the same span inside it). tree-sitter's
    ``QueryCursor.captures`` keeps no order: the same tree captured twice can list a name's nodes
    differently, and what is read first (the first values of a union, the last binding before a
    read) then changed from run to run."""
    found: Captures = cursor.captures(root)
    return {name: _in_document_order(nodes) for name, nodes in found.items()}


def _in_document_order(nodes: list[Node]) -> list[Node]:
    ordered = sorted(nodes, key=lambda node: (node.start_byte, -node.end_byte))
    start = 0
    for end in range(1, len(ordered) + 1):  # runs of one span: the outer node (fewer ancestors) first
        if end == len(ordered) or _span(ordered[end]) != _span(ordered[start]):
            if end - start > 1:
                ordered[start:end] = sorted(ordered[start:end], key=_depth)
            start = end
    return ordered


def _span(node: Node) -> tuple[int, int]:
    return node.start_byte, node.end_byte


def _depth(node: Node) -> int:
    depth, parent = 0, node.parent
    while parent is not None:
        depth, parent = depth + 1, parent.parent
    return depth


def node_text(node: Node | None, source: bytes) -> str:
    if node is None:
        return ""
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def line_of(node: Node) -> int:
    """1-based line of the node's start."""
    return int(node.start_point[0]) + 1


_WS = re.compile(r"\s+")


def capped(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def compact_text(node: Node | None, source: bytes, limit: int) -> str:
    """Node text with whitespace collapsed, capped (for qualifiers such as ``a.b`` or ``f(x).g``)."""
    return capped(_WS.sub(" ", node_text(node, source)), limit)


def descendants(node: Node, stop_types: frozenset[str] = frozenset()) -> list[Node]:
    """``node`` and every node below it in document order, iteratively (no recursion).

    Children of a node whose type is in ``stop_types`` are not visited (the node itself is).
    """
    found: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        found.append(current)
        if current.type not in stop_types:
            stack.extend(reversed(current.children))
    return found


def first_capture(captures: Captures, name: str) -> Node | None:
    """The first node captured as ``name`` in one match, or ``None``."""
    nodes = captures.get(name)
    return nodes[0] if nodes else None


def squeezed_text(node: Node | None, source: bytes) -> str:
    """Node text with all whitespace removed (a dotted or ``::`` path written over lines)."""
    return _WS.sub("", node_text(node, source))
