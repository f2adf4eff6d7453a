"""The files to parse → their ``ParsedFile`` (or the reason they failed), in isolated parser
processes: a fork of this process for a small batch (a hook's typical commit: the grammars are
already loaded), a pool of worker processes otherwise, inline only when isolation is off. The
files that may hold test cases (``keeps_test_cases``) come back with them, for the store to keep:
the tests-to-run of a ``pr`` read them instead of parsing those files again."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable

from knowing_pr.config import Settings
from knowing_pr.graph.paths import is_test_path
from knowing_pr.model import ParsedFile
from knowing_pr.parse.testcases import TEST_CASE_LANGUAGES

__all__ = ["Progress", "keeps_test_cases", "parse_items"]

Progress = Callable[[int, int], None]


def parse_items(
    items: list[tuple[str, str, bytes]], settings: Settings, progress: Progress | None
) -> Iterable[tuple[str, ParsedFile | None, str | None]]:
    from knowing_pr.parse import fork, worker

    params = settings.index
    cases = frozenset(path for path, language, _ in items if keeps_test_cases(path, language))
    if params.isolate_parser and fork.forkable(items, params):
        # a hook's typical update: fork this process (grammars loaded) instead of a new interpreter
        results = fork.parse_files_forked(
            items, timeout_s=params.parse_timeout_s, memory_mb=params.parse_memory_mb, test_cases=cases
        )
    elif params.isolate_parser:
        results = worker.parse_files(
            items,
            timeout_s=params.parse_timeout_s,
            memory_mb=params.parse_memory_mb,
            workers=params.workers,
            test_cases=cases,
        )
    else:
        results = worker.parse_files_inline(items, test_cases=cases)
    for done, result in enumerate(results, 1):
        if progress is not None:
            progress(done, len(items))
        yield result


def keeps_test_cases(path: str, language: str) -> bool:
    """Whether the index keeps the file's test cases: a file the tests-to-run may look for cases
    in (``rank.runnable``: a test file, a ``conftest.py``, Rust source, where unit tests live),
    in a language whose cases are found."""
    if language not in TEST_CASE_LANGUAGES:
        return False
    return language == "rust" or is_test_path(path) or posixpath.basename(path) == "conftest.py"
