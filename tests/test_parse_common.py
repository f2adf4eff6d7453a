"""Every query-driven language on the same bad inputs: empty file, CRLF, random and damaged bytes.

Each language's sample is the one its own ``test_parse_<language>.py`` checks in detail.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from parse_helpers import definition_rows, parser_for, reference_rows
from test_parse_csharp import RUNNER_CS
from test_parse_go import SERVER_GO
from test_parse_java import SERVICE_JAVA
from test_parse_rust import LIB_RS

from knowing_pr.model import ParsedFile

#: language → (path it is parsed as, sample source)
SAMPLES = {
    "go": ("server/server.go", SERVER_GO),
    "java": ("src/main/java/com/acme/app/Service.java", SERVICE_JAVA),
    "rust": ("src/lib.rs", LIB_RS),
    "csharp": ("src/Runner.cs", RUNNER_CS),
}
LANGUAGES = sorted(SAMPLES)


@pytest.mark.parametrize("language", LANGUAGES)
def test_empty_file(language: str) -> None:
    parsed = parser_for(SAMPLES[language][0], language)(b"")
    assert (parsed.definitions, parsed.references, parsed.imports, parsed.line_count) == ([], [], [], 0)


@pytest.mark.parametrize("language", LANGUAGES)
def test_crlf_line_endings_keep_line_numbers(language: str) -> None:
    path, sample = SAMPLES[language]
    parse = parser_for(path, language)
    lf = parse(sample)
    crlf = parse(sample.replace("\n", "\r\n"))
    assert len(lf.definitions) > 3 and len(lf.references) > 3 and lf.imports
    assert definition_rows(crlf) == definition_rows(lf)
    assert reference_rows(crlf) == reference_rows(lf)
    assert [(d.signature, d.doc) for d in crlf.definitions] == [(d.signature, d.doc) for d in lf.definitions]
    assert crlf.imports == lf.imports


@pytest.mark.parametrize("language", LANGUAGES)
@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=400))
def test_arbitrary_bytes_never_raise(language: str, data: bytes) -> None:
    assert isinstance(parser_for("x", language)(data), ParsedFile)


@pytest.mark.parametrize("language", LANGUAGES)
@settings(max_examples=60, deadline=None)
@given(data=st.data(), cut=st.integers(0, 40), junk=st.binary(max_size=8))
def test_damaged_source_never_raises(language: str, data: st.DataObject, cut: int, junk: bytes) -> None:
    path, sample = SAMPLES[language]
    source = sample.encode()
    at = data.draw(st.integers(0, len(source)), label="at")
    assert isinstance(parser_for(path, language)(source[:at] + junk + source[at + cut :]), ParsedFile)


def test_the_parse_stage_knows_exactly_the_languages_the_model_names() -> None:
    """``config`` validates ``index.languages`` against ``model.LANGUAGES``; the parse stage maps
    file extensions onto the same names."""
    from knowing_pr.model import LANGUAGES
    from knowing_pr.parse import LANGUAGE_BY_EXTENSION

    assert set(LANGUAGE_BY_EXTENSION.values()) == LANGUAGES
