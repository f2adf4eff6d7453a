"""A file's references + the symbol table → its typed, confidence-rated edges.

Resolution order for a name (issue 2, DESIGN.md): import-resolved beats the enclosing
class, beats the same file, beats the same package (directory), beats a globally unique
name; generic names (``get``, ``run``, …) and ambiguous names are never guessed.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field

from knowing_pr.config import IndexParams
from knowing_pr.graph.nodes import FileRefs
from knowing_pr.graph.paths import is_test_path, module_name, test_subject_stem
from knowing_pr.graph.rules import TEST_NAME_CONFIDENCE
from knowing_pr.graph.symbols import Sym, SymbolTable
from knowing_pr.model import TYPE_KINDS, Edge, EdgeKind, Reference, SymbolKind

__all__ = ["default_import_paths", "resolve_file"]

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


@dataclass(slots=True)
class _Bindings:
    """What a file's imports bind: local name → symbols, local alias → module files."""

    symbols: dict[str, list[Sym]] = field(default_factory=dict)
    modules: dict[str, list[str]] = field(default_factory=dict)
    target_paths: set[str] = field(default_factory=set)
    #: aliases of modules outside the repository (``re``, ``lodash``, ``fmt``) and names
    #: imported from them: a use through them is never guessed onto a repository symbol
    external_modules: set[str] = field(default_factory=set)
    external_names: set[str] = field(default_factory=set)


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


def default_import_paths(refs: FileRefs) -> set[str]:
    """Every file a default import of this file could bind (``import x from "./m.js"`` binds
    the module's first declaration, whatever its name): when such a file's declarations
    change, this file must be resolved again."""
    if refs.language not in ("javascript", "typescript", "tsx"):
        return set()
    out: set[str] = set()
    for imp in refs.imports:
        if imp.module.startswith(".") and any(imported == "default" for imported, _ in imp.names):
            out.update(_relative_candidates(refs.path, imp.module, refs.language))
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
                elif alias != "*":
                    b.external_modules.update({alias, alias.split(".", 1)[0]})
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
            elif not paths:
                b.external_names.add(alias)
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

    def resolve(self, ref: Reference) -> tuple[Sym, float] | None:
        wanted = TYPE_KINDS if ref.kind in ("extends", "implements", "type") else _CALLABLE_KINDS
        name = ref.name
        qualifier = ref.qualifier.replace("::", ".")

        def fits(s: Sym) -> bool:
            return s.kind in wanted

        if qualifier:
            head = qualifier.split(".", 1)[0]
            if head in self.bindings.external_modules and head not in self.bindings.modules:
                return None  # re.compile, fmt.Println, _.map: not this repository's code
            if head in _SELF_QUALIFIERS:
                cls = _enclosing_class(self.table, self.refs.path, ref.scope)
                if cls is not None:
                    member = self._member(cls, name)
                    if member is not None:
                        return member, self.p.confidence_same_class
                return self._by_uniqueness(name, wanted, allow_file=True)
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
            hit = _unique(self.table.two_named(name, wanted))
            return (hit, self.p.confidence_receiver_guess) if hit is not None else None
        bound = [s for s in self.bindings.symbols.get(name, []) if fits(s)]
        if bound:
            return bound[0], self.p.confidence_import
        cls = _enclosing_class(self.table, self.refs.path, ref.scope)
        if cls is not None and ref.kind == "call":
            member = self._member(cls, name)
            if member is not None and self.refs.language not in ("python", "javascript", "typescript", "tsx"):
                return member, self.p.confidence_same_class
        if name in self.bindings.external_names:
            return None  # imported from outside the repository
        return self._by_uniqueness(name, wanted, allow_file=True)

    def _by_uniqueness(
        self, name: str, wanted: frozenset[str], *, allow_file: bool
    ) -> tuple[Sym, float] | None:
        # indexes by file and by directory, and at most two global matches, keep this linear:
        # a name defined in thousands of files is never listed whole for a reference to it
        everywhere = self.table.two_named(name, wanted)
        if not everywhere:
            return None

        def fits(s: Sym) -> bool:
            return s.kind in wanted

        if allow_file:
            local = [s for s in self.table.named_in_path(self.refs.path, name) if fits(s)]
            hit = _unique([s for s in local if "." not in s.infile]) or _unique(local)
            if hit is not None:
                return hit, self.p.confidence_same_file
        if name in self.generic:
            return None
        directory = posixpath.dirname(self.refs.path)
        in_package = [s for s in self.table.named_in_dir(directory, name) if fits(s)]
        hit = _unique(in_package) or _unique([s for s in in_package if "." not in s.infile])
        if hit is not None:
            return hit, self.p.confidence_same_package
        hit = _unique(everywhere)
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
        local = [s for s in self.table.named_in_path(self.refs.path, name) if s.kind in TYPE_KINDS]
        return _unique(local) or _unique(self.table.two_named(name, TYPE_KINDS))


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
                add(module.id, subject_module.id, EdgeKind.TESTS, TEST_NAME_CONFIDENCE)
    return [Edge(s, t, k, c) for (s, t, k), c in sorted(best.items())]


def _path_of(table: SymbolTable, node_id_: str) -> str | None:
    sym = table.by_id.get(node_id_)
    return None if sym is None else sym.path
