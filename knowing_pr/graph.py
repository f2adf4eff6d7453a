"""Parsed files → nodes; references + a symbol table → resolved, typed, confidence-rated edges.

Resolution order for a name (issue 2, DESIGN.md): import-resolved beats the enclosing
class, beats the same file, beats the same package (directory), beats a globally unique
name; generic names (``get``, ``run``, …) and ambiguous names are never guessed.

Edges are grouped by *origin*: the file whose references produced them. An incremental
index re-resolves only the origins whose answers can change (``affected_paths``), which is
what keeps it equal to a full index.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from knowing_pr.config import IndexParams
from knowing_pr.model import (
    TYPE_KINDS,
    Edge,
    EdgeKind,
    Import,
    Node,
    ParsedFile,
    Reference,
    SymbolKind,
    node_id,
)

__all__ = [
    "FileRefs",
    "SymbolTable",
    "build_nodes",
    "decode_refs",
    "encode_refs",
    "is_test_path",
    "module_name",
    "ref_names",
    "resolve_file",
    "test_subject_stem",
]

_CALLABLE_KINDS = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD}) | TYPE_KINDS
_SELF_QUALIFIERS = frozenset({"self", "this", "cls", "@", "Self", "base", "super"})
_REF_EDGE = {
    "call": EdgeKind.CALLS,
    "extends": EdgeKind.EXTENDS,
    "implements": EdgeKind.IMPLEMENTS,
    "type": EdgeKind.REFERENCES,
}
_EXTENSIONS = {
    "python": (".py", ".pyi"),
    "javascript": (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx"),
    "typescript": (".ts", ".tsx", ".d.ts", ".js", ".mts"),
    "tsx": (".tsx", ".ts", ".js", ".jsx"),
    "ruby": (".rb",),
    "rust": (".rs",),
}


# -- paths --------------------------------------------------------------------------------
def module_name(path: str) -> str:
    """``pkg/mod.py`` → ``pkg.mod``; ``pkg/__init__.py`` → ``pkg`` (dots from directories)."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    if stem.endswith(".d"):  # foo.d.ts
        stem = stem[:-2]
    if stem.endswith("/__init__"):
        stem = stem[: -len("/__init__")]
    return stem.replace("/", ".")


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.split(".", 1)[0] if not name.startswith(".") else name


def is_test_path(path: str) -> bool:
    """Path conventions for tests across languages (seed 002, test file deprioritisation)."""
    lowered = "/" + path.lower()
    name = lowered.rsplit("/", 1)[-1]
    if any(seg in lowered for seg in ("/tests/", "/test/", "/__tests__/", "/spec/", "/testing/")):
        return True
    if name.startswith("test_") or name.startswith("tests_"):
        return True
    stem = name.split(".", 1)[0]
    if stem.endswith(("_test", "_tests", "_spec")):
        return True
    if ".test." in name or ".spec." in name:
        return True
    original = path.rsplit("/", 1)[-1].split(".", 1)[0]
    return original.endswith(("Test", "Tests", "IT")) and len(original) > 4 and original[0].isupper()


def test_subject_stem(path: str) -> str | None:
    """The source file stem a test file is named after (``test_foo.py`` → ``foo``)."""
    name = path.rsplit("/", 1)[-1]
    stem = name.split(".", 1)[0]
    for prefix in ("test_", "tests_"):
        if stem.startswith(prefix) and len(stem) > len(prefix):
            return stem[len(prefix) :]
    for suffix in ("_test", "_tests", "_spec", "Tests", "Test"):
        if stem.endswith(suffix) and len(stem) > len(suffix):
            return stem[: -len(suffix)]
    if ".test." in name or ".spec." in name:
        return stem
    return None


# -- nodes --------------------------------------------------------------------------------
def build_nodes(parsed: ParsedFile, source: bytes, blob_id: str) -> list[Node]:
    """One module node per file plus one node per definition (duplicates get ``#n``)."""
    module_qn = module_name(parsed.path)
    nodes = [
        Node(
            id=node_id(parsed.path, module_qn, SymbolKind.MODULE),
            path=parsed.path,
            name=_stem(parsed.path),
            qualified_name=module_qn,
            kind=SymbolKind.MODULE,
            language=parsed.language,
            start_line=1,
            end_line=max(parsed.line_count, 1),
            signature="",
            doc="",
            content_hash=blob_id,
        )
    ]
    seen: dict[tuple[str, str], int] = {}
    for d in parsed.definitions:
        qn = f"{module_qn}.{d.qualified_name}"
        key = (qn, d.kind)
        occurrence = seen.get(key, 0) + 1
        seen[key] = occurrence
        ident_qn = qn if occurrence == 1 else f"{qn}#{occurrence}"
        body = source[d.start_byte : d.end_byte]
        nodes.append(
            Node(
                id=node_id(parsed.path, ident_qn, d.kind),
                path=parsed.path,
                name=d.name,
                qualified_name=qn,
                kind=d.kind,
                language=parsed.language,
                start_line=d.start_line,
                end_line=d.end_line,
                signature=d.signature,
                doc=d.doc,
                content_hash=hashlib.sha256(body).hexdigest()[:32],
            )
        )
    return nodes


# -- stored references ----------------------------------------------------------------------
@dataclass(slots=True)
class FileRefs:
    """What the resolver needs of a file besides its nodes."""

    path: str
    language: str
    references: list[Reference] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)


def encode_refs(parsed: ParsedFile) -> str:
    return json.dumps(
        {
            "language": parsed.language,
            "refs": [[r.kind, r.name, r.line, r.scope, r.qualifier] for r in parsed.references],
            "imports": [[i.module, [list(n) for n in i.names], i.line] for i in parsed.imports],
        },
        separators=(",", ":"),
        ensure_ascii=False,
    )


def decode_refs(path: str, data: str) -> FileRefs:
    raw = json.loads(data)
    return FileRefs(
        path=path,
        language=raw["language"],
        references=[Reference(k, n, line, s, q) for k, n, line, s, q in raw["refs"]],
        imports=[Import(m, tuple((a, b) for a, b in names), line) for m, names, line in raw["imports"]],
    )


def _import_tail_names(module: str) -> list[str]:
    cleaned = module.replace("::", "/").replace(".", "/").rstrip("/")
    parts = [p for p in cleaned.split("/") if p and p not in ("..", "~", "@")]
    out = [parts[-1]] if parts else []
    if out and "." in module.rsplit("/", 1)[-1]:  # "./x.js" → x
        out.append(module.rsplit("/", 1)[-1].split(".", 1)[0])
    return out


def ref_names(path: str, refs: FileRefs, nodes: Sequence[Node]) -> set[str]:
    """Names whose definitions can change how this file resolves (for ``affected_paths``)."""
    names = {r.name for r in refs.references}
    names.update(r.qualifier.replace("::", ".").split(".")[-1] for r in refs.references if r.qualifier)
    for imp in refs.imports:
        names.update(_import_tail_names(imp.module))
        names.update(a for a, _ in imp.names if a not in ("*", "default"))
    module_qn = module_name(path)
    for n in nodes:
        if n.kind != SymbolKind.MODULE and n.qualified_name.startswith(module_qn + "."):
            names.update(n.qualified_name[len(module_qn) + 1 :].split("."))
    subject = test_subject_stem(path)
    if subject:
        names.add(subject)
    names.discard("")
    return names


# -- the symbol table -------------------------------------------------------------------------
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
    """Where a lazy ``SymbolTable`` reads the symbols it was not given (the store)."""

    def symbol_rows_named(self, names: Iterable[str]) -> list[Row]: ...

    def symbol_rows_in(self, paths: Iterable[str]) -> list[Row]: ...

    def symbol_rows_with_ids(self, ids: Iterable[str]) -> list[Row]: ...


def _same(a: Sym | None, b: Sym | None) -> bool:
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
        self._members: dict[str, list[Sym]] = {}
        self._children_by_path: dict[str, dict[str, list[Sym]]] = {}
        self.module_of: dict[str, Sym] = {}
        given = [_sym(r) for r in rows]
        self._given_by_name: dict[str, list[Sym]] = {}
        self._given_by_path: dict[str, list[Sym]] = {}
        for sym in given:
            self._given_by_path.setdefault(sym.path, []).append(sym)
            if sym.kind == SymbolKind.MODULE:
                self.module_of[sym.path] = sym
            else:
                self._given_by_name.setdefault(sym.name, []).append(sym)
        for group in (*self._given_by_name.values(), *self._given_by_path.values()):
            group.sort(key=_by_id)
        if source is None:
            self.by_name: dict[str, list[Sym]] = self._given_by_name
            self.by_path: dict[str, list[Sym]] = self._given_by_path
            self.by_id: dict[str, Sym] = {s.id: s for s in given}
        else:
            for path in module_paths or ():
                if path not in self.module_of:
                    self.module_of[path] = _sym(
                        (
                            node_id(path, module_name(path), SymbolKind.MODULE),
                            path,
                            _stem(path),
                            module_name(path),
                            SymbolKind.MODULE,
                        )
                    )
            self.by_name = _LazyIndex(self._fetch_named)
            self.by_path = _LazyIndex(self._fetch_path)
            self.by_id = _LazyIndex(self._fetch_id)
            for sym in given:
                self.by_id[sym.id] = sym
        self.by_infile: dict[tuple[str, str], Sym] = _LazyIndex(self._fetch_infile)
        self.paths_by_dir: dict[str, list[str]] = {}
        self.paths_by_module_suffix: dict[str, list[str]] = {}
        self.paths_by_stem: dict[str, list[str]] = {}
        for path in sorted(self.module_of):
            self.paths_by_dir.setdefault(posixpath.dirname(path), []).append(path)
            parts = module_name(path).split(".")
            for i in range(len(parts)):
                self.paths_by_module_suffix.setdefault(".".join(parts[i:]), []).append(path)
            self.paths_by_stem.setdefault(_stem(path), []).append(path)
        self.dirs_by_suffix: dict[str, list[str]] = {}
        for d in sorted(self.paths_by_dir):
            parts = d.split("/") if d else []
            for i in range(len(parts)):
                self.dirs_by_suffix.setdefault("/".join(parts[i:]), []).append(d)

    def prefetch_names(self, names: Iterable[str]) -> None:
        """Load many names in one query (a lazy table would otherwise ask one by one)."""
        if self._source is None:
            return
        wanted = sorted({n for n in names if n not in self.by_name})
        found: dict[str, list[Sym]] = {n: list(self._given_by_name.get(n, [])) for n in wanted}
        for row in self._source.symbol_rows_named(wanted):
            if row[1] not in self._hidden and row[4] != SymbolKind.MODULE:
                found.setdefault(row[2], []).append(_sym(row))
        for name, syms in found.items():
            dict.__setitem__(self.by_name, name, sorted(syms, key=_by_id))

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
                same_dir = posixpath.dirname(path)
                types = [
                    s
                    for s in self.by_name.get(parent_infile, [])
                    if s.kind in TYPE_KINDS and posixpath.dirname(s.path) == same_dir and "." not in s.infile
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
                if _same(self._parent_of(owner.path, sym), owner):
                    found.append(sym)
            if owner.kind in TYPE_KINDS and "." not in owner.infile:
                for path in self.paths_by_dir.get(posixpath.dirname(owner.path), []):
                    if path == owner.path:
                        continue
                    for sym in self._children_in(path).get(owner.infile, []):
                        if _same(self._parent_of(path, sym), owner):
                            found.append(sym)
        self._members[owner_id] = found
        return found


# -- resolution ---------------------------------------------------------------------------------
@dataclass(slots=True)
class _Bindings:
    """What a file's imports bind: local name → symbols, local alias → module files."""

    symbols: dict[str, list[Sym]] = field(default_factory=dict)
    modules: dict[str, list[str]] = field(default_factory=dict)
    target_paths: set[str] = field(default_factory=set)


def _top_level(table: SymbolTable, paths: Iterable[str], name: str) -> list[Sym]:
    out: list[Sym] = []
    for p in paths:
        out.extend(s for s in table.by_path.get(p, []) if s.name == name and "." not in s.infile)
    return out


def _relative_candidates(path: str, spec: str, language: str) -> list[str]:
    base = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
    exts = _EXTENSIONS.get(language, ())
    out = [base]
    stem = base
    for js_ext in (".js", ".jsx", ".mjs", ".cjs"):
        if base.endswith(js_ext):
            stem = base[: -len(js_ext)]
    out.extend(stem + ext for ext in exts)
    out.extend(f"{base}/index{ext}" for ext in exts)
    return out


def _python_module_paths(table: SymbolTable, path: str, spec: str) -> list[str]:
    if spec.startswith("."):
        level = len(spec) - len(spec.lstrip("."))
        rest = spec[level:]
        base = posixpath.dirname(path)
        for _ in range(level - 1):
            base = posixpath.dirname(base)
        target = posixpath.join(base, rest.replace(".", "/")) if rest else base
        found = [
            p for p in (target + ".py", target + ".pyi", target + "/__init__.py") if p in table.module_of
        ]
        return found
    return _by_module_suffix(table, spec)


def _by_module_suffix(table: SymbolTable, dotted: str) -> list[str]:
    paths = table.paths_by_module_suffix.get(dotted, [])
    if len(paths) <= 1:
        return list(paths)
    # the shortest path is the most likely root-relative match (src/ layouts excepted)
    exact = [p for p in paths if module_name(p) == dotted]
    return exact or sorted(paths, key=lambda p: (p.count("/"), p))[:1]


def _module_paths(table: SymbolTable, path: str, language: str, spec: str) -> list[str]:
    """The files an import's module spec names (empty when it is external)."""
    if language == "python":
        return _python_module_paths(table, path, spec)
    if language in ("javascript", "typescript", "tsx"):
        if spec.startswith("."):
            return [p for p in _relative_candidates(path, spec, language) if p in table.module_of][:1]
        return []
    if language == "ruby":
        if spec.startswith("."):
            cands = _relative_candidates(path, spec, "ruby")
        else:
            cands = [p for p in table.paths_by_module_suffix.get(spec.replace("/", "."), [])]
        return [p for p in cands if p in table.module_of][:1]
    if language == "go":
        parts = spec.strip("/").split("/")
        for i in range(len(parts)):
            dirs = table.dirs_by_suffix.get("/".join(parts[i:]))
            if dirs:
                chosen = sorted(dirs, key=lambda d: (d.count("/"), d))[0]
                return [p for p in table.paths_by_dir.get(chosen, []) if p.endswith(".go")]
        return []
    if language == "rust":
        segs = [s for s in spec.split("::") if s]
        base_dir = posixpath.dirname(path)
        if segs and segs[0] == "crate":
            segs = segs[1:]
        elif segs and segs[0] == "self":
            segs = [*base_dir.split("/")[-1:], *segs[1:]] if base_dir else segs[1:]
        while segs and segs[0] == "super":
            segs = segs[1:]
        if not segs:
            return []
        return _by_module_suffix(table, ".".join(segs)) or _by_module_suffix(table, ".".join([*segs, "mod"]))
    if language == "java":
        return _by_module_suffix(table, spec)
    return []


def _bindings(table: SymbolTable, refs: FileRefs) -> tuple[_Bindings, list[tuple[str, float]]]:
    """Resolve the file's imports: name bindings plus IMPORTS targets (node id, confidence)."""
    b = _Bindings()
    targets: list[tuple[str, float]] = []
    for imp in refs.imports:
        if any(a in ("package", "namespace") for a, _ in imp.names):
            continue
        paths = _module_paths(table, refs.path, refs.language, imp.module)
        for imported, alias in imp.names or (("*", imp.module.rsplit("/", 1)[-1]),):
            if imported == "*":
                if paths:
                    b.modules.setdefault(alias, []).extend(paths)
                continue
            if imported == "default":
                syms = [s for s in _top_level(table, paths, alias) if s.kind in _CALLABLE_KINDS] or [
                    s for p in paths for s in table.by_path.get(p, []) if "." not in s.infile and s.infile
                ][:1]
            else:
                syms = _top_level(table, paths, imported)
            if not syms and refs.language == "java":
                syms = _top_level(table, _by_module_suffix(table, f"{imp.module}.{imported}"), imported)
            if not syms and refs.language == "python":
                joined = imp.module + imported if imp.module.endswith(".") else f"{imp.module}.{imported}"
                sub = _python_module_paths(table, refs.path, joined)
                if sub:
                    b.modules.setdefault(alias, []).extend(sub)
                    paths = [*paths, *sub]
            if syms:
                b.symbols.setdefault(alias, []).extend(syms)
                targets.extend((s.id, 1.0) for s in syms)
        for p in paths:
            module = table.module_of.get(p)
            if module is not None and p != refs.path:
                b.target_paths.add(p)
                targets.append((module.id, 1.0))
    return b, targets


def _enclosing_class(table: SymbolTable, path: str, scope: str | None) -> Sym | None:
    while scope:
        sym = table.by_infile.get((path, scope))
        if sym is not None and sym.kind in TYPE_KINDS:
            return sym
        scope = scope.rsplit(".", 1)[0] if "." in scope else None
    return None


def _unique(syms: list[Sym]) -> Sym | None:
    return syms[0] if len(syms) == 1 else None


class _Resolver:
    def __init__(self, table: SymbolTable, refs: FileRefs, params: IndexParams) -> None:
        self.table = table
        self.refs = refs
        self.p = params
        self.generic = frozenset(params.generic_names)
        self.bindings, self.import_targets = _bindings(table, refs)
        self.same_dir_paths = table.paths_by_dir.get(posixpath.dirname(refs.path), [])

    def resolve(self, ref: Reference) -> tuple[Sym, float] | None:
        wanted = TYPE_KINDS if ref.kind in ("extends", "implements", "type") else _CALLABLE_KINDS
        name = ref.name
        qualifier = ref.qualifier.replace("::", ".")

        def fits(s: Sym) -> bool:
            return s.kind in wanted

        if qualifier:
            head = qualifier.split(".", 1)[0]
            if head in _SELF_QUALIFIERS:
                cls = _enclosing_class(self.table, self.refs.path, ref.scope)
                if cls is not None:
                    member = self._member(cls, name)
                    if member is not None:
                        return member, self.p.confidence_same_class
                return self._by_uniqueness(name, fits, allow_file=True)
            last = qualifier.split(".")[-1]
            for alias in (qualifier, head, last):
                if alias in self.bindings.modules:
                    found = [s for s in _top_level(self.table, self.bindings.modules[alias], name) if fits(s)]
                    if found:
                        return found[0], self.p.confidence_import
            owner = self._type_named(last)
            if owner is not None:
                member = self._member(owner, name)
                if member is not None:
                    return member, self.p.confidence_same_class
            if name in self.generic:
                return None
            candidates = [s for s in self.table.by_name.get(name, []) if fits(s)]
            hit = _unique(candidates)
            return (hit, self.p.confidence_receiver_guess) if hit is not None else None
        bound = [s for s in self.bindings.symbols.get(name, []) if fits(s)]
        if bound:
            return bound[0], self.p.confidence_import
        cls = _enclosing_class(self.table, self.refs.path, ref.scope)
        if cls is not None and ref.kind == "call":
            member = self._member(cls, name)
            if member is not None and self.refs.language not in ("python", "javascript", "typescript", "tsx"):
                return member, self.p.confidence_same_class
        return self._by_uniqueness(name, fits, allow_file=True)

    def _by_uniqueness(self, name: str, fits: object, *, allow_file: bool) -> tuple[Sym, float] | None:
        check = fits if callable(fits) else (lambda s: True)
        candidates = [s for s in self.table.by_name.get(name, []) if check(s)]
        if not candidates:
            return None
        if allow_file:
            local = [s for s in candidates if s.path == self.refs.path]
            top = [s for s in local if "." not in s.infile]
            hit = _unique(top) or _unique(local)
            if hit is not None:
                return hit, self.p.confidence_same_file
        if name in self.generic:
            return None
        same_dir = set(self.same_dir_paths)
        in_package = [s for s in candidates if s.path in same_dir]
        hit = _unique(in_package) or _unique([s for s in in_package if "." not in s.infile])
        if hit is not None:
            return hit, self.p.confidence_same_package
        hit = _unique(candidates)
        if hit is not None:
            return hit, self.p.confidence_global_unique
        return None

    def _member(self, owner: Sym, name: str) -> Sym | None:
        members = [s for s in self.table.members(owner.id) if s.name == name]
        return members[0] if members else None

    def _type_named(self, name: str) -> Sym | None:
        bound = [s for s in self.bindings.symbols.get(name, []) if s.kind in TYPE_KINDS]
        if bound:
            return bound[0]
        types = [s for s in self.table.by_name.get(name, []) if s.kind in TYPE_KINDS]
        local = [s for s in types if s.path == self.refs.path]
        return _unique(local) or _unique(types)


def _scope_source(table: SymbolTable, path: str, scope: str | None) -> Sym | None:
    while scope:
        sym = table.by_infile.get((path, scope))
        if sym is not None:
            return sym
        scope = scope.rsplit(".", 1)[0] if "." in scope else None
    return table.module_of.get(path)


def _test_subjects(table: SymbolTable, path: str) -> list[str]:
    """Source files a test file is named after, preferring the same or a mirrored directory."""
    stem = test_subject_stem(path)
    if not stem or not is_test_path(path):
        return []
    ext = path.rsplit(".", 1)[-1]
    candidates = [
        p
        for p in table.paths_by_stem.get(stem, [])
        if p != path and not is_test_path(p) and p.rsplit(".", 1)[-1] == ext
    ]
    if len(candidates) <= 1:
        return candidates
    test_dir = posixpath.dirname(path)
    same = [p for p in candidates if posixpath.dirname(p) == test_dir]
    if same:
        return same
    mirror = test_dir.replace("tests/", "").replace("test/", "").replace("__tests__", "").strip("/")
    mirrored = [p for p in candidates if mirror and posixpath.dirname(p).endswith(mirror)]
    return mirrored[:1] if len(mirrored) == 1 else []


def resolve_file(table: SymbolTable, refs: FileRefs, params: IndexParams) -> list[Edge]:
    """All edges whose origin is this file, deduplicated and sorted."""
    best: dict[tuple[str, str, EdgeKind], float] = {}

    def add(source: str, target: str, kind: EdgeKind, confidence: float) -> None:
        if source == target:
            return
        key = (source, target, kind)
        if best.get(key, 0.0) < confidence:
            best[key] = round(confidence, 4)

    path = refs.path
    module = table.module_of.get(path)
    if module is None:
        return []
    for sym in table.by_path.get(path, []):
        if not sym.infile:
            continue
        parent = table.parent_of(sym)
        if parent is not None:
            add(parent.id, sym.id, EdgeKind.CONTAINS, 1.0)
            add(sym.id, parent.id, EdgeKind.MEMBER_OF, 1.0)
    resolver = _Resolver(table, refs, params)
    for target, confidence in resolver.import_targets:
        add(module.id, target, EdgeKind.IMPORTS, confidence)
    extends: list[tuple[str, Sym, float]] = []
    for ref in refs.references:
        scope_sym = _scope_source(table, path, ref.scope)
        hit = resolver.resolve(ref)
        if scope_sym is None or hit is None:
            continue
        target_sym, confidence = hit
        kind = _REF_EDGE.get(ref.kind, EdgeKind.REFERENCES)
        add(scope_sym.id, target_sym.id, kind, confidence)
        if kind == EdgeKind.EXTENDS:
            extends.append((scope_sym.id, target_sym, confidence))
    for child, parent, confidence in extends:
        own = {s.name for s in table.members(child)}
        for method in table.members(parent.id):
            if method.kind == SymbolKind.METHOD and method.name not in own:
                add(child, method.id, EdgeKind.INHERITS, confidence)
    if is_test_path(path):
        test_ids = {s.id for s in table.by_path.get(path, [])}
        for (source_id, target_id, edge_kind), confidence in list(best.items()):
            if edge_kind in (EdgeKind.CALLS, EdgeKind.REFERENCES) and source_id in test_ids:
                target_sym_path = _path_of(table, target_id)
                if target_sym_path is not None and not is_test_path(target_sym_path):
                    add(source_id, target_id, EdgeKind.TESTS, confidence)
        for subject in _test_subjects(table, path):
            subject_module = table.module_of.get(subject)
            if subject_module is not None:
                add(module.id, subject_module.id, EdgeKind.TESTS, 0.8)
    return [Edge(s, t, k, c) for (s, t, k), c in sorted(best.items())]


def _path_of(table: SymbolTable, node_id_: str) -> str | None:
    sym = table.by_id.get(node_id_)
    return None if sym is None else sym.path
