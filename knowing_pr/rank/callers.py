"""The change's own symbols (and the names it removed) + the graph + each file's references →
the lines that call them: ``CallSite`` records, the not-updated ones first.

A caller is the source of a ``calls`` or ``references`` edge into a changed symbol (a symbol is
never its own caller); where the graph has no edge, a reference by name still counts when the
name is the changed symbol's alone in the repository and the file imports it, or calls it on a
module it imports (``imported_call_sites``). Its call sites are its file's references with the
callee's name, or with a local alias of it (``f = attr.fields``; ``f(A)``), whose innermost
enclosing definition is the caller (at module level: none); when none is found (an
aliased import) the caller's first line stands for it, without its text (that line is not the
call: shown as the call, it would be a wrong line). A removed symbol has no node left: its
call sites are the references that still name it, unless a definition of that name exists
elsewhere at the head (it moved rather than went away).

Order: sites the change did not update although the callee's signature changed, then the other
sites outside the change's files, then those inside them; each group by the callee's order,
path and line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from knowing_pr.graph import shared_refs
from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.graph.nodes import FileRefs
from knowing_pr.model import CallSite, EdgeKind, Import, Node, Reference, RemovedSymbol, SymbolKind, node_id
from knowing_pr.rank.changes import in_file_name
from knowing_pr.store import Store

__all__ = [
    "CALLER_LINKS",
    "ChangeLines",
    "call_sites",
    "imported_call_sites",
    "incoming_edges",
    "removed_call_sites",
]

#: the edge types that make their source a caller of their target
CALLER_LINKS = frozenset({EdgeKind.CALLS, EdgeKind.REFERENCES})
_TEXT_CHARS = 100
_REMOVED_SITES_PER_NAME = 50


@dataclass(frozen=True)
class ChangeLines:
    """Which lines the change wrote, per head path (a path mapped to ``None``: all of them)."""

    added: Mapping[str, Sequence[tuple[int, int]] | None]

    def touched(self, path: str, line: int) -> bool:
        if path not in self.added:
            return False
        ranges = self.added[path]
        return ranges is None or any(start <= line <= end for start, end in ranges)

    def has(self, path: str) -> bool:
        return path in self.added


def incoming_edges(
    adjacency: Adjacency, targets: Collection[int], kinds: Collection[EdgeKind], min_confidence: float = 0.0
) -> list[tuple[int, int, int]]:
    """(source, target, kind) positions of every edge of ``kinds`` into ``targets`` whose
    confidence is at least ``min_confidence``."""
    if not targets or adjacency.edge_count == 0:
        return []
    indices = adjacency.indices.astype(np.int64)
    mask = adjacency.into(targets) & adjacency.of_kinds(kinds)
    if min_confidence > 0:
        mask &= adjacency.confidence >= np.float32(min_confidence)
    picked = np.flatnonzero(mask)
    sources = np.searchsorted(adjacency.indptr, picked, side="right") - 1
    return list(
        zip(sources.tolist(), indices[picked].tolist(), adjacency.kinds[picked].tolist(), strict=True)
    )


def _line_text(read_lines: Callable[[str], Sequence[str] | None], path: str, line: int) -> str:
    lines = read_lines(path)
    if lines is None or not 1 <= line <= len(lines):
        return ""
    text = " ".join(lines[line - 1].split())
    return text if len(text) <= _TEXT_CHARS else text[: _TEXT_CHARS - 1] + "…"


def _scope_of(node: Node) -> str | None:
    return None if node.kind == SymbolKind.MODULE else in_file_name(node)


#: the name a value expression ends with (``attr.fields`` → ``fields``, ``<Cart.add>`` → ``add``,
#: ``{m:f}`` → ``f``); none when it ends with a call or an element
_HINT_NAME = re.compile(r"([^\W\d][\w$]*)[>}]?$")


def _names(ref: Reference, name: str, aliases: Collection[str] = ()) -> bool:
    """Whether ``ref`` uses ``name``: by its written name, by a name its file imports it as
    (``aliases``: ``from m import f as g`` then ``g()``), or through a local alias whose value
    expression ends with it (``f = attr.fields`` then ``f(A)``)."""
    if ref.name == name or ref.name in aliases:
        return True
    found = _HINT_NAME.search(ref.hint) if ref.hint else None
    return found is not None and found.group(1) == name


def _import_aliases(imports: Sequence[Import], name: str) -> set[str]:
    """The local names a file imports ``name`` under, other than ``name`` itself."""
    return {alias for imp in imports for original, alias in imp.names if original == name and alias != name}


def _site_lines(refs: FileRefs | None, caller: Node, name: str, *, calls_only: bool = False) -> list[int]:
    """Lines of ``caller`` that name ``name``: references scoped to it, else any in its span
    (``calls_only``: calls of it only)."""
    if refs is None:
        return []
    aliases = _import_aliases(refs.imports, name)
    scope = _scope_of(caller)
    uses = [r for r in refs.references if _names(r, name, aliases) and (r.kind == "call" or not calls_only)]
    scoped = sorted({r.line for r in uses if r.scope == scope})
    if scoped:
        return scoped
    return sorted({r.line for r in uses if caller.start_line <= r.line <= caller.end_line})


def _display(node: Node) -> str:
    return "" if node.kind == SymbolKind.MODULE else in_file_name(node)


def call_sites(
    store: Store,
    adjacency: Adjacency,
    changed: Sequence[Node],
    *,
    lines: ChangeLines,
    signature_changed: Collection[str],
    read_lines: Callable[[str], Sequence[str] | None],
    min_confidence: float = 0.0,
) -> list[CallSite]:
    """Every call site of the changed symbols (``changed`` in the change's order), best first;
    edges resolved with less than ``min_confidence`` (a method name guessed on an unknown
    receiver: ``date.getDate()``) are left out."""
    position = {p: node for node in changed if (p := adjacency.index_of(node.id)) is not None}
    looked_for = {p: node.name for p, node in position.items()}
    edges = incoming_edges(adjacency, position, CALLER_LINKS, min_confidence)
    # ``Shop(…)``, ``new It(…)`` run the constructor: the calls of its class, not its type's mentions
    constructed, broken_classes = _constructed_classes(store, adjacency, changed, signature_changed)
    edges += incoming_edges(adjacency, constructed, (EdgeKind.CALLS,), min_confidence)
    for p, class_made in constructed.items():
        position[p], looked_for[p] = class_made.constructor, class_made.class_name
    pairs = sorted({(adjacency.node_ids[s], t) for s, t, _ in edges if s != t})
    callers = store.nodes_by_ids({source for source, _ in pairs})
    paths = sorted({node.path for node in callers.values()})
    refs = {path: shared_refs(path, data) for path, data in store.refs_for(paths).items()}
    rank = {node.id: index for index, node in enumerate(changed)}
    sites: dict[tuple[str, int, str], CallSite] = {}
    for source, target in pairs:
        caller, callee = callers.get(source), position[target]
        if caller is None or caller.id == callee.id:
            continue
        calls_only = target in constructed  # ``def use(other: Shop)`` names the class, calls nothing
        found = _site_lines(refs.get(caller.path), caller, looked_for[target], calls_only=calls_only)
        made = constructed.get(target)
        # a changed class whose changed constructor breaks callers: its calls break, not its mentions
        broken_calls = (
            _site_lines(refs.get(caller.path), caller, looked_for[target], calls_only=True)
            if callee.id in broken_classes
            else []
        )
        for line in found or [caller.start_line]:
            key = (caller.path, line, callee.id)
            if key in sites:
                continue
            if made is not None:
                breaks = made.breaking
            else:
                breaks = callee.id in signature_changed or line in broken_calls
            sites[key] = CallSite(
                path=caller.path,
                line=line,
                caller=_display(caller),
                caller_id=caller.id,
                callee=(made.label if made is not None else _display(callee)) or callee.name,
                callee_id=callee.id,
                text=_line_text(read_lines, caller.path, line) if found else "",
                in_change=lines.has(caller.path),
                not_updated=breaks and not lines.has(caller.path),
            )
    return sorted(
        sites.values(),
        key=lambda s: (not s.not_updated, s.in_change, rank.get(s.callee_id or "", 0), s.path, s.line),
    )


#: constructor names that are not their class's (Python, JavaScript/TypeScript, Ruby); Java, C#
#: and the like name a constructor after its class
_CONSTRUCTORS = frozenset({"__init__", "constructor", "initialize"})


@dataclass(frozen=True)
class _Constructed:
    """A class whose constructor the change touched, as the callee of the calls of the class."""

    constructor: Node
    class_name: str
    #: the callee a site names: the constructor, or the class when it has several (which overload a
    #: call takes is not known here)
    label: str
    #: a changed constructor of the class breaks callers (its call sites are "not updated")
    breaking: bool


def _constructed_classes(
    store: Store, adjacency: Adjacency, changed: Sequence[Node], signature_changed: Collection[str]
) -> tuple[dict[int, _Constructed], set[str]]:
    """The adjacency position of each class whose constructor the change touched (the class itself
    untouched) → what its calls are: a call of the class runs a constructor, and the graph's edge
    goes to the class (``Shop("a")``, ``new It(3)``); and the ids of the classes the change touched
    too whose changed constructor breaks callers (they are callees of their own already)."""
    changed_ids = {node.id for node in changed}
    broken: set[str] = set()
    found: dict[int, list[tuple[Node, str, str]]] = {}
    for node in changed:
        if node.kind != SymbolKind.METHOD:
            continue
        inside = in_file_name(node).split("(", 1)[0]  # an overload: ``C.C(int n)``; a path may hold ``(``
        if "." not in inside:
            continue
        class_path = inside.rsplit(".", 1)[0]
        class_name = class_path.rsplit(".", 1)[-1]
        if node.name not in _CONSTRUCTORS and node.name != class_name:
            continue
        owner = node.qualified_name[: len(node.qualified_name) - len(in_file_name(node))] + class_path
        for kind in (SymbolKind.CLASS, SymbolKind.STRUCT):
            class_id = node_id(node.path, owner, kind)
            position = adjacency.index_of(class_id)
            if position is not None and class_id in changed_ids:
                if node.id in signature_changed:
                    broken.add(class_id)
                break
            if position is not None:
                found.setdefault(position, []).append((node, class_name, class_path))
                break
    out: dict[int, _Constructed] = {}
    for position, constructors in found.items():
        constructor, class_name, class_path = constructors[0]
        overloads = [
            n
            for n in store.nodes_in_paths([constructor.path])
            if n.name == constructor.name
            and in_file_name(n).split("(", 1)[0] == f"{class_path}.{constructor.name}"
        ]
        label = class_path if len(overloads) > 1 else _display(constructor)
        breaking = any(c.id in signature_changed for c, _, _ in constructors)
        out[position] = _Constructed(constructor, class_name, label, breaking)
    return out, broken


_STUB_SUFFIXES = (".pyi", ".d.ts", ".d.mts", ".d.cts")
_CALLABLE_KINDS = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.CLASS, SymbolKind.STRUCT})


def _unique_names(store: Store, changed: Sequence[Node]) -> dict[str, list[Node]]:
    """The changed symbols whose name no other definition of the repository has (stubs and the
    change's own same-named symbols aside): a reference bound to that name can only mean them."""
    own: dict[str, list[Node]] = {}
    for node in changed:
        if node.kind in _CALLABLE_KINDS and len(node.name) >= 3 and not node.name.startswith("__"):
            own.setdefault(node.name, []).append(node)
    unique: dict[str, list[Node]] = {}
    for name, nodes in own.items():
        ids = {n.id for n in nodes}
        others = [
            n
            for n in store.nodes_named(name, limit=50)
            if n.name == name and n.id not in ids and not n.path.endswith(_STUB_SUFFIXES)
        ]
        if not others:
            unique[name] = [n for n in nodes if not n.path.endswith(_STUB_SUFFIXES)] or nodes
    return unique


def _bound_names(imports: Sequence[Import]) -> tuple[set[str], set[str]]:
    """(names a file imports by name — the original and its local alias —, aliases of whole
    modules it imports)."""
    names: set[str] = set()
    modules: set[str] = set()
    for imp in imports:
        for original, alias in imp.names:
            if original in ("*", "default"):
                modules.add(alias)
                if original == "default":
                    names.add(alias)
            else:
                names.update((original, alias))
    return names, modules


def imported_call_sites(
    store: Store,
    changed: Sequence[Node],
    *,
    known: Collection[tuple[str, int]],
    lines: ChangeLines,
    signature_changed: Collection[str],
    read_lines: Callable[[str], Sequence[str] | None],
) -> list[CallSite]:
    """Call sites the graph has no edge for, found by name: a reference to a changed symbol's name
    that no other definition has, in a file that imports that name (``from m import f``, a default
    import) or calls it on an imported module (``attr.fields(...)``, ``utils.merge(...)``, or a
    name it imports that names the symbol's file: Rust's ``use crate::common;`` then
    ``common::f()``, ``f`` in ``common.rs``)."""
    unique = _unique_names(store, changed)
    if not unique:
        return []
    paths = sorted(store.paths_referencing(unique))
    nodes_by_path: dict[str, list[Node]] = {}
    for node in store.nodes_in_paths(paths):
        nodes_by_path.setdefault(node.path, []).append(node)
    found: list[CallSite] = []
    for path, data in sorted(store.refs_for(paths).items()):
        refs = shared_refs(path, data)
        names, modules = _bound_names(refs.imports)
        for ref in refs.references:
            targets = unique.get(ref.name)
            if not targets or (path, ref.line) in known:
                continue
            head = re.split(r"\.|::", ref.qualifier, maxsplit=1)[0] if ref.qualifier else ""
            its_file = head in names and any(head in _file_names(t.path) for t in targets)
            if not ((not head and ref.name in names) or head in modules or its_file):
                continue
            holder = _holder(nodes_by_path.get(path, []), ref.line)
            target = targets[0]
            if holder is not None and holder.id in {t.id for t in targets}:
                continue  # a symbol calling itself
            found.append(
                CallSite(
                    path=path,
                    line=ref.line,
                    caller=_display(holder) if holder else "",
                    caller_id=holder.id if holder else None,
                    callee=_display(target) or target.name,
                    callee_id=target.id,
                    text=_line_text(read_lines, path, ref.line),
                    in_change=lines.has(path),
                    not_updated=target.id in signature_changed and not lines.has(path),
                )
            )
    unique_sites = {(s.path, s.line, s.callee_id): s for s in found}
    return list(unique_sites.values())


def _holder(nodes: Sequence[Node], line: int) -> Node | None:
    """The innermost node holding ``line`` (its module when no definition does)."""
    holders = [n for n in nodes if n.start_line <= line <= n.end_line]
    return min(holders, key=lambda n: (n.end_line - n.start_line, n.id)) if holders else None


#: import heads that always mean this repository's own code (Rust)
_OWN_HEADS = frozenset({"crate", "self", "super"})


def _imported_elsewhere(imports: Sequence[Import], name: str, own_names: Collection[str]) -> bool:
    """Whether a file binds ``name`` by imports only from modules outside the repository: none of
    the names such a module may stand for is a file or folder of the repository (``own_names``:
    ``java.lang.Math``, not ``mylib`` beside ``src/mylib/``, ``@scope/lib`` beside ``packages/lib``);
    a relative spec (``.``, ``./x``) or Rust's ``crate``/``self``/``super`` is the repository's."""
    modules = [imp.module for imp in imports for _, alias in imp.names if alias == name]
    return bool(modules) and all(_outside(module, own_names) for module in modules)


def _outside(module: str, own_names: Collection[str]) -> bool:
    if module.startswith(".") or re.split(r"::|\.|/", module, maxsplit=1)[0] in _OWN_HEADS:
        return False
    if "/" in module:  # a path: its last part, with or without an extension (``pkg/x.js``)
        last = module.rstrip("/").rsplit("/", 1)[-1]
        tails = {last, last.split(".", 1)[0]}
    else:  # a dotted or ``::`` name: its last segment (``java.lang.Math`` → ``Math``)
        tails = {re.split(r"::|\.", module)[-1]}
    tails.discard("")
    return bool(tails) and not tails.intersection(own_names)


def _own_names(paths: Iterable[str]) -> set[str]:
    """Every file stem and folder name of ``paths`` (``src/mylib/core.py`` → ``core``, ``src``, ``mylib``)."""
    names: set[str] = set()
    for path in paths:
        *folders, base = path.split("/")
        names.update(folders)
        names.add(base.split(".", 1)[0])
    return names


def _file_names(path: str) -> tuple[str, str]:
    """A file's stem and its folder's name (``pkg/core.py`` → ``core``, ``pkg``)."""
    folder, _, base = path.rpartition("/")
    return base.split(".", 1)[0], folder.rpartition("/")[2]


def _defined_at_head(store: Store, name: str) -> bool:
    return any(node.name == name for node in store.nodes_named(name, limit=50))


def removed_call_sites(
    store: Store,
    removed: Sequence[RemovedSymbol],
    *,
    lines: ChangeLines,
    read_lines: Callable[[str], Sequence[str] | None],
) -> list[CallSite]:
    """Lines that still name a symbol the change removed (and defined nowhere else now), unless
    their file imports that name from outside the repository (gson's ``import static
    java.lang.Math.toIntExact`` after a private ``toIntExact`` went)."""
    names = {r.name for r in removed if r.name and not _defined_at_head(store, r.name)}
    if not names:
        return []
    # the removed names' own files count: a module the change deleted is the repository's too
    own_names = _own_names([*store.file_paths(), *(r.path for r in removed)])
    paths = sorted(store.paths_referencing(names))
    nodes_by_path: dict[str, list[Node]] = {}
    for node in store.nodes_in_paths(paths):
        nodes_by_path.setdefault(node.path, []).append(node)
    found: dict[str, list[CallSite]] = {name: [] for name in names}
    for path, data in sorted(store.refs_for(paths).items()):
        refs = shared_refs(path, data)
        elsewhere = {name for name in names if _imported_elsewhere(refs.imports, name, own_names)}
        for ref in refs.references:
            if (
                ref.name not in names
                or ref.name in elsewhere
                or len(found[ref.name]) >= _REMOVED_SITES_PER_NAME
            ):
                continue
            holder = _holder(nodes_by_path.get(path, []), ref.line)
            found[ref.name].append(
                CallSite(
                    path=path,
                    line=ref.line,
                    caller=_display(holder) if holder else "",
                    caller_id=holder.id if holder else None,
                    callee=ref.name,
                    callee_id=None,
                    text=_line_text(read_lines, path, ref.line),
                    in_change=lines.has(path),
                    not_updated=not lines.has(path),
                    removed=True,
                )
            )
    unique = {(s.path, s.line, s.callee): s for sites in found.values() for s in sites}
    return sorted(unique.values(), key=lambda s: (not s.not_updated, s.in_change, s.callee, s.path, s.line))
