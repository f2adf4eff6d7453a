"""A change's lines + the nodes of a changed file (+ its text) → the change's own symbols; a
symbol's signature at the base and at the head → what changed in it.

**The change's own symbols** are the innermost definitions holding a changed line: a method, not
the class around it; a nested function's line belongs to the nearest definition that is a node.
Lines that say nothing (a lone bracket or ``end``, a comment) are ignored unless nothing else
changed in the file (blank lines always are); decorator, annotation and attribute lines belong to
the definition below them. A deletion with nothing in its place touches the innermost definition
around the gap (a method deleted between two others: the class; a top-level function deleted
between two others: none, it is *removed*); blank lines deleted alone touch nothing. Changed lines
outside every definition that are not imports make the file's module one of the change's symbols
("module-level code changed"); so does a change of imports alone, or lines deleted at module level
that took no whole definition with them (an import, a statement), when nothing else changed.

**Signature changes**: the parameter list, the return type and the visibility keywords (``pub``,
``public``/``private``/``protected``/``internal``, ``export``) are compared after comments and
whitespace are normalised; anything else that differs is reported as ``signature``. A change
*breaks callers* when the visibility changed or the parameters changed other than by optional
parameters added at the end (a default, ``x?:``, a rest parameter).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from knowing_pr.graph.paths import module_name
from knowing_pr.model import Node, SymbolKind

__all__ = [
    "ChangedInFile",
    "breaks_callers",
    "changed_in_file",
    "in_file_name",
    "normalize_signature",
    "signature_changes",
]

_INSIGNIFICANT = re.compile(r"^\s*(?:[\]\[{}()<>;,]+|end|\*/|/\*+.*|\*(?:\s.*|/)?|#(?!\[).*|//.*)?\s*$")
_ANNOTATION = re.compile(r"^\s*(?:@[\w.]|#\[|\[[A-Z])")
_IMPORT = re.compile(
    r"^\s*(?:import\b|from\s+\S+\s+import\b|export\s+(?:\*|\{[^}]*\})\s*from\b|use\s|using\s|package\s|"
    r"require\b|require_relative\b|#include|extern\s+crate\b|mod\s+\w+\s*;|"
    r"(?:const|let|var)\s+[\w{},\s]+=\s*require\(|['\"]use strict['\"]|"
    # a line of a multi-line import: a Go import spec, a bare name, the closing ``} from``
    r"(?:[\w.]+\s+)?\"[^\"]+\"\s*;?\s*$|[\w.$]+\s*(?:as\s+\w+\s*)?,?\s*$|\}\s*from\s)"
)
_LINE_COMMENT = re.compile(r"(?m)(?:^|(?<=\s))(?://|#(?![\[!{])).*$")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_SPACE = re.compile(r"\s+")
_VISIBILITY = re.compile(r"\b(pub(?:\([\w:\s]+\))?|public|private|protected|internal|export)(?=[\s(]|$)")
_KEYWORDS = frozenset(
    {
        "def", "async", "function", "func", "fn", "static", "final", "abstract", "override", "virtual",
        "sealed", "readonly", "const", "unsafe", "extern", "default", "export", "public", "private",
        "protected", "internal", "pub", "synchronized", "native", "open", "inline", "get", "set",
    }
)  # fmt: skip


@dataclass(frozen=True)
class ChangedInFile:
    """The change's own symbols in one file, and whether its module-level code changed."""

    ids: tuple[str, ...]
    module_changed: bool


def _definition_starts(definitions: Sequence[Node], lines: Sequence[str] | None) -> list[int]:
    """Each definition's first line, moved up over the decorator/annotation lines above it."""
    starts = []
    for node in definitions:
        start = node.start_line
        while lines is not None and start > 1 and _ANNOTATION.match(lines[start - 2]):
            start -= 1
        starts.append(start)
    return starts


def _owners(definitions: Sequence[Node], starts: Sequence[int], line_count: int) -> list[int]:
    """The innermost definition holding each line (index into ``definitions``; -1: none): wider
    spans are painted first, narrower ones over them."""
    owner = [-1] * (line_count + 2)
    order = sorted(range(len(definitions)), key=lambda i: -(definitions[i].end_line - starts[i]))
    for i in order:
        last = min(definitions[i].end_line, line_count + 1)
        for line in range(max(starts[i], 1), last + 1):
            owner[line] = i
    return owner


def _lines_of(ranges: Sequence[tuple[int, int]], line_count: int) -> list[int]:
    out: list[int] = []
    for start, end in ranges:
        out.extend(range(max(start, 1), min(end, line_count + 1) + 1))
    return out


def changed_in_file(
    nodes: Sequence[Node],
    added: Sequence[tuple[int, int]] | None,
    deleted_at: Sequence[int] = (),
    lines: Sequence[str] | None = None,
    code_deleted_at: Sequence[int] = (),
) -> ChangedInFile:
    """The innermost definitions the change touched in one file (module docstring). ``added``
    ``None`` means the whole file; ``lines`` is the file's text at the head, when readable;
    ``code_deleted_at``: the gaps of ``deleted_at`` that took no whole definition with them (an
    import, a statement: the module's code when no definition is around them)."""
    module = next((n for n in nodes if n.kind == SymbolKind.MODULE), None)
    definitions = [n for n in nodes if n.kind != SymbolKind.MODULE]
    line_count = max([len(lines) if lines is not None else 0, *(n.end_line for n in nodes)])
    if added is None:
        return ChangedInFile(tuple(sorted(n.id for n in definitions)), module is not None and not definitions)
    starts = _definition_starts(definitions, lines)
    owner = _owners(definitions, starts, line_count)
    touched = _lines_of(added, line_count)
    significant = [
        n for n in touched if lines is None or n > len(lines) or not _INSIGNIFICANT.match(lines[n - 1])
    ]
    chosen = significant or [n for n in touched if lines is None or n > len(lines) or lines[n - 1].strip()]
    hit: set[int] = {owner[n] for n in chosen if owner[n] >= 0}
    module_lines = [n for n in chosen if owner[n] < 0]
    module_gap = False
    for gap in deleted_at:  # lines gone between ``gap`` and ``gap + 1``
        around = [
            i for i in range(len(definitions)) if starts[i] <= gap and gap + 1 <= definitions[i].end_line
        ]
        if around:
            hit.add(min(around, key=lambda i: definitions[i].end_line - starts[i]))
        elif gap in code_deleted_at:
            module_gap = True
    code_outside = any(
        lines is None or n > len(lines) or not _IMPORT.match(lines[n - 1]) for n in module_lines
    )
    # lines deleted at module level count as imports do: the module's when nothing else changed
    module_changed = module is not None and (code_outside or (not hit and (bool(module_lines) or module_gap)))
    ids = sorted({definitions[i].id for i in hit} | ({module.id} if module_changed and module else set()))
    return ChangedInFile(tuple(ids), module_changed)


def in_file_name(node: Node) -> str:
    """A node's qualified name inside its file (``Cart.add_item``); a module's is its own."""
    prefix = module_name(node.path) + "."
    name = node.qualified_name
    return name[len(prefix) :] if name.startswith(prefix) else name


# ---------------------------------------------------------------- signatures


def normalize_signature(signature: str) -> str:
    """One line, comments out, whitespace collapsed, no space inside brackets, no trailing comma
    or opening brace."""
    text = _BLOCK_COMMENT.sub(" ", signature)
    text = _LINE_COMMENT.sub(" ", text)
    text = _SPACE.sub(" ", text).strip()
    # the spaces left are single: plain replacements do what three patterns did, and a fresh pr
    # compiles no pattern for them
    for opening in "([":
        text = text.replace(opening + " ", opening)
    text = _tight_angle(text)
    for closing in ")]>":
        text = text.replace(" " + closing, closing)
    for closing in ")]>":
        text = text.replace("," + closing, closing)
    return text.rstrip("{:; ").strip()


def _tight_angle(text: str) -> str:
    """``List< T>`` → ``List<T>``, but ``Application < Base`` (a Ruby superclass, a comparison in
    a default value) keeps its spaces: the ``<`` of a type argument follows a name directly."""
    if "< " not in text:
        return text
    parts = text.split("< ")
    out = [parts[0]]
    for index, part in enumerate(parts[1:]):
        before = parts[index]
        # an empty piece after the first stands between two ``< ``: a space precedes its ``<``
        spaced = before.endswith(" ") or (index > 0 and not before)
        out.append(("< " if spaced else "<") + part)
    return "".join(out)


def _matching(text: str, opening: int) -> int:
    depth = 0
    for index in range(opening, len(text)):
        if text[index] in "([{<":
            depth += 1
        elif text[index] in ")]}>" and not (text[index] == ">" and text[index - 1] in "-="):
            depth -= 1
            if depth == 0:
                return index
    return len(text) - 1


def _parts(signature: str, name: str) -> tuple[str, str, str, frozenset[str]]:
    """(what precedes the name minus keywords, the parameter list, what follows it, visibility)."""
    text = normalize_signature(signature)
    at = re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text) if name else None
    if at is None:
        return "", text, "", frozenset(_VISIBILITY.findall(text))
    before, after = text[: at.start()], text[at.end() :]
    visibility = frozenset(_VISIBILITY.findall(before))
    prefix = " ".join(w for w in _VISIBILITY.sub(" ", before).split() if w not in _KEYWORDS)
    opening = after.find("(")
    if opening < 0:
        return prefix, "", after.strip(), visibility
    closing = _matching(after, opening)
    params = after[opening : closing + 1]
    rest = after[closing + 1 :].strip()
    rest = re.sub(r"^(?:->|:|=>)\s*", "", rest).split(" where ", 1)[0].strip()
    return prefix, params, rest, visibility


def signature_changes(before: str, after: str, name: str, kind: str) -> tuple[str, ...]:
    """What differs between two signatures of one symbol: ``parameters`` (``declaration`` for a
    type), ``return type``, ``visibility``; ``signature`` when something else differs; ``()`` when
    they are the same once normalised."""
    if normalize_signature(before) == normalize_signature(after):
        return ()
    prefix_a, params_a, rest_a, vis_a = _parts(before, name)
    prefix_b, params_b, rest_b, vis_b = _parts(after, name)
    found: list[str] = []
    if params_a != params_b:
        found.append("parameters" if kind in (SymbolKind.FUNCTION, SymbolKind.METHOD) else "declaration")
    if rest_a != rest_b or prefix_a != prefix_b:
        found.append("return type" if kind in (SymbolKind.FUNCTION, SymbolKind.METHOD) else "declaration")
    if vis_a != vis_b:
        found.append("visibility")
    return tuple(dict.fromkeys(found)) or ("signature",)


def _parameters(params: str) -> list[str]:
    """The top-level items of a parameter list ``(a, b = f(x, y), *c)``."""
    inner = params[1:-1] if params.startswith("(") and params.endswith(")") else params
    items: list[str] = []
    depth, start = 0, 0
    for index, char in enumerate(inner):
        if char in "([{<":
            depth += 1
        elif char in ")]}>" and not (char == ">" and index and inner[index - 1] in "-="):
            depth -= 1
        elif char == "," and depth == 0:
            items.append(inner[start:index].strip())
            start = index + 1
    last = inner[start:].strip()
    return [*items, last] if last else items


def _optional(parameter: str) -> bool:
    """A parameter a call may leave out: a default, ``x?:``, a rest or keyword-only marker."""
    head = parameter.split(":", 1)[0]
    return "=" in parameter or head.endswith("?") or parameter.startswith(("...", "*", "&"))


def breaks_callers(before: str, after: str, name: str, kind: str) -> bool:
    """Whether calls written for ``before`` may not fit ``after``: a visibility change, or a
    parameter change other than optional parameters added at the end."""
    changes = signature_changes(before, after, name, kind)
    if "visibility" in changes:
        return True
    if "parameters" not in changes:
        return False
    old, new = _parameters(_parts(before, name)[1]), _parameters(_parts(after, name)[1])
    appended = len(new) > len(old) and new[: len(old)] == old
    return not (appended and all(_optional(p) for p in new[len(old) :]))
