"""A file's references and facts → the names its resolution reads, and how its facts lead from one
name to others (what lets an incremental index re-resolve exactly the files whose answers can
change).

Resolving a file reads symbols by name, and facts by key: a module variable, a class attribute
or an import by the name it binds, a class's bases by the class's name, a function's return by
the function's name, a module's star imports by the module's own name. A fact's value names
more names (``s = attrs`` leads from ``s`` to ``attrs``). So:

- ``dependency_names``: every name a file's resolution can read first (its references, the
  names in its value expressions and facts);
- ``reverse_entries``: for each fact, ``dep:<name read> <key>`` — stored beside the names, so
  that a change to ``attrs`` can be followed back to ``s``;
- ``changed_keys``: the keys of the facts that differ between two versions of a file;
- ``closure``: touched names plus every key whose fact reads one of them, to a fixed point.
  A file must be resolved again when one of its names is in the closure.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knowing_pr.graph.nodes import FileRefs

__all__ = [
    "DEPENDS_PREFIX",
    "changed_keys",
    "closure",
    "dependency_names",
    "fact_entries",
    "module_key",
    "reverse_entries",
]

#: prefix of the stored entries ``dep:<name read> <key>``
DEPENDS_PREFIX = "dep:"
_WORD = re.compile(r"[^\W\d]\w*")


def value_names(text: str) -> set[str]:
    """The identifiers a value expression (or several joined by ``|``) mentions."""
    return set(_WORD.findall(text))


def module_key(path: str) -> str:
    """The name a module is imported by: its stem, or its directory's for ``__init__``."""
    name = posixpath.basename(path)
    stem = name.split(".", 1)[0]
    if stem == "__init__":
        return posixpath.basename(posixpath.dirname(path)) or stem
    return stem


def fact_entries(refs: FileRefs) -> set[tuple[str, str]]:
    """(key, what it holds) for every fact other files' resolution can read in this file."""
    entries: set[tuple[str, str]] = set()
    for fact in refs.facts:
        if fact.kind == "local_imports":
            continue
        key = (fact.name if fact.kind == "bind" else fact.scope).rsplit(".", 1)[-1]
        entries.add((key, f"{fact.kind}:{fact.scope}:" + "|".join(fact.values)))
    for ref in refs.references:
        if ref.kind == "extends" and ref.scope:
            key = ref.scope.rsplit(".", 1)[-1]
            entries.add((key, f"base:{ref.scope}:{ref.hint or ref.qualifier + '.' + ref.name}"))
    local = {line for f in refs.facts if f.kind == "local_imports" for line in f.values}
    for imp in refs.imports:
        if str(imp.line) in local:
            continue
        tail = _spec_tail(refs.path, imp.module)
        for imported, alias in imp.names or (("*", imp.module),):
            key = module_key(refs.path) if alias == "*" else alias.split(".", 1)[0]
            entries.add((key, f"import:{tail}:{imported}"))
    return entries


def _spec_tail(path: str, spec: str) -> str:
    """The last name of a module spec (``pkg.sub`` → ``sub``; ``.`` → the package's own)."""
    words: list[str] = _WORD.findall(spec)
    if words:
        return words[-1]
    return posixpath.basename(posixpath.dirname(path))


def reverse_entries(refs: FileRefs) -> set[str]:
    """``dep:<name read> <key>`` for every fact entry of the file."""
    out: set[str] = set()
    for key, held in fact_entries(refs):
        for name in value_names(held.split(":", 2)[2]) | _spec_names(held):
            if name != key:
                out.add(f"{DEPENDS_PREFIX}{name} {key}")
    return out


def _spec_names(held: str) -> set[str]:
    kind, spec, what = held.split(":", 2)
    if kind != "import":
        return set()
    return value_names(spec) | value_names(what)


def dependency_names(refs: FileRefs) -> set[str]:
    """The names the file's own expressions and facts read (its references' names aside)."""
    names: set[str] = set()
    for ref in refs.references:
        if ref.hint:
            names |= value_names(ref.hint)
    for fact in refs.facts:
        if fact.kind != "local_imports":
            names |= value_names("|".join(fact.values))
    return names


def changed_keys(old: FileRefs | None, new: FileRefs | None) -> set[str]:
    """The keys of the facts one version of a file has and the other has not (or holds
    differently)."""
    before = fact_entries(old) if old is not None else set()
    after = fact_entries(new) if new is not None else set()
    return {key for key, _ in before ^ after}


def closure(touched: Iterable[str], keys_reading: Callable[[set[str]], set[str]]) -> set[str]:
    """``touched`` plus every key whose fact reads one of the names found so far.

    ``keys_reading(names)``: the keys of the stored ``dep:`` entries that read those names."""
    found = set(touched)
    frontier = set(found)
    while frontier:
        frontier = keys_reading(frontier) - found
        found |= frontier
    return found
