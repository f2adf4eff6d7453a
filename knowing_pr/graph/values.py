"""Value expressions (``knowing_pr/model.py``) + the symbol table → what they hold in the repository.

``Evaluator.callee(path, hint)`` answers a reference: the repository symbols its expression
names and the rule that found them. The steps, all static (the indexed code is never run):

- a module-scope ``NAME`` of a file: its top-level definition, else its module-level variable
  (a ``bind`` fact, evaluated in turn), else its import (followed into the imported module,
  through re-exports, aliases and star imports), else a builtin (external), else unbound;
- ``module.name``: the same lookup in that module, or its submodule;
- ``Class.name`` / ``instance.name``: the first class along the method resolution order
  (C3 over the ``extends`` references) that defines ``name`` as a member or an attribute;
  ``super()`` starts after the class it is written in; an attribute holding a ``property``
  holds what the property returns;
- ``f()``: an instance of ``f`` when it is a class, what ``f`` returns when it is a function
  (its ``returns`` fact), nothing known otherwise.

A value can be certainly outside the repository (a builtin, an import of an external module, a
class whose bases are all known and define no such member… then no edge is made) or unknown (a
parameter without annotation: the resolver may still guess a receiver's method by its name).

One module over the style's ~400 lines: the evaluator's steps call one another recursively
(an atom's value needs a member lookup, which needs a base's value…), so they stay one class.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache

from knowing_pr.graph.builtins import GO_PREDECLARED, JS_GLOBALS, PYTHON_BUILTINS
from knowing_pr.graph.modules import module_paths
from knowing_pr.graph.nodes import FileRefs
from knowing_pr.graph.symbols import Sym, SymbolTable
from knowing_pr.model import TYPE_KINDS, SymbolKind

__all__ = ["Evaluator", "FileFacts", "Value", "parse_expression"]

_ATOM = re.compile(r"\?|!|[&^]?<[^<>]*>|\{[^{}]*\}|#[^#]*#|[^\W\d][\w$]*|[$][\w$]*")
_SUFFIX = re.compile(r"\.([^\W\d]\w*)|\(\)|\[\]")
_CALLABLE_KINDS = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD}) | TYPE_KINDS
_JS_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})
#: values kept per union while evaluating
_MAX_VALUES = 6
#: guarded steps (a name, a return, a class's MRO…) in progress at once
_MAX_DEPTH = 24
#: nested evaluations at once: each costs a dozen Python frames, so this keeps the deepest
#: chain of a real repository well inside Python's recursion limit
_MAX_NESTED = 40


@dataclass(frozen=True, slots=True)
class Value:
    """What an expression holds.

    ``kind``: ``sym`` (a class, function or method of the repository: ``sym``), ``inst`` (an
    instance of the class ``sym``), ``super`` (``super()`` in class ``sym``), ``module`` (the
    files ``paths``), ``gen`` (a generator the function ``sym`` returned), ``object`` (the
    object literal bound to the module-level name ``how`` of the file ``paths[0]``), ``ext``
    (certainly outside the repository), ``unk`` (unknown).
    ``how``: for ``sym``, the rule that found it (``import``, ``same_file``, ``member``,
    ``typed``); for ``inst``, ``self`` (``self``/``cls``) or ``typed`` (constructed, annotated
    or returned).
    """

    kind: str
    sym: Sym | None = None
    paths: tuple[str, ...] = ()
    how: str = ""


UNKNOWN = Value("unk")
EXTERNAL = Value("ext")


@lru_cache(maxsize=65536)
def parse_expression(text: str) -> tuple[str, tuple[str, ...]] | None:
    """``"a.b().c"`` → (``"a"``, (``".b"``, ``"()"``, ``".c"``)); ``None`` if malformed."""
    match = _ATOM.match(text)
    if match is None:
        return None
    atom, position, suffixes = match.group(0), match.end(), []
    while position < len(text):
        step = _SUFFIX.match(text, position)
        if step is None:
            return None
        suffixes.append(step.group(0))
        position = step.end()
    return atom, tuple(suffixes)


@dataclass(slots=True)
class FileFacts:
    """One file's facts, indexed: bindings, returns, properties, class bases, imports."""

    language: str
    binds: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    returns: dict[str, tuple[str, ...]] = field(default_factory=dict)
    yields: dict[str, tuple[str, ...]] = field(default_factory=dict)
    properties: set[str] = field(default_factory=set)
    bases: dict[str, list[str]] = field(default_factory=dict)
    #: local name → (module spec, imported name; ``*`` for the module itself)
    imports: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    stars: list[str] = field(default_factory=list)
    package: str = ""  # a Go file's package name

    @classmethod
    def of(cls, refs: FileRefs) -> FileFacts:
        facts = cls(refs.language)
        for fact in refs.facts:
            if fact.kind == "bind":
                facts.binds[(fact.scope, fact.name)] = fact.values
            elif fact.kind == "returns":
                facts.returns[fact.scope] = fact.values
            elif fact.kind == "yields":
                facts.yields[fact.scope] = fact.values
            elif fact.kind == "property":
                facts.properties.add(fact.scope)
            elif fact.kind == "package":
                facts.package = fact.name
        for ref in refs.references:
            if ref.kind == "extends" and ref.scope:
                facts.bases.setdefault(ref.scope, []).append(ref.hint or _written(ref.qualifier, ref.name))
        local = {int(line) for f in refs.facts if f.kind == "local_imports" for line in f.values}
        for imp in refs.imports:
            if imp.line in local:
                continue  # bound inside a function: its own scope says so
            for imported, alias in imp.names or (("*", imp.module),):
                if imported == "*" and alias == "*":
                    facts.stars.append(imp.module)
                elif imported == "*" and refs.language == "python" and "." in alias and alias == imp.module:
                    head = alias.split(".", 1)[0]  # ``import a.b`` binds ``a``
                    facts.imports.setdefault(head, []).append((head, "*"))
                else:
                    facts.imports.setdefault(alias, []).append((imp.module, imported))
        return facts


def _written(qualifier: str, name: str) -> str:
    dotted = f"{qualifier}.{name}" if qualifier else name
    return dotted if parse_expression(dotted) is not None else "?"


@dataclass
class Evaluator:
    """Evaluates value expressions against one symbol table (caches live as long as it)."""

    table: SymbolTable
    _facts: dict[str, FileFacts | None] = field(default_factory=dict)
    _names: dict[tuple[str, str], list[Value]] = field(default_factory=dict)
    _mro: dict[str, tuple[list[Sym], bool]] = field(default_factory=dict)
    _evaluated: dict[tuple[str, str], list[Value]] = field(default_factory=dict)
    _members: dict[tuple[str, str, str], list[Value]] = field(default_factory=dict)
    _member_index: dict[str, dict[str, Sym]] = field(default_factory=dict)
    _busy: set[tuple[str, str]] = field(default_factory=set)
    _nested: int = 0
    #: path → how many of its references failed to resolve (``resolve_file`` counts them)
    failed: dict[str, int] = field(default_factory=dict)
    #: how many times a guard refused (a cycle, or too deep): a result computed while this
    #: grew depends on where the evaluation started, so it is not cached (the answers of a
    #: full and an incremental index must not depend on the order files are resolved in)
    _refused: int = 0

    # -- facts ----------------------------------------------------------------------------------

    def facts(self, path: str) -> FileFacts | None:
        if path not in self._facts:
            refs = self.table.refs_of(path)
            self._facts[path] = None if refs is None else FileFacts.of(refs)
        return self._facts[path]

    @contextmanager
    def _guard(self, key: tuple[str, str]) -> Iterator[bool]:
        if key in self._busy or len(self._busy) > _MAX_DEPTH:
            self._refused += 1
            yield False
            return
        self._busy.add(key)
        try:
            yield True
        finally:
            self._busy.discard(key)

    # -- expressions ----------------------------------------------------------------------------

    def evaluate(self, path: str, text: str) -> list[Value]:
        """Every value ``text`` (value expressions joined by ``|``) can hold in ``path``."""
        key = (path, text)
        cached = self._evaluated.get(key)
        if cached is not None:
            return cached
        if self._nested >= _MAX_NESTED:  # a chain too deep to follow: say unknown, never recurse on
            self._refused += 1
            return [UNKNOWN]
        refused = self._refused
        self._nested += 1
        try:
            found = self._evaluate(path, text)
        finally:
            self._nested -= 1
        if self._refused == refused:
            self._evaluated[key] = found
        return found

    def _evaluate(self, path: str, text: str) -> list[Value]:
        out: list[Value] = []
        for part in text.split("|"):
            parsed = parse_expression(part)
            values = [UNKNOWN] if parsed is None else self._steps(path, *parsed)
            out.extend(v for v in values if v not in out)
        return out[:_MAX_VALUES]

    def _steps(self, path: str, atom: str, suffixes: tuple[str, ...]) -> list[Value]:
        values = self.atom(path, atom)
        for suffix in suffixes:
            values = _dedupe(v for value in values for v in self.step(value, suffix))
            if not values:
                break
        return values

    def atom(self, path: str, atom: str) -> list[Value]:
        if atom == "?":
            return [UNKNOWN]
        if atom == "!":
            return [EXTERNAL]
        if atom.startswith("#"):
            return [Value("object", paths=(path,), how=atom[1:-1])]
        if atom.startswith("{"):
            spec, _, what = atom[1:-1].rpartition(":")
            facts = self.facts(path)
            language = facts.language if facts is not None else "python"
            return [_as_import(v) for v in self._imported(path, spec, what, language)]
        if atom.endswith(">"):
            marker, qualified = atom[0], atom[atom.index("<") + 1 : -1]
            sym = self.table.by_infile.get((path, qualified))
            if sym is None and path.endswith(".go"):  # a Go type of another file of the package
                types = [
                    s
                    for s in self.table.named_in_dir(posixpath.dirname(path), qualified)
                    if s.kind in TYPE_KINDS and "." not in s.infile
                ]
                sym = types[0] if len(types) == 1 else None
            if sym is None:
                return [UNKNOWN]
            if marker == "&":
                return [Value("inst", sym, how="self")]
            if marker == "^":
                return [Value("super", sym)]
            return [Value("sym", sym, how="same_file")]
        values = self.module_name(path, atom, origin=True)
        return values or [UNKNOWN]

    def step(self, value: Value, suffix: str) -> list[Value]:
        if value.kind in ("ext", "unk"):
            return [value]
        if value.kind == "gen" and suffix != "[]":
            return [EXTERNAL]  # a generator's own methods (send, close) are Python's
        if suffix == "()":
            return self.called(value)
        if suffix == "[]":
            return self.element(value)
        name = suffix[1:]
        if value.kind == "object":  # a module-level object literal's property
            found = self.module_name(value.paths[0], f"{value.how}.{name}", origin=False)
            return [_as_import(v) for v in found] or [UNKNOWN]
        if value.kind == "module" and value.how.startswith("namespace:"):
            dotted = value.how.split(":", 1)[1] + "." + name
            sub = self.table.paths_by_module_suffix.get(dotted, [])
            exact = [
                p for p in sub if p.rsplit(".", 1)[0].replace("/", ".").removesuffix(".__init__") == dotted
            ]
            if exact:
                return [Value("module", paths=tuple(exact))]
            return [Value("module", how="namespace:" + dotted)] if self._is_namespace(dotted) else [UNKNOWN]
        if value.kind == "module":
            found = [v for p in value.paths for v in self.module_name(p, name, origin=False)]
            return _dedupe(_as_import(v) for v in found) or [UNKNOWN]
        if value.sym is None:
            return [UNKNOWN]
        if value.kind == "super":
            return self.attribute(value.sym, name, after=value.sym, how="member")
        if value.kind == "inst":
            return self.attribute(
                value.sym, name, after=None, how="member" if value.how == "self" else "typed"
            )
        if value.sym.kind in TYPE_KINDS:
            return self.attribute(value.sym, name, after=None, how="member", on_class=True)
        return [UNKNOWN]

    def element(self, value: Value) -> list[Value]:
        """An element of ``value``: what a generator yields; for an instance, what its
        ``__getitem__`` returns, else what ``__iter__().__next__()`` returns."""
        sym = value.sym
        if value.kind == "gen" and sym is not None:
            facts = self.facts(sym.path)
            yielded = facts.yields.get(sym.infile) if facts is not None else None
            if not yielded:
                return [UNKNOWN]
            # a recursive generator yields what it yields (``for x in walk(c): yield x``)
            with self._guard((sym.path, "yields:" + sym.infile)) as free:
                return self.evaluate(sym.path, "|".join(yielded)) if free else [UNKNOWN]
        if value.kind != "inst" or sym is None:
            return [UNKNOWN]
        for first, then in (("__getitem__", ""), ("__iter__", "__next__")):
            found = self.member(sym, first, after=None)
            values = _dedupe(v for m in found for v in self.called(m))
            if then:
                values = _dedupe(
                    v
                    for i in values
                    if i.kind == "inst" and i.sym is not None
                    for m in self.member(i.sym, then, after=None)
                    for v in self.called(m)
                )
            if any(v.kind not in ("unk", "ext") for v in values):
                return values
        return [UNKNOWN]

    def called(self, value: Value) -> list[Value]:
        if value.kind in ("ext", "unk"):
            return [value]
        sym = value.sym
        if value.kind == "sym" and sym is not None:
            if sym.kind in TYPE_KINDS:
                return [Value("inst", sym, how="typed")]
            if sym.kind in (SymbolKind.FUNCTION, SymbolKind.METHOD):
                return self.returned(sym)
        if value.kind == "inst" and sym is not None:
            found = self.member(sym, "__call__", after=None)
            return _dedupe(v for m in found for v in self.called(m)) or [UNKNOWN]
        if value.kind == "module":
            return [EXTERNAL]
        return [UNKNOWN]

    def returned(self, function: Sym) -> list[Value]:
        facts = self.facts(function.path)
        if facts is not None and function.infile in facts.yields:
            return [Value("gen", function)]
        values = facts.returns.get(function.infile) if facts is not None else None
        if not values:
            return [UNKNOWN]
        with self._guard((function.path, "returns:" + function.infile)) as free:
            if not free:
                return [UNKNOWN]
            out = self.evaluate(function.path, "|".join(values))
        return [Value(v.kind, v.sym, v.paths, "typed") if v.kind == "inst" else v for v in out]

    # -- names ----------------------------------------------------------------------------------

    def module_name(self, path: str, name: str, *, origin: bool) -> list[Value]:
        """What ``name`` holds at the module scope of ``path`` (``[]``: not bound there).

        ``origin``: the file the expression is written in (builtins count there, and a
        definition found is ``same_file``); otherwise an attribute of an imported module."""
        key = (path, name if origin else "." + name)
        cached = self._names.get(key)
        if cached is not None:
            return cached
        refused = self._refused
        with self._guard(key) as free:
            if not free:
                return [UNKNOWN]
            found = self._module_name(path, name, origin=origin)
        if self._refused == refused:
            self._names[key] = found
        return found

    def _module_name(self, path: str, name: str, *, origin: bool) -> list[Value]:
        defined = [
            s
            for s in self.table.named_in_path(path, name)
            if "." not in s.infile and s.infile and s.kind != SymbolKind.CONSTANT
        ]
        if defined:
            return [Value("sym", s, how="same_file") for s in sorted(defined, key=lambda s: s.id)]
        facts = self.facts(path)
        if facts is None:
            return []
        if facts.language == "go":
            return self._go_package_name(path, name, facts, origin=origin)
        bound = facts.binds.get(("", name))
        if bound:
            return self.evaluate(path, "|".join(bound))
        imported = facts.imports.get(name)
        if imported:
            values = _dedupe(
                v for spec, what in imported for v in self._imported(path, spec, what, facts.language)
            )
            return [_as_import(v) for v in values]
        if not origin:
            sub = self._submodule(path, name)
            if sub:
                return [Value("module", paths=tuple(sub))]
        for spec in facts.stars:
            paths = self.module_paths(path, spec, facts.language)
            for target in paths:
                values = self.module_name(target, name, origin=False)
                if values:
                    return [_as_import(v) for v in values]
        if origin and facts.language == "python":
            if name in PYTHON_BUILTINS:
                return [EXTERNAL]
            if any(not self.module_paths(path, spec, facts.language) for spec in facts.stars):
                return [UNKNOWN]  # maybe from an external module's ``*``
        if facts.language in _JS_LANGUAGES:
            if name == "default" and ("", "module.exports") in facts.binds:
                return self.module_name(path, "module.exports", origin=origin)  # CommonJS
            if origin and name in JS_GLOBALS:
                return [EXTERNAL]
        return []

    def _go_package_name(self, path: str, name: str, facts: FileFacts, *, origin: bool) -> list[Value]:
        """A Go name: the file's imports, then the package's (directory's) declarations and
        package-level variables, then Go's predeclared names."""
        imported = facts.imports.get(name)
        if imported and origin:
            return _dedupe(
                _as_import(v) for spec, what in imported for v in self._imported(path, spec, what, "go")
            )
        package = [
            s
            for s in self.table.named_in_dir(posixpath.dirname(path), name)
            if "." not in s.infile and s.infile and s.kind != SymbolKind.CONSTANT and s.path.endswith(".go")
        ]
        if package:
            return [
                Value("sym", s, how="same_file") for s in sorted(package, key=lambda s: s.id)[:_MAX_VALUES]
            ]
        for other in [path, *self.table.paths_by_dir.get(posixpath.dirname(path), [])]:
            other_facts = self.facts(other) if other.endswith(".go") else None
            bound = other_facts.binds.get(("", name)) if other_facts is not None else None
            if bound:
                return self.evaluate(other, "|".join(bound))
        if origin and name in GO_PREDECLARED:
            return [EXTERNAL]
        return []

    def _imported(self, path: str, spec: str, what: str, language: str) -> list[Value]:
        paths = self.module_paths(path, spec, language)
        if not paths and language == "go":
            paths = self._go_root_package(spec)
        if not paths:
            if language == "python" and what == "*" and self._is_namespace(spec):
                return [Value("module", how="namespace:" + spec)]
            # a relative spec names the repository's code, even when no file of it is found (a
            # package.json "main", a generated file): unknown, not external
            return [UNKNOWN] if spec.startswith(".") else [EXTERNAL]
        if what == "*":
            if language in _JS_LANGUAGES:  # a CommonJS module is what it assigns to module.exports
                exported = [v for p in paths for v in self.module_name(p, "module.exports", origin=False)]
                if exported:
                    return exported
            return [Value("module", paths=tuple(paths))]
        found = [v for p in paths for v in self.module_name(p, what, origin=False)]
        if any(v.kind != "unk" for v in found):
            return found
        joined = spec + what if spec.endswith(".") else f"{spec}.{what}"
        sub = self.module_paths(path, joined, language) if language == "python" else []
        if sub:  # ``from pkg import mod``: the submodule
            return [Value("module", paths=tuple(sub))]
        return found or [UNKNOWN]

    def module_paths(self, path: str, spec: str, language: str) -> list[str]:
        return module_paths(self.table, path, language, spec)

    def _go_root_package(self, spec: str) -> list[str]:
        """The repository root's Go files when their package is the one an import path names
        (``github.com/go-chi/chi/v5`` imports the package ``chi`` of a module rooted here)."""
        segments = [s for s in spec.split("/") if s]
        if len(segments) < 2:
            return []
        name = segments[-2] if re.fullmatch(r"v[0-9]+", segments[-1]) else segments[-1]
        name = name.removeprefix("go-").removesuffix(".go")
        root = [
            p for p in self.table.paths_by_dir.get("", []) if p.endswith(".go") and not p.endswith("_test.go")
        ]
        packages = {(self.facts(p) or FileFacts("go")).package for p in root}
        return root if packages == {name} else []

    def _is_namespace(self, dotted: str) -> bool:
        """A directory of the repository named by a dotted path (a package without ``__init__``)."""
        return bool(self.table.dirs_by_suffix.get(dotted.replace(".", "/")))

    def _submodule(self, path: str, name: str) -> list[str]:
        if not path.endswith("/__init__.py"):
            return []
        base = posixpath.dirname(path)
        return [p for p in (f"{base}/{name}.py", f"{base}/{name}/__init__.py") if p in self.table.module_of]

    # -- classes --------------------------------------------------------------------------------

    def mro(self, cls: Sym) -> tuple[list[Sym], bool]:
        """The class's method resolution order (C3) and whether it is open (some base is not a
        class of the repository, so a member may come from elsewhere)."""
        cached = self._mro.get(cls.id)
        if cached is not None:
            return cached
        refused = self._refused
        with self._guard((cls.path, "mro:" + cls.infile)) as free:
            if not free:
                return [cls], True
            bases, open_ = self._bases(cls)
            lines = []
            for base in bases:
                line, base_open = self.mro(base)
                lines.append(line)
                open_ = open_ or base_open
            order = _c3([cls], [*lines, bases])
        result = (order, open_)
        if self._refused == refused:
            self._mro[cls.id] = result
        return result

    def _bases(self, cls: Sym) -> tuple[list[Sym], bool]:
        facts = self.facts(cls.path)
        written = facts.bases.get(cls.infile, []) if facts is not None else []
        bases: list[Sym] = []
        open_ = False
        for hint in written:
            values = self.evaluate(cls.path, hint)
            classes = [
                v.sym for v in values if v.kind == "sym" and v.sym is not None and v.sym.kind in TYPE_KINDS
            ]
            if classes and classes[0].id != cls.id and all(b.id != classes[0].id for b in bases):
                bases.append(classes[0])
            if len(classes) != len(values) or not classes:
                open_ = True
        return bases, open_

    def member(self, cls: Sym, name: str, *, after: Sym | None) -> list[Value]:
        """``name`` along the MRO of ``cls`` (after ``after`` when given): a member definition
        or a ``bind`` fact; ``[UNKNOWN]`` when the MRO is open, ``[]`` when nothing has it."""
        key = (cls.id, name, after.id if after is not None else "")
        cached = self._members.get(key)
        if cached is not None:
            return cached
        refused = self._refused
        found = self._member(cls, name, after=after)
        if self._refused == refused:
            self._members[key] = found
        return found

    def _member(self, cls: Sym, name: str, *, after: Sym | None) -> list[Value]:
        order, open_ = self.mro(cls)
        if after is not None:
            index = next((i for i, c in enumerate(order) if c.id == after.id), -1)
            order = order[index + 1 :]
        for owner in order:
            member = self._members_of(owner).get(name)
            if member is not None:
                return [Value("sym", member)]
            facts = self.facts(owner.path)
            bound = facts.binds.get((owner.infile, name)) if facts is not None else None
            if bound:
                with self._guard((owner.path, f"bind:{owner.infile}.{name}")) as free:
                    return self.evaluate(owner.path, "|".join(bound)) if free else [UNKNOWN]
        return [UNKNOWN] if open_ else []

    def _members_of(self, owner: Sym) -> dict[str, Sym]:
        """The class's members by name (the first by id where a name repeats)."""
        index = self._member_index.get(owner.id)
        if index is None:
            index = {}
            for sym in sorted(self.table.members(owner.id), key=lambda s: s.id):
                index.setdefault(sym.name, sym)
            self._member_index[owner.id] = index
        return index

    def attribute(
        self, cls: Sym, name: str, *, after: Sym | None, how: str, on_class: bool = False
    ) -> list[Value]:
        found = self.member(cls, name, after=after)
        out: list[Value] = []
        for value in found:
            sym = value.sym
            if value.kind == "sym" and sym is not None and sym.kind == SymbolKind.METHOD and not on_class:
                facts = self.facts(sym.path)
                if facts is not None and sym.infile in facts.properties:
                    out.extend(self.returned(sym))
                    continue
            if value.kind == "sym" and not value.how:
                value = Value("sym", sym, value.paths, how)
            out.append(value)
        if not found:
            return [EXTERNAL]  # the class and its bases are known and do not have it
        return _dedupe(out)

    # -- the answer for a reference -------------------------------------------------------------

    def callee(
        self, path: str, hint: str, wanted: frozenset[str]
    ) -> tuple[list[tuple[Sym, str]], list[Value]]:
        """The symbols of kinds ``wanted`` the hint names, each with its rule, and every value
        the hint holds (for the caller's fallbacks)."""
        values = self.evaluate(path, hint)
        found: list[tuple[Sym, str]] = []
        for value in values:
            sym = value.sym
            if (
                value.kind == "sym"
                and sym is not None
                and sym.kind in wanted
                and all(sym.id != s.id for s, _ in found)
            ):
                found.append((sym, value.how or "same_file"))
        return found, values


def _as_import(value: Value) -> Value:
    if value.kind == "sym":
        return Value("sym", value.sym, value.paths, "import")
    return value


def _dedupe(values: Iterator[Value] | list[Value]) -> list[Value]:
    out: list[Value] = []
    for value in values:
        if value not in out:
            out.append(value)
        if len(out) >= _MAX_VALUES:
            break
    return out


def _c3(head: list[Sym], sequences: list[list[Sym]]) -> list[Sym]:
    """C3 linearisation; on an inconsistent hierarchy, the depth-first order without repeats."""
    result = list(head)
    pending = [list(s) for s in sequences if s]
    while pending:
        candidate = None
        for sequence in pending:
            first = sequence[0]
            if not any(first.id in {c.id for c in s[1:]} for s in pending):
                candidate = first
                break
        if candidate is None:
            seen = {c.id for c in result}
            for sequence in sequences:
                for c in sequence:
                    if c.id not in seen:
                        seen.add(c.id)
                        result.append(c)
            return result
        if all(c.id != candidate.id for c in result):
            result.append(candidate)
        pending = [[c for c in sequence if c.id != candidate.id] for sequence in pending]
        pending = [s for s in pending if s]
    return result
