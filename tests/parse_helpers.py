"""Path + language → a ``parse(text)`` for the parse tests, and records → comparable rows."""

from __future__ import annotations

from collections.abc import Callable

from knowing_pr.model import ParsedFile
from knowing_pr.parse import parse_source

Parse = Callable[[str | bytes], ParsedFile]
DefinitionRow = tuple[str, str, str, int, int, str | None]
ReferenceRow = tuple[str, str, str, str | None, int]


def parser_for(path: str, language: str) -> Parse:
    """A ``parse(text)`` that parses ``text`` (str or bytes) as ``path`` in ``language``."""

    def parse(text: str | bytes) -> ParsedFile:
        source = text.encode() if isinstance(text, str) else text
        return parse_source(path, language, source)

    return parse


def definition_rows(parsed: ParsedFile) -> list[DefinitionRow]:
    return [
        (d.name, d.qualified_name, d.kind, d.start_line, d.end_line, d.parent) for d in parsed.definitions
    ]


def reference_rows(parsed: ParsedFile) -> list[ReferenceRow]:
    return [(r.kind, r.name, r.qualifier, r.scope, r.line) for r in parsed.references]
