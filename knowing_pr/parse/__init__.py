"""File bytes → ``ParsedFile`` (definitions, references, imports) with tree-sitter.

Language modules (one per family) each expose::

    def extract(root: tree_sitter.Node, source: bytes, language: str)
        -> tuple[list[Definition], list[Reference], list[Import], list[Fact]]

and keep their patterns in ``queries/<name>.scm`` (package data).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from knowing_pr.model import Definition, Fact, Import, ParsedFile, Reference

__all__ = ["LANGUAGE_BY_EXTENSION", "SUPPORTED_LANGUAGES", "language_for_path", "parse_source"]

LANGUAGE_BY_EXTENSION = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".cs": "csharp",
    ".rb": "ruby",
}

#: language name -> module under knowing_pr.parse that extracts it
_MODULE_BY_LANGUAGE = {
    "python": "python",
    "javascript": "javascript",
    "typescript": "javascript",
    "tsx": "javascript",
    "go": "go",
    "rust": "rust",
    "java": "java",
    "csharp": "csharp",
    "ruby": "ruby",
}

SUPPORTED_LANGUAGES = tuple(sorted(_MODULE_BY_LANGUAGE))

Extractor = Callable[[object, bytes, str], tuple[list[Definition], list[Reference], list[Import], list[Fact]]]


def language_for_path(path: str) -> str | None:
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    if dot <= 0:
        return None
    return LANGUAGE_BY_EXTENSION.get(name[dot:].lower())


def _extractor(language: str) -> Extractor:
    module = importlib.import_module(f"knowing_pr.parse.{_MODULE_BY_LANGUAGE[language]}")
    extract: Extractor = module.extract
    return extract


def parse_source(path: str, language: str, source: bytes, *, test_cases: bool = False) -> ParsedFile:
    """Parse one file in this process (callers wanting isolation use ``parse.worker``); with
    ``test_cases``, its test cases too (``testcases.encode_test_cases``), from the same tree."""
    from knowing_pr.parse.treesitter import get_parser

    tree = get_parser(language).parse(source)
    definitions, references, imports, facts = _extractor(language)(tree.root_node, source, language)
    cases = None
    if test_cases:
        from knowing_pr.parse.testcases import encode_test_cases, test_cases_in

        cases = encode_test_cases(*test_cases_in(tree.root_node, path, language, source))
    line_count = source.count(b"\n") + (0 if source.endswith(b"\n") or not source else 1)
    return ParsedFile(
        path=path,
        language=language,
        definitions=definitions,
        references=references,
        imports=imports,
        line_count=line_count,
        facts=facts,
        test_cases=cases,
    )
