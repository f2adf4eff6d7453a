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
from knowing_pr.graph.builtins import builtin_method_names
from knowing_pr.graph.modules import by_module_suffix, default_import_paths, module_paths, python_module_paths
from knowing_pr.graph.nodes import FileRefs
from knowing_pr.graph.paths import is_test_path, test_subject_stem
from knowing_pr.graph.rules import TEST_NAME_CONFIDENCE
from knowing_pr.graph.symbols import Sym, SymbolTable
from knowing_pr.graph.values import Evaluator, parse_expression
from knowing_pr.model import TYPE_KINDS, Edge, EdgeKind, Reference, SymbolKind

__all__ = ["default_import_paths", "resolve_file"]

_CALLABLE_KINDS = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD}) | TYPE_KINDS
_SELF_QUALIFIERS = frozenset({"self", "this", "cls", "@", "Self", "base", "super"})
#: what a bug or a chain of evaluation too deep for Python raises in one reference's analysis:
#: that reference gets no edge, the file keeps the rest (the store's own errors still propagate)
_ANALYSIS_FAILURES = (RecursionError, KeyError, IndexError, ValueError, TypeError, AttributeError)
_REF_EDGE = {
    "call": EdgeKind.CALLS,
    "extends": EdgeKind.EXTENDS,
    "implements": EdgeKind.IMPLEMENTS,
    "type": EdgeKind.REFERENCES,
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


def _bindings(
    table: SymbolTable, refs: FileRefs, values: Evaluator
) -> tuple[_Bindings, list[tuple[str, float]]]:
    """Resolve the file's imports: name bindings plus IMPORTS targets (node id, confidence)."""
    b = _Bindings()
    targets: list[tuple[str, float]] = []
    for imp in refs.imports:
        if any(a in ("package", "namespace") for a, _ in imp.names):
            continue
        paths = module_paths(table, refs.path, refs.language, imp.module)
        for imported, alias in imp.names or (("*", imp.module.rsplit("/", 1)[-1]),):
            if imported == "*":
                if paths:
                    b.modules.setdefault(alias, []).extend(paths)
                elif alias != "*":
                    b.external_modules.update({alias, alias.split(".", 1)[0]})
                continue
            if imported == "default":  # what ``export default`` names (or ``module.exports``)
                found = [v for p in paths for v in values.module_name(p, "default", origin=False)]
                syms = [v.sym for v in found if v.kind == "sym" and v.sym is not None]
            else:
                syms = _top_level(table, paths, imported)
            if not syms and refs.language == "java":
                syms = _top_level(table, by_module_suffix(table, f"{imp.module}.{imported}"), imported)
            if not syms and refs.language == "python":
                joined = imp.module + imported if imp.module.endswith(".") else f"{imp.module}.{imported}"
                sub = python_module_paths(table, refs.path, joined)
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
    def __init__(self, table: SymbolTable, refs: FileRefs, params: IndexParams, values: Evaluator) -> None:
        self.table = table
        self.refs = refs
        self.p = params
        self.values = values
        self.generic = frozenset(params.generic_names)
        self.scoped = refs.language in params.scoped_languages
        self.bindings, self.import_targets = _bindings(table, refs, values)

    def resolve(self, ref: Reference) -> list[tuple[Sym, str]]:
        """The symbols ``ref`` names, each with the rule that found it (``graph/rules.py``)."""
        if ref.hint and self.scoped:
            return self._evaluated(ref)
        hit = self._written(ref)
        return [] if hit is None else [hit]

    # -- a reference whose extractor applied the file's scopes (value expressions) --------------

    def _evaluated(self, ref: Reference) -> list[tuple[Sym, str]]:
        wanted = TYPE_KINDS if ref.kind in ("extends", "implements", "type") else _CALLABLE_KINDS
        found, _ = self.values.callee(self.refs.path, ref.hint, wanted)
        if found:
            return found
        for part in ref.hint.split("|"):
            parsed = parse_expression(part)
            if parsed is None:
                continue
            atom, suffixes = parsed
            if not suffixes and _is_name(atom):
                if not self.values.module_name(self.refs.path, atom, origin=True):
                    hit = self._unbound_name(atom, wanted)  # neither defined, assigned nor imported
                    if hit is not None:
                        return [hit]
            elif suffixes and suffixes[-1] == "." + ref.name and ref.kind == "call":
                receiver = self.values.evaluate(self.refs.path, atom + "".join(suffixes[:-1]))
                if receiver and all(v.kind == "unk" for v in receiver):
                    hit = self._receiver_guess(ref.name)
                    if hit is not None:
                        return [hit]
        return []

    def _unbound_name(self, name: str, wanted: frozenset[str]) -> tuple[Sym, str] | None:
        if name in self.generic:
            return None
        directory = posixpath.dirname(self.refs.path)
        in_package = [
            s for s in self.table.named_in_dir(directory, name) if s.kind in wanted and "." not in s.infile
        ]
        hit = _unique(in_package)
        if hit is not None:
            return hit, "same_package"
        everywhere = [s for s in self.table.two_named(name, wanted)]
        hit = _unique(everywhere)
        if hit is not None and "." not in hit.infile:
            return hit, "global_unique"
        return None

    def _receiver_guess(self, name: str) -> tuple[Sym, str] | None:
        if name in self.generic or name in builtin_method_names(self.refs.language):
            return None
        hit = _unique(self.table.two_named(name, _CALLABLE_KINDS))
        if hit is not None and hit.kind == SymbolKind.METHOD:
            return hit, "receiver_guess"
        return None

    # -- a reference as written (languages whose extractor has no scopes yet) -------------------

    def _written(self, ref: Reference) -> tuple[Sym, str] | None:
        wanted = TYPE_KINDS if ref.kind in ("extends", "implements", "type") else _CALLABLE_KINDS
        name = ref.name
        qualifier = ref.qualifier.replace("::", ".")

        def fits(s: Sym) -> bool:
            return s.kind in wanted

        if qualifier:
            head = qualifier.split(".", 1)[0]
            if head in self.bindings.external_modules and head not in self.bindings.modules:
                return None  # re.compile, fmt.Println, _.map: not this repository's code
            if qualifier in _SELF_QUALIFIERS:  # self.m(), not self.attr.m()
                cls = _enclosing_class(self.table, self.refs.path, ref.scope)
                if cls is not None:
                    member = self._member(cls, name)
                    if member is not None:
                        return member, "name_member"
                return self._by_uniqueness(name, wanted, allow_file=True)
            last = qualifier.split(".")[-1]
            for alias in (qualifier, head, last):
                if alias in self.bindings.modules:
                    found = [s for s in _top_level(self.table, self.bindings.modules[alias], name) if fits(s)]
                    if found:
                        return found[0], "name_import"
            owner = self._type_named(last)
            if owner is not None:
                member = self._member(owner, name)
                if member is not None:
                    return member, "name_member"
            if head in _SELF_QUALIFIERS and ref.kind == "call":
                return None  # self.attr.m(): the attribute's type is not known here
            if ref.kind == "call":
                guess = self._receiver_guess(name)
                return (guess[0], "name_receiver_guess") if guess is not None else None
            if name in self.generic:
                return None
            hit = _unique(self.table.two_named(name, wanted))  # a qualified type name: pkg.Base
            return (hit, "name_global_unique") if hit is not None else None
        bound = [s for s in self.bindings.symbols.get(name, []) if fits(s)]
        if bound:
            return bound[0], "name_import"
        cls = _enclosing_class(self.table, self.refs.path, ref.scope)
        if cls is not None and ref.kind == "call":
            member = self._member(cls, name)
            if member is not None and self.refs.language not in ("python", "javascript", "typescript", "tsx"):
                return member, "name_member"
        if name in self.bindings.external_names:
            return None  # imported from outside the repository
        return self._by_uniqueness(name, wanted, allow_file=True)

    def _by_uniqueness(
        self, name: str, wanted: frozenset[str], *, allow_file: bool
    ) -> tuple[Sym, str] | None:
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
                return hit, "name_same_file"
        if name in self.generic:
            return None
        directory = posixpath.dirname(self.refs.path)
        in_package = [s for s in self.table.named_in_dir(directory, name) if fits(s)]
        hit = _unique(in_package) or _unique([s for s in in_package if "." not in s.infile])
        if hit is not None:
            return hit, "name_same_package"
        hit = _unique(everywhere)
        if hit is not None:
            return hit, "name_global_unique"
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


def _is_name(atom: str) -> bool:
    return atom not in ("?", "!") and not atom.endswith(">")


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


def resolve_file(
    table: SymbolTable, refs: FileRefs, params: IndexParams, values: Evaluator | None = None
) -> list[Edge]:
    """All edges whose origin is this file, deduplicated and sorted (``values``: an evaluator
    shared by the files of one run, so its caches serve them all). A reference whose analysis
    fails gets no edge and is counted in ``values.failed``: fewer edges, never a failed index."""
    best: dict[tuple[str, str, EdgeKind], tuple[float, str]] = {}

    def add(source: str, target: str, kind: EdgeKind, confidence: float, rule: str) -> None:
        if source == target:
            return
        key = (source, target, kind)
        held = best.get(key)
        if held is None or held[0] < confidence:
            best[key] = (round(confidence, 4), rule)

    path = refs.path
    module = table.module_of.get(path)
    if module is None:
        return []
    for sym in table.by_path.get(path, []):
        if not sym.infile:
            continue
        parent = table.parent_of(sym)
        if parent is not None:
            add(parent.id, sym.id, EdgeKind.CONTAINS, 1.0, "containment")
            add(sym.id, parent.id, EdgeKind.MEMBER_OF, 1.0, "containment")
    values = values or Evaluator(table)
    try:
        resolver = _Resolver(table, refs, params, values)
    except _ANALYSIS_FAILURES:
        values.failed[path] = values.failed.get(path, 0) + len(refs.references) + len(refs.imports)
        return [Edge(s, t, k, c, r) for (s, t, k), (c, r) in sorted(best.items())]
    for target, confidence in resolver.import_targets:
        add(module.id, target, EdgeKind.IMPORTS, confidence, "import")
    extends: list[tuple[str, Sym, float, str]] = []
    for ref in refs.references:
        scope_sym = _scope_source(table, path, ref.scope)
        if scope_sym is None:
            continue
        kind = _REF_EDGE.get(ref.kind, EdgeKind.REFERENCES)
        try:
            hits = resolver.resolve(ref)
        except _ANALYSIS_FAILURES:
            values.failed[path] = values.failed.get(path, 0) + 1
            continue
        for target_sym, rule in hits:
            confidence = params.confidence_of(rule)
            add(scope_sym.id, target_sym.id, kind, confidence, rule)
            if kind == EdgeKind.EXTENDS:
                extends.append((scope_sym.id, target_sym, confidence, rule))
    for child, parent, confidence, rule in extends:
        methods = [m for m in table.members(parent.id) if m.kind == SymbolKind.METHOD]
        if len(methods) > params.max_inherited_methods:
            continue  # a framework base (a model, a test case): the ``extends`` edge says it
        own = {s.name for s in table.members(child)}
        for method in methods:
            if method.name not in own:
                add(child, method.id, EdgeKind.INHERITS, confidence, rule)
    if is_test_path(path):
        test_ids = {s.id for s in table.by_path.get(path, [])}
        for (source_id, target_id, edge_kind), (confidence, _) in list(best.items()):
            if edge_kind in (EdgeKind.CALLS, EdgeKind.REFERENCES) and source_id in test_ids:
                target_sym_path = _path_of(table, target_id)
                if target_sym_path is not None and not is_test_path(target_sym_path):
                    add(source_id, target_id, EdgeKind.TESTS, confidence, "test_use")
        for subject in _test_subjects(table, path):
            subject_module = table.module_of.get(subject)
            if subject_module is not None:
                add(module.id, subject_module.id, EdgeKind.TESTS, TEST_NAME_CONFIDENCE, "test_name")
    return [Edge(s, t, k, c, r) for (s, t, k), (c, r) in sorted(best.items())]


def _path_of(table: SymbolTable, node_id_: str) -> str | None:
    sym = table.by_id.get(node_id_)
    return None if sym is None else sym.path
