"""Tree-sitter boundary shared by the language modules: grammars, ``.scm`` queries, node text.

Every language module runs its query file (``queries/<language>.scm``) through
``query_matches`` and turns the captures into ``Definition``/``Reference``/``Import`` records.
Capture names follow one convention across languages:

- ``@definition.<kind>`` on the whole definition node (kind from ``SymbolKind``) with
  ``@name`` on its identifier;
- ``@reference.call`` / ``@reference.extends`` / ``@reference.implements`` /
  ``@reference.type`` on the using node, with ``@name`` (and optionally ``@receiver``);
- ``@import`` on an import statement (the language module reads its parts).
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Any

from tree_sitter import Language, Node, Parser, Query, QueryCursor

__all__ = [
    "DOC_MAX_CHARS",
    "SIGNATURE_MAX_CHARS",
    "capped",
    "comment_block_before",
    "get_language",
    "get_parser",
    "line_of",
    "load_query",
    "node_text",
    "query_matches",
    "signature_of",
]

DOC_MAX_CHARS = 500
SIGNATURE_MAX_CHARS = 300

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


@lru_cache(maxsize=None)
def get_language(language: str) -> Language:
    from tree_sitter_language_pack import get_language as pack_language

    return pack_language(GRAMMAR_NAMES[language])  # type: ignore[arg-type]


def get_parser(language: str) -> Parser:
    return Parser(get_language(language))


@lru_cache(maxsize=None)
def load_query(query_name: str, language: str) -> Query:
    """Compile ``queries/<query_name>.scm`` for ``language`` (TS and TSX share one file)."""
    text = resources.files("knowing_pr.parse").joinpath("queries", f"{query_name}.scm").read_text("utf-8")
    return Query(get_language(language), text)


def query_matches(query: Query, root: Node) -> list[tuple[int, dict[str, list[Node]]]]:
    """All matches of ``query`` under ``root``, in document order."""
    cursor = QueryCursor(query)
    matches: list[tuple[int, dict[str, list[Node]]]] = cursor.matches(root)
    return matches


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


def signature_of(node: Node, source: bytes, body: Node | None) -> str:
    """The definition's header: its text up to the body, whitespace collapsed, capped."""
    end = body.start_byte if body is not None else node.end_byte
    header = source[node.start_byte : end].decode("utf-8", "replace")
    header = header.split("\n{", 1)[0] if body is None else header
    header = _WS.sub(" ", header).strip().rstrip("{:").strip()
    return capped(header, SIGNATURE_MAX_CHARS)


def comment_block_before(node: Node, source: bytes, comment_types: frozenset[str]) -> str:
    """Doc comments (``//``, ``///``, ``/** */``, ``#``) directly above ``node``, markers stripped."""
    lines: list[str] = []
    sibling: Any = node.prev_sibling
    expected_row = int(node.start_point[0])
    while sibling is not None and sibling.type in comment_types and int(sibling.end_point[0]) >= expected_row - 1:
        lines.insert(0, node_text(sibling, source))
        expected_row = int(sibling.start_point[0])
        sibling = sibling.prev_sibling
    if not lines:
        return ""
    cleaned: list[str] = []
    for block in lines:
        for raw in block.splitlines():
            line = raw.strip()
            line = re.sub(r"^(///?|/\*\*?|\*/|\*|#)\s?", "", line)
            line = line.removesuffix("*/").strip()
            if line:
                cleaned.append(line)
    return capped(" ".join(cleaned), DOC_MAX_CHARS)
