"""Every node of the graph, indexed for resolution: eager (full index) or lazy (incremental).

One module a little over the style's ~400 lines: the table, its eager and lazy indexes and
the lookups resolution asks of them change together.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, Protocol

from knowing_pr.graph.nodes import FileRefs, decode_refs
from knowing_pr.graph.packages import NO_PACKAGES, Packages
from knowing_pr.graph.paths import file_stem, module_name
from knowing_pr.model import TYPE_KINDS, SymbolKind, node_id

__all__ = ["RefsSource", "Row", "Sym", "SymbolSource", "SymbolTable", "same_symbol"]


@dataclass(slots=True)
class Sym:
    id: str
    path: str
    name: str
    qualified_name: str
    kind: str
    infile: str  # qualified name inside its file ("" for the module node)


Row = tuple[str, str, str, str, str]  # (id, path, name, qualified_name, kind)


class SymbolSource(Protocol):
    """Where a lazy ``SymbolTable`` reads the symbols and files it was not given (the store).

    The path queries answer for indexed files only, each list in ascending order."""

    def symbol_rows_named(self, names: Iterable[str]) -> list[Row]: ...

    def symbol_rows_in(self, paths: Iterable[str]) -> list[Row]: ...

    def symbol_rows_with_ids(self, ids: Iterable[str]) -> list[Row]: ...

    def first_symbol_rows_named(
        self, name: str, kinds: Sequence[str], count: int, skipped_paths: AbstractSet[str]
    ) -> list[Row]: ...

    def indexed_among(self, paths: Iterable[str]) -> set[str]: ...

    def indexed_paths_in_dir(self, directory: str) -> list[str]: ...

    def indexed_paths_with_stem(self, stem: str) -> list[str]: ...

    def indexed_paths_with_module_suffix(self, dotted: str) -> list[str]: ...

    def dirs_named(self, name: str) -> list[str]: ...


class RefsSource(Protocol):
    """Where a symbol table reads the stored references (and facts) of files not given to it."""

    def refs_for(self, paths: Iterable[str]) -> dict[str, str]: ...


def same_symbol(a: Sym | None, b: Sym | None) -> bool:
    return a is not None and b is not None and a.id == b.id


def _by_id(sym: Sym) -> str:
    return sym.id


def _sym(row: Row) -> Sym:
    node_id_, path, name, qn, kind = row
    infile = "" if kind == SymbolKind.MODULE else qn[len(module_name(path)) + 1 :]
    return Sym(node_id_, path, name, qn, kind, infile)


class _LazyIndex(dict[Any, Any]):
    """A dict that fills missing keys from ``fetch`` (``None``/``[]`` results are cached too)."""

    def __init__(self, fetch: Callable[[Any], Any]) -> None:
        super().__init__()
        self._fetch = fetch

    def __missing__(self, key: Any) -> Any:
        value = self._fetch(key)
        self[key] = value
        return value

    def get(self, key: Any, default: Any = None) -> Any:
        value = self[key]
        return default if value is None else value


class _LazyModules(Mapping[str, Sym]):
    """path → module symbol of every indexed file, asked of the store one path at a time:
    ``added`` files are present, ``hidden`` ones (changed or removed) only if re-added."""

    def __init__(self, source: SymbolSource, added: dict[str, Sym], hidden: frozenset[str]) -> None:
        self._source = source
        self._known: dict[str, Sym | None] = dict(added)
        self._hidden = hidden

    def _lookup(self, path: str) -> Sym | None:
        if path in self._known:
            return self._known[path]
        found = None
        if path not in self._hidden and self._source.indexed_among([path]):
            found = _module_sym(path)
        self._known[path] = found
        return found

    def __getitem__(self, path: str) -> Sym:
        found = self._lookup(path)
        if found is None:
            raise KeyError(path)
        return found

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self._lookup(path) is not None

    def __iter__(self) -> Iterator[str]:
        raise TypeError("a lazy symbol table does not list every module")

    def __len__(self) -> int:
        raise TypeError("a lazy symbol table does not count every module")

    def prefetch(self, paths: Iterable[str]) -> None:
        """Look many paths up in one query."""
        wanted = {p for p in paths if p not in self._known}
        present = self._source.indexed_among(wanted - self._hidden)
        for path in wanted:
            self._known[path] = _module_sym(path) if path in present else None


def _file_module_rank(sym: Sym) -> tuple[bool, int, str]:
    """Orders a file's module symbols so that the file's own comes first: a Rust ``mod shells
    { … }`` or a Ruby ``module`` is a module symbol too, and whichever came last used to stand
    for the file (the store's answer, the file's own, differed: incremental ≠ full)."""
    return (sym.qualified_name != module_name(sym.path), len(sym.qualified_name), sym.id)


def _module_sym(path: str) -> Sym:
    name = module_name(path)
    return _sym((node_id(path, name, SymbolKind.MODULE), path, file_stem(path), name, SymbolKind.MODULE))


class SymbolTable:
    """Every node of the graph, indexed for resolution.

    Eager (a full index: all rows given) or lazy (an incremental one: ``rows`` are the
    changed files' new symbols, ``source`` answers for the rest on demand, ``hidden_paths``
    are files whose stored symbols are outdated, ``module_paths`` every indexed file).
    """

    def __init__(
        self,
        rows: Iterable[Row],
        *,
        source: SymbolSource | None = None,
        module_paths: Iterable[str] | None = None,
        hidden_paths: frozenset[str] = frozenset(),
    ) -> None:
        self._source = source
        self._hidden = hidden_paths
        #: the commit's ``package.json`` manifests (JS/TS directory imports); set by the indexer
        self.packages: Packages = NO_PACKAGES
        self._given_refs: Mapping[str, FileRefs] = {}
        self._refs_source: RefsSource | None = None
        self._stored_refs: dict[str, FileRefs | None] = {}
        self._members: dict[str, list[Sym]] = {}
        self._children_by_path: dict[str, dict[str, list[Sym]]] = {}
        self._names_by_path: dict[str, dict[str, list[Sym]]] = {}
        self._names_by_dir: dict[str, dict[str, list[Sym]]] = {}
        self._two_named: dict[tuple[str, frozenset[str]], list[Sym]] = {}
        given = [_sym(r) for r in rows]
        self._given_by_name: dict[str, list[Sym]] = {}
        self._given_by_path: dict[str, list[Sym]] = {}
        given_modules: dict[str, Sym] = {}
        for sym in given:
            self._given_by_path.setdefault(sym.path, []).append(sym)
            if sym.kind == SymbolKind.MODULE:
                current = given_modules.get(sym.path)
                if current is None or _file_module_rank(sym) < _file_module_rank(current):
                    given_modules[sym.path] = sym
            else:
                self._given_by_name.setdefault(sym.name, []).append(sym)
        for group in (*self._given_by_name.values(), *self._given_by_path.values()):
            group.sort(key=_by_id)
        self.by_infile: dict[tuple[str, str], Sym] = _LazyIndex(self._fetch_infile)
        if source is None:
            self.by_name: dict[str, list[Sym]] = self._given_by_name
            self.by_path: dict[str, list[Sym]] = self._given_by_path
            self.by_id: dict[str, Sym] = {s.id: s for s in given}
            self.module_of: Mapping[str, Sym] = given_modules
            self._index_paths_eagerly(given_modules)
            return
        self.by_name = _LazyIndex(self._fetch_named)
        self.by_path = _LazyIndex(self._fetch_path)
        self.by_id = _LazyIndex(self._fetch_id)
        for sym in given:
            self.by_id[sym.id] = sym
        # the changed files' modules, present whether or not the store knows them yet
        self._added_paths = sorted(set(module_paths or ()) | set(given_modules))
        added = {p: given_modules.get(p) or _module_sym(p) for p in self._added_paths}
        self.module_of = self._lazy_modules = _LazyModules(source, added, hidden_paths)
        self.paths_by_dir: dict[str, list[str]] = _LazyIndex(self._fetch_paths_in_dir)
        self.paths_by_module_suffix: dict[str, list[str]] = _LazyIndex(self._fetch_paths_by_module_suffix)
        self.paths_by_stem: dict[str, list[str]] = _LazyIndex(self._fetch_paths_by_stem)
        self.dirs_by_suffix: dict[str, list[str]] = _LazyIndex(self._fetch_dirs_by_suffix)

    def _index_paths_eagerly(self, modules: Mapping[str, Sym]) -> None:
        self.paths_by_dir = {}
        self.paths_by_module_suffix = {}
        self.paths_by_stem = {}
        for path in sorted(modules):
            self.paths_by_dir.setdefault(posixpath.dirname(path), []).append(path)
            parts = module_name(path).split(".")
            for i in range(len(parts)):
                self.paths_by_module_suffix.setdefault(".".join(parts[i:]), []).append(path)
            self.paths_by_stem.setdefault(file_stem(path), []).append(path)
        self.dirs_by_suffix = {}
        for d in sorted(self.paths_by_dir):
            parts = d.split("/") if d else []
            for i in range(len(parts)):
                self.dirs_by_suffix.setdefault("/".join(parts[i:]), []).append(d)

    # -- the lazy path indexes: the store's indexed files, minus the hidden ones, plus the added

    def _present_paths(self, stored: Iterable[str], added: Callable[[str], bool]) -> list[str]:
        paths = {p for p in stored if p not in self._hidden}
        paths.update(p for p in self._added_paths if added(p))
        return sorted(paths)

    def _fetch_paths_in_dir(self, directory: str) -> list[str]:
        assert self._source is not None
        stored = self._source.indexed_paths_in_dir(directory)
        return self._present_paths(stored, lambda p: posixpath.dirname(p) == directory)

    def _fetch_paths_by_stem(self, stem: str) -> list[str]:
        assert self._source is not None
        stored = self._source.indexed_paths_with_stem(stem)
        return self._present_paths(stored, lambda p: file_stem(p) == stem)

    def _fetch_paths_by_module_suffix(self, dotted: str) -> list[str]:
        assert self._source is not None

        def ends_so(path: str) -> bool:
            name = module_name(path)
            return name == dotted or name.endswith("." + dotted)

        return self._present_paths(self._source.indexed_paths_with_module_suffix(dotted), ends_so)

    def _fetch_dirs_by_suffix(self, suffix: str) -> list[str]:
        """The directories holding an indexed file that are ``suffix`` or end in ``/suffix``."""
        assert self._source is not None
        if not suffix:
            return []

        def ends_so(d: str) -> bool:
            return d == suffix or d.endswith("/" + suffix)

        # the stored directory list is the previous commit's: added files may bring new ones,
        # and a directory whose files all went is dropped by the emptiness check
        candidates = {d for d in self._source.dirs_named(suffix.rpartition("/")[2]) if ends_so(d)}
        candidates.update(posixpath.dirname(p) for p in self._added_paths if ends_so(posixpath.dirname(p)))
        return [d for d in sorted(candidates) if self.paths_by_dir.get(d)]

    def use_refs(self, refs: Mapping[str, FileRefs], stored: RefsSource | None = None) -> None:
        """The references and facts of this run's files, and where the others' are stored (an
        incremental run); the resolver reads other files' facts (``refs_of``) through these."""
        self._given_refs = refs
        self._refs_source = stored

    def refs_of(self, path: str) -> FileRefs | None:
        """The references and facts of an indexed file (``None``: not indexed, or unknown)."""
        given = self._given_refs.get(path)
        if given is not None:
            return given
        if path in self._stored_refs:
            return self._stored_refs[path]
        found = None
        if self._refs_source is not None and path not in self._hidden and path in self.module_of:
            text = self._refs_source.refs_for([path]).get(path)
            found = None if text is None else decode_refs(path, text)
        self._stored_refs[path] = found
        return found

    def prefetch_modules(self, paths: Iterable[str]) -> None:
        """Ask for many files' presence at once (a lazy table would otherwise ask one by one)."""
        if self._source is not None:
            self._lazy_modules.prefetch(paths)

    def two_named(self, name: str, kinds: frozenset[str]) -> list[Sym]:
        """Up to two symbols called ``name`` of one of ``kinds`` (which two is unspecified):
        enough to tell none, exactly one and several apart without listing a name that
        thousands of files define."""
        key = (name, kinds)
        cached = self._two_named.get(key)
        if cached is not None:
            return cached
        if self._source is None:
            found = []
            for sym in self.by_name.get(name, []):
                if sym.kind in kinds:
                    found.append(sym)
                    if len(found) == 2:
                        break
        else:
            found = [s for s in self._given_by_name.get(name, []) if s.kind in kinds][:2]
            if len(found) < 2:
                rows = self._source.first_symbol_rows_named(name, sorted(kinds), 2 - len(found), self._hidden)
                found.extend(_sym(r) for r in rows)
        self._two_named[key] = found
        return found

    def _fetch_named(self, name: str) -> list[Sym]:
        assert self._source is not None
        out = list(self._given_by_name.get(name, []))
        out.extend(
            _sym(r)
            for r in self._source.symbol_rows_named([name])
            if r[1] not in self._hidden and r[4] != SymbolKind.MODULE
        )
        return sorted(out, key=_by_id)

    def _fetch_path(self, path: str) -> list[Sym]:
        assert self._source is not None
        if path in self._given_by_path or path in self._hidden:
            return list(self._given_by_path.get(path, []))
        return sorted((_sym(r) for r in self._source.symbol_rows_in([path])), key=_by_id)

    def _fetch_id(self, node_id_: str) -> Sym | None:
        assert self._source is not None
        rows = [r for r in self._source.symbol_rows_with_ids([node_id_]) if r[1] not in self._hidden]
        if not rows:
            return None
        # the same object as in ``by_path``: callers compare symbols, and lazy and eager
        # tables must answer alike
        return next((s for s in self.by_path.get(rows[0][1], []) if s.id == node_id_), None)

    def _fetch_infile(self, key: tuple[str, str]) -> Sym | None:
        path, infile = key
        matches = [
            s for s in self.by_path.get(path, []) if s.infile == infile and s.kind != SymbolKind.MODULE
        ]
        # a class beats a same-named function or constant (``C.f``'s parent is the class)
        matches.sort(key=lambda s: (s.kind not in TYPE_KINDS, s.id))
        return matches[0] if matches else None

    def _parent_of(self, path: str, sym: Sym) -> Sym | None:
        if "." in sym.infile:
            parent_infile = sym.infile.rsplit(".", 1)[0].split("#", 1)[0]
            found = self.by_infile.get((path, parent_infile))
            if found is not None:
                return found
            # Go methods and Rust impls name a receiver type that may live in another file
            # of the same package (directory).
            if "." not in parent_infile:
                types = [
                    s
                    for s in self.named_in_dir(posixpath.dirname(path), parent_infile)
                    if s.kind in TYPE_KINDS and "." not in s.infile
                ]
                if len(types) == 1:
                    return types[0]
            return None
        return self.module_of.get(path)

    def parent_of(self, sym: Sym) -> Sym | None:
        return self._parent_of(sym.path, sym)

    def _children_in(self, path: str) -> dict[str, list[Sym]]:
        """The file's symbols grouped by their in-file parent name (one pass, cached)."""
        cached = self._children_by_path.get(path)
        if cached is None:
            cached = {}
            for sym in self.by_path.get(path, []):
                if "." in sym.infile:
                    parent_infile = sym.infile.rsplit(".", 1)[0].split("#", 1)[0]
                    cached.setdefault(parent_infile, []).append(sym)
            self._children_by_path[path] = cached
        return cached

    def named_in_path(self, path: str, name: str) -> list[Sym]:
        """The file's symbols called ``name`` (an index per file, built on first use)."""
        index = self._names_by_path.get(path)
        if index is None:
            index = {}
            for sym in self.by_path.get(path, []):
                index.setdefault(sym.name, []).append(sym)
            self._names_by_path[path] = index
        return index.get(name, [])

    def named_in_dir(self, directory: str, name: str) -> list[Sym]:
        """The package's (directory's) symbols called ``name``."""
        index = self._names_by_dir.get(directory)
        if index is None:
            index = {}
            for path in self.paths_by_dir.get(directory, []):
                for sym in self.by_path.get(path, []):
                    index.setdefault(sym.name, []).append(sym)
            self._names_by_dir[directory] = index
        return index.get(name, [])

    def members(self, owner_id: str) -> list[Sym]:
        """The symbols whose parent is ``owner_id`` (its file, plus same-package files for
        Go/Rust receivers), computed on demand and cached."""
        cached = self._members.get(owner_id)
        if cached is not None:
            return cached
        owner = self.by_id.get(owner_id)
        found: list[Sym] = []
        if owner is not None and owner.infile:
            for sym in self._children_in(owner.path).get(owner.infile, []):
                if same_symbol(self._parent_of(owner.path, sym), owner):
                    found.append(sym)
            if owner.kind in TYPE_KINDS and "." not in owner.infile:
                for path in self.paths_by_dir.get(posixpath.dirname(owner.path), []):
                    if path == owner.path:
                        continue
                    for sym in self._children_in(path).get(owner.infile, []):
                        if same_symbol(self._parent_of(path, sym), owner):
                            found.append(sym)
        self._members[owner_id] = found
        return found
