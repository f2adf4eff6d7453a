"""A change's base commit and diff → the definitions each changed file had there (old path →
definitions), for the files the change removed lines from: no other file can lose a definition or
change a signature.

The base blobs are parsed isolated, as the index parses (``knowing_pr.parse.fork``: a fork of
this process for a few files), and only their definitions travel back. A fresh ``pr`` asks the
git reader (``knowing_pr.git.served``), which started that fork itself right after working out
the diff (``prepare_in_reader``), while the command was still importing; any other caller, or a
reader that has nothing prepared for the question, starts the fork here.

This module imports no more than the reader needs (settings, the parser's fork), so the reader
reaches the parse early.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any

from knowing_pr.config import IndexParams, Settings, repository_settings
from knowing_pr.git.records import FileDiff
from knowing_pr.model import Definition

if TYPE_CHECKING:
    from knowing_pr.git import GitRepo

__all__ = ["prepare_in_reader", "start_base_definitions"]

#: per process: the definitions of blobs already parsed here, by (blob id, language, path); a
#: blob never changes, and a warm server sees the same bases again
_DEFINITIONS: dict[tuple[str, str, str], tuple[Definition, ...]] = {}
_DEFINITIONS_KEPT = 64

#: path → (blob id, language, path) of a changed file's version at the base
_Blobs = dict[str, tuple[str, str, str]]
_Pending = Callable[[], dict[str, tuple[Definition, ...]]]


def start_base_definitions(
    repo: GitRepo, settings: Settings, base: str | None, diffs: Sequence[FileDiff]
) -> Callable[[], dict[str, list[Definition]]]:
    """The definitions of each changed file at ``base`` (see the module docstring). Begun now:
    the returned call waits for them (nothing to wait for without a ``base``)."""
    wanted = _wanted_paths(diffs)
    if base is None or not wanted:
        return dict
    parsed = _from_reader(repo, base, wanted, settings.index)
    if parsed is None:
        parsed = _start_definitions(repo, settings.index, _base_blobs(repo, base, wanted, settings.index))

    def definitions() -> dict[str, list[Definition]]:
        return {path: list(found) for path, found in parsed().items()}

    return definitions


def prepare_in_reader(
    repo: GitRepo, base: str, diffs: Sequence[FileDiff], config: str | None
) -> dict[Hashable, Callable[[], Any]]:
    """The git reader's part (``knowing_pr.git.served``): with the repository's settings, as the
    command will load them, the fork that parses the base blobs, started now, under the question
    the command will ask (``_question``). Nothing when the command would not fork for them."""
    from knowing_pr.parse.fork import forkable  # with the parser's modules: loaded here only

    settings = repository_settings(repo.workdir, config)
    wanted = _wanted_paths(diffs)
    if not wanted:
        return {}
    blobs = _base_blobs(repo, base, wanted, settings.index)
    items = _items(repo, blobs)
    if not (settings.index.isolate_parser and forkable(items, settings.index)):
        return {}  # a pool of workers, or no isolation: the command decides, as it always does
    return {_question(base, wanted, settings.index): _start_definitions(repo, settings.index, blobs, items)}


def _wanted_paths(diffs: Sequence[FileDiff]) -> tuple[str, ...]:
    """The old paths of the files the change removed lines from, in a language we parse."""
    from knowing_pr.parse import language_for_path

    return tuple(d.old_path for d in diffs if d.old_path and d.removed and language_for_path(d.old_path))


def _question(base: str, wanted: tuple[str, ...], params: IndexParams) -> Hashable:
    """What the answer depends on besides git's objects: the base, the paths, the index settings
    (the size cap, isolation and its limits)."""
    return ("base_definitions", base, wanted, params)


def _from_reader(repo: GitRepo, base: str, wanted: tuple[str, ...], params: IndexParams) -> _Pending | None:
    """The reader's prepared answer, waited for when called; None when no reader prepared it.
    Should the reader fail on the way, the blobs are parsed here instead."""
    from knowing_pr.git.served import ServedRepo

    question = _question(base, wanted, params)
    if not isinstance(repo, ServedRepo) or not repo.has_prepared(question):
        return None

    def taken() -> dict[str, tuple[Definition, ...]]:
        answered, found = repo.take_prepared(question)
        if answered:
            return dict(found)
        return _start_definitions(repo, params, _base_blobs(repo, base, wanted, params))()

    return taken


def _base_blobs(repo: GitRepo, base: str, wanted: Sequence[str], params: IndexParams) -> _Blobs:
    from knowing_pr.parse import language_for_path

    return {
        path: (entry.blob_id, language_for_path(path) or "", path)
        for path, entry in repo.entries_at(base, wanted).items()
        if entry.size <= params.max_file_bytes
    }


def _items(repo: GitRepo, blobs: _Blobs, known: Sequence[str] = ()) -> list[tuple[str, str, bytes]]:
    return [
        (path, language, repo.read_blob(blob_id))
        for path, (blob_id, language, _) in blobs.items()
        if path not in known
    ]


def _start_definitions(
    repo: GitRepo, params: IndexParams, blobs: _Blobs, items: list[tuple[str, str, bytes]] | None = None
) -> _Pending:
    """Path → the definitions of its blob, parsed isolated as the index parses (a fork of this
    process for a few files, not a new interpreter, begun now) unless this process parsed that
    blob before; the returned call waits for them."""
    from knowing_pr.parse.fork import start_parse

    known = {path: _DEFINITIONS[key] for path, key in blobs.items() if key in _DEFINITIONS}
    if items is None:
        items = _items(repo, blobs, known=list(known))
    results = start_parse(items, params, definitions_only=True) if items else None

    def collect() -> dict[str, tuple[Definition, ...]]:
        found = dict(known)
        for path, parsed, _reason in results() if results is not None else ():
            if parsed is not None:
                found[path] = tuple(parsed.definitions)
                if len(_DEFINITIONS) >= _DEFINITIONS_KEPT:
                    del _DEFINITIONS[next(iter(_DEFINITIONS))]
                _DEFINITIONS[blobs[path]] = found[path]
        return {path: found[path] for path in blobs if path in found}

    return collect
