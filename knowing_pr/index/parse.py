"""The files to parse → their ``ParsedFile`` (or the reason they failed), in isolated parser
processes: a fork of this process for a small batch (a hook's typical commit: the grammars are
already loaded), a pool of worker processes otherwise, inline only when isolation is off."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from knowing_pr.config import Settings
from knowing_pr.model import ParsedFile

__all__ = ["Progress", "parse_items"]

Progress = Callable[[int, int], None]


def parse_items(
    items: list[tuple[str, str, bytes]], settings: Settings, progress: Progress | None
) -> Iterable[tuple[str, ParsedFile | None, str | None]]:
    from knowing_pr.parse import fork, worker

    params = settings.index
    if params.isolate_parser and fork.forkable(items, params):
        # a hook's typical update: fork this process (grammars loaded) instead of a new interpreter
        results = fork.parse_files_forked(
            items, timeout_s=params.parse_timeout_s, memory_mb=params.parse_memory_mb
        )
    elif params.isolate_parser:
        results = worker.parse_files(
            items, timeout_s=params.parse_timeout_s, memory_mb=params.parse_memory_mb, workers=params.workers
        )
    else:
        results = worker.parse_files_inline(items)
    for done, result in enumerate(results, 1):
        if progress is not None:
            progress(done, len(items))
        yield result
