"""Language, sample source → the checks every ``tests/test_parse_<language>.py`` shares.

Rows turn records into comparable tuples; the robustness checks (empty file, CRLF, random and
damaged bytes) are the same for every language and take the module's ``parse`` function.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

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


def assert_empty_file_gives_nothing(parse: Parse) -> None:
    parsed = parse(b"")
    assert (parsed.definitions, parsed.references, parsed.imports, parsed.line_count) == ([], [], [], 0)


def assert_crlf_gives_the_same_records(parse: Parse, source: str) -> None:
    """``\\r\\n`` line endings change no line, name, signature, doc or import."""
    lf = parse(source)
    crlf = parse(source.replace("\n", "\r\n"))
    assert definition_rows(lf), "the sample must define something"
    assert definition_rows(crlf) == definition_rows(lf)
    assert reference_rows(crlf) == reference_rows(lf)
    assert [(d.signature, d.doc) for d in crlf.definitions] == [(d.signature, d.doc) for d in lf.definitions]
    assert crlf.imports == lf.imports


def never_raising_tests(parse: Parse, sample: str) -> tuple[Callable[..., None], Callable[..., None]]:
    """Property tests (arbitrary bytes; ``sample`` with a span cut and junk put in) that only
    require ``parse`` to return; bind both to ``test_…`` names in the test module."""

    @settings(max_examples=60, deadline=None)
    @given(st.binary(max_size=400))
    def arbitrary_bytes(data: bytes) -> None:
        assert isinstance(parse(data), ParsedFile)

    source = sample.encode()

    @settings(max_examples=60, deadline=None)
    @given(st.integers(0, len(source)), st.integers(0, 40), st.binary(max_size=8))
    def damaged_source(at: int, cut: int, junk: bytes) -> None:
        assert isinstance(parse(source[:at] + junk + source[at + cut :]), ParsedFile)

    return arbitrary_bytes, damaged_source
