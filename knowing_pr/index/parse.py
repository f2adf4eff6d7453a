"""The files to parse → their ``ParsedFile`` (or the reason they failed), in isolated parser
processes: a fork of this process for a small batch (a hook's typical commit: the grammars are
already loaded), a pool of worker processes otherwise, inline only when isolation is off. The
files that may hold test cases (``keeps_test_cases``) come back with them, for the store to keep:
the tests-to-run of a ``pr`` read them instead of parsing those files again. An incremental run
takes the results kept for file versions it parsed before (``parsecache.py``)."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable

from knowing_pr.config import Settings
from knowing_pr.graph.paths import is_test_path
from knowing_pr.index.parsecache import ParseCache
from knowing_pr.model import ParsedFile
from knowing_pr.parse.testcases import TEST_CASE_LANGUAGES

__all__ = ["Progress", "keeps_test_cases", "parse_items"]

#: ``progress(step, done, total)``: a long step's count (``total`` 0: a step without one);
#: ``index/progress.py`` shows it
Progress = Callable[[str, int, int], None]


def parse_items(
    items: list[tuple[str, str, bytes]],
    settings: Settings,
    progress: Progress | None,
    cache: ParseCache | None = None,
) -> Iterable[tuple[str, ParsedFile | None, str | None]]:
    """Each item's parse result (or the reason it failed); a result ``cache`` kept for the same
    file version is taken instead of a parse, and each new result is collected into it."""
    from knowing_pr.parse.fork import start_parse

    kept = cache.take(items) if cache is not None else {}
    for done, path in enumerate(sorted(kept), 1):
        if progress is not None:
            progress("parse", done, len(items))
        yield path, kept[path], None
    rest = [item for item in items if item[0] not in kept]
    cases = frozenset(path for path, language, _ in rest if keeps_test_cases(path, language))
    # a hook's typical update is parsed in a fork of this process (grammars loaded), a bigger
    # batch by the pool of worker processes
    results = start_parse(rest, settings.index, test_cases=cases)() if rest else ()
    for done, result in enumerate(results, len(kept) + 1):
        if progress is not None:
            progress("parse", done, len(items))
        if cache is not None and result[1] is not None:
            cache.collect(result[0], result[1])
        yield result


def keeps_test_cases(path: str, language: str) -> bool:
    """Whether the index keeps the file's test cases: a file the tests-to-run may look for cases
    in (``rank.runnable``: a test file, a ``conftest.py``, Rust source, where unit tests live),
    in a language whose cases are found."""
    if language not in TEST_CASE_LANGUAGES:
        return False
    return language == "rust" or is_test_path(path) or posixpath.basename(path) == "conftest.py"
