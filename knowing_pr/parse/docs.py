"""Definition node + source → its signature and doc comment text (header up to the body, comments above).

Two ways to find the comments above a definition: ``comments_above`` walks the syntax tree's
siblings; ``comment_run_before`` works on bytes and a map of comment nodes by end byte, for
deeply nested files where sibling steps cost O(depth) each. Both texts are capped
(``DOC_MAX_CHARS``, ``SIGNATURE_MAX_CHARS``) and have their whitespace collapsed.
"""

from __future__ import annotations

import re
from typing import Any

from tree_sitter import Node

from knowing_pr.parse.treesitter import capped, node_text

__all__ = [
    "DOC_MAX_CHARS",
    "SIGNATURE_MAX_CHARS",
    "comment_block_before",
    "comment_run_before",
    "comments_above",
    "doc_text",
    "signature_of",
]

DOC_MAX_CHARS = 500
SIGNATURE_MAX_CHARS = 300

_WS = re.compile(r"\s+")


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
    while (
        sibling is not None
        and sibling.type in comment_types
        and int(sibling.end_point[0]) >= expected_row - 1
    ):
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


def comments_above(
    node: Node, comment_types: frozenset[str], skip_types: frozenset[str] = frozenset()
) -> list[Node]:
    """Comment siblings directly above ``node`` (no blank line between), top first.

    Siblings in ``skip_types`` (Rust ``#[attr]`` lines) are stepped over; a comment that
    trails code on its first line belongs to that code and ends the block.
    """
    found: list[Node] = []
    expected_row = int(node.start_point[0])
    sibling: Any = node.prev_sibling
    while sibling is not None and int(sibling.end_point[0]) >= expected_row - 1:
        if sibling.type in comment_types:
            before: Any = sibling.prev_sibling
            if before is not None and int(before.end_point[0]) == int(sibling.start_point[0]):
                break
            found.append(sibling)
        elif sibling.type not in skip_types:
            break
        expected_row = int(sibling.start_point[0])
        sibling = sibling.prev_sibling
    found.reverse()
    return found


_DOC_MARKER = re.compile(r"^(?://[/!]?|/\*+!?|\*+/?)\s?")


def doc_text(comments: list[str]) -> str:
    """Comment texts → one line of doc, markers (``//``, ``///``, ``//!``, ``/**``, ``*``) stripped."""
    words: list[str] = []
    for block in comments:
        for raw in block.splitlines():
            line = _DOC_MARKER.sub("", raw.strip()).removesuffix("*/").strip()
            if line:
                words.append(line)
    return capped(_WS.sub(" ", " ".join(words)), DOC_MAX_CHARS)


def comment_run_before(start_byte: int, comments_by_end: dict[int, Node], source: bytes) -> list[Node]:
    """Comments directly above the code starting at ``start_byte``, top first.

    Each comment starts its own line and no blank line separates it from what follows.
    Works on bytes and a map of comment nodes by ``end_byte`` (from a ``(comment)`` query
    capture) because tree-sitter's ``prev_sibling``/``parent`` cost O(depth) each, which is
    quadratic on deeply nested files.
    """
    found: list[Node] = []
    position = start_byte
    while True:
        newlines = 0
        comment = comments_by_end.get(position)
        while comment is None and position > 0 and source[position - 1] in b" \t\r\n":
            newlines += source[position - 1] == 0x0A
            if newlines > 1:
                break  # a blank line
            position -= 1
            comment = comments_by_end.get(position)  # a comment node may end with "\r"
        if comment is None or comment.start_byte >= start_byte:
            break
        line_start = source.rfind(b"\n", 0, comment.start_byte) + 1
        if source[line_start : comment.start_byte].strip():
            break  # a comment trailing code belongs to that code
        found.append(comment)
        position = comment.start_byte
    found.reverse()
    return found
