"""The scopes of one file, language-neutral: bindings, lookups, value expressions, facts.

A language's scopes module (``python_scopes.py``, ``js_scopes.py``) collects the scopes of a
file (functions and classes with their body spans) and what binds names in them, and says what
an expression holds (``_value``) and what a type annotation describes (``annotation_values``);
``FileScopesBase`` answers lookups and gives the file's facts. Value expressions are described
in ``knowing_pr/model.py``.

- a name read in a function or class body holds what its bindings there hold: the last one
  before the read when the read is in that very scope, all of them from a nested function;
  class bodies are not seen from their methods; the module scope gives the name itself (the
  resolver looks it up), or a module variable's last assignment before a module-level read;
- parameters without annotation hold what the file's own calls pass when they all agree;
- facts: module variables and class or instance attributes (``bind``), what a function returns
  (``returns``) or yields (``yields``), which methods are read as attributes (``property``).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from tree_sitter import Node

from knowing_pr.model import Fact

__all__ = [
    "EXTERNAL",
    "MAX_VALUES",
    "MAX_VALUE_CHARS",
    "UNKNOWN",
    "Binding",
    "FileScopesBase",
    "Scope",
    "suffixed",
    "union",
]

#: values kept per union, and the longest value expression kept (longer ones become ``?``)
MAX_VALUES = 4
MAX_VALUE_CHARS = 160
UNKNOWN = "?"
EXTERNAL = "!"
#: the first name of an expression's text, when it is ASCII and followed by ``.``, ``(`` or the end
_ROOT_NAME = re.compile(rb"[A-Za-z_$][A-Za-z0-9_$]*(?![A-Za-z0-9_$\x80-\xff])")


@dataclass(eq=False, slots=True)
class Binding:
    name: str
    position: int  # the name holds the value from this byte on
    node: Node | None  # an expression to evaluate in ``scope`` …
    suffix: str = ""  # … with this suffix appended
    values: tuple[str, ...] | None = None  # or fixed values
    annotation: Node | None = None  # a type annotation (wins over ``node``)
    definition: bool = False  # a nested ``def``/``class`` (the graph has it as a node)
    #: a parameter's arguments at the file's own calls of its function
    sources: list[Node] | None = None


@dataclass(eq=False)
class Scope:
    kind: str  # module | function | class
    qualified_name: str
    body: tuple[int, int]
    parent: Scope | None = None
    node: Node | None = None
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    globals: set[str] = field(default_factory=set)
    #: (start, end, names, values per name): lambda parameters and comprehension variables
    limited: list[tuple[int, int, dict[str, Binding]]] = field(default_factory=list)
    receiver: str = ""  # a method's ``self``/``cls`` parameter name
    receiver_value: str = ""
    returns: list[Node] = field(default_factory=list)
    yields: list[Node] = field(default_factory=list)
    generator: bool = False
    #: the parameters a call's arguments bind, in order (``self``/``cls`` left out), and by name
    positional: list[Binding] = field(default_factory=list)
    keywords: dict[str, Binding] = field(default_factory=dict)
    decorators: tuple[str, ...] = ()

    def bind(self, binding: Binding) -> None:
        self.bindings.setdefault(binding.name, []).append(binding)

    @property
    def enclosing_class(self) -> Scope | None:
        scope: Scope | None = self
        while scope is not None and scope.kind != "module":
            if scope.kind == "function" and scope.parent is not None and scope.parent.kind == "class":
                return scope.parent
            scope = scope.parent
        return None


def union(groups: Iterable[Iterable[str]]) -> list[str]:
    out: list[str] = []
    for group in groups:
        for value in group:
            if value not in out:
                out.append(value)
    if len(out) > 1 and UNKNOWN in out:
        out.remove(UNKNOWN)  # something known beats "unknown" in a union
    return out[:MAX_VALUES]


def suffixed(values: list[str], suffix: str) -> list[str]:
    if len(values) == 1:
        value = values[0]
        if value in (UNKNOWN, EXTERNAL):
            return values
        joined = value + suffix
        return [joined if len(joined) <= MAX_VALUE_CHARS else UNKNOWN]
    out = []
    for value in values:
        if value in (UNKNOWN, EXTERNAL):
            out.append(value)
        else:
            joined = value + suffix
            out.append(joined if len(joined) <= MAX_VALUE_CHARS else UNKNOWN)
    return union([out])


class FileScopesBase:
    """Lookups, values and facts over scopes a language module collected (module docstring).

    A subclass fills ``module`` and ``all_scopes``, calls ``index_scopes`` once the function and
    class scopes are known, binds names, calls ``finish``; and implements ``_value`` (what an
    expression holds), ``annotation_values`` (what a type annotation describes), and
    ``return_annotation`` / ``is_property`` for the facts.
    """

    def __init__(self, root: Node, source: bytes) -> None:
        self.source = source
        self.module = Scope("module", "", (root.start_byte, root.end_byte + 1), node=root)
        self.all_scopes: list[Scope] = [self.module]
        self._memo: dict[int, list[str]] = {}
        self._hints: dict[tuple[int, bytes], list[str]] = {}
        self._busy: set[int] = set()
        self._by_start: list[Scope] = []
        self._starts: list[int] = []
        #: (class qualified name, binding, scope to evaluate it in): ``self.x = …`` in methods
        self.attributes: list[tuple[str, Binding, Scope]] = []

    def nested(self, found: Iterable[tuple[Node, str]]) -> Iterator[tuple[Node, str, Node, Scope]]:
        """Definitions (node, kind) in source order, each with a body, with the scope that encloses
        it: (node, kind, body, parent). The caller appends each scope it makes to
        ``self.all_scopes``; the scope of the innermost definition still open is the parent."""
        stack: list[Scope] = [self.module]
        for node, kind in sorted(found, key=lambda item: (item[0].start_byte, -item[0].end_byte)):
            body = node.child_by_field_name("body")
            if body is None:
                continue
            while (
                len(stack) > 1 and stack[-1].node is not None and stack[-1].node.end_byte <= node.start_byte
            ):
                stack.pop()
            count = len(self.all_scopes)
            yield node, kind, body, stack[-1]
            if len(self.all_scopes) > count:
                stack.append(self.all_scopes[-1])

    def index_scopes(self) -> None:
        """Make ``scope_at`` know every scope (bodies sorted by start)."""
        self._by_start = sorted(self.all_scopes[1:], key=lambda s: (s.body[0], -s.body[1]))
        self._starts = [s.body[0] for s in self._by_start]

    # -- to implement -------------------------------------------------------------------------

    def _value(self, node: Node, scope: Scope, depth: int) -> list[str]:
        raise NotImplementedError

    def annotation_values(self, node: Node) -> list[str]:
        raise NotImplementedError

    def return_annotation(self, scope: Scope) -> Node | None:
        return None

    def is_property(self, scope: Scope) -> bool:
        return False

    # -- evaluation ---------------------------------------------------------------------------

    def finish(self) -> None:
        """Order every name's bindings by position (matches arrive in pattern order)."""
        for scope in self.all_scopes:
            for bindings in scope.bindings.values():
                bindings.sort(key=lambda b: b.position)

    def scope_at(self, position: int) -> Scope:
        """The innermost function or class whose body holds ``position`` (else the module)."""
        index = bisect_right(self._starts, position) - 1
        if index < 0:
            return self.module
        scope: Scope | None = self._by_start[index]
        while scope is not None and scope.kind != "module" and not scope.body[0] <= position < scope.body[1]:
            scope = scope.parent
        return scope or self.module

    def lookup(self, name: str, scope: Scope, position: int) -> list[str]:
        """What ``name`` read at ``position`` in ``scope`` holds (``name`` itself at module scope)."""
        if scope.kind == "module":
            return self._module_read(name, position)
        current: Scope | None = scope
        here = True
        while current is not None and current.kind != "module":
            if current.kind == "class" and not here:
                current = current.parent
                continue
            for start, end, names in current.limited:
                if start <= position < end and name in names:
                    return self._binding_values(names[name])
            if name in current.globals:
                return [name]
            bindings = current.bindings.get(name)
            if bindings:
                if len(bindings) == 1:
                    return self._binding_values(bindings[0])
                chosen = bindings
                if here:
                    chosen = [b for b in bindings if b.position <= position][-1:] or bindings
                return union(self._binding_values(b) for b in chosen)
            here = False
            current = current.parent
        return [name]

    def _module_read(self, name: str, position: int) -> list[str]:
        """A module-level read of a module variable holds what its last assignment before the
        read assigned (the name itself, for the resolver, when a definition or an import may
        bind it, or nothing precedes the read: then every assignment counts)."""
        bindings = self.module.bindings.get(name)
        if not bindings or any(b.definition for b in bindings):
            return [name]
        before = [b for b in bindings if b.position <= position]
        return self._binding_values(before[-1]) if before else [name]

    def _binding_values(self, binding: Binding) -> list[str]:
        if binding.values is not None:
            return list(binding.values)
        key = id(binding)
        memo = self._memo.get(key)
        if memo is not None:
            return memo
        if key in self._busy:
            return [UNKNOWN]
        self._busy.add(key)
        try:
            if binding.annotation is not None:
                values = self.annotation_values(binding.annotation)
            elif binding.sources is not None:
                values = self._argument_values(binding.sources)
            elif binding.node is not None:
                values = (
                    suffixed(self.value_of(binding.node), binding.suffix)
                    if binding.suffix
                    else self.value_of(binding.node)
                )
            else:
                values = [UNKNOWN]
        finally:
            self._busy.discard(key)
        self._memo[key] = values
        return values

    def _argument_values(self, sources: list[Node]) -> list[str]:
        """What a parameter holds from the file's own calls: what they all pass, when they agree
        and it is known; else unknown (callers that pass different things would give every
        call of the function all of them)."""
        found = [self.value_of(node) for node in sources]
        if not found or any(not values or UNKNOWN in values or values != found[0] for values in found):
            return [UNKNOWN]
        return found[0]

    def value_of(self, node: Node) -> list[str]:
        """What the expression ``node`` holds, as value expressions (at most ``MAX_VALUES``)."""
        return self._value(node, self.scope_at(node.start_byte), 0)

    def values_at(self, node: Node) -> list[str]:
        """``value_of``, cached per scope and text where the position cannot matter: unless the
        expression's first name has several bindings in its scope, or a lambda/comprehension
        binds names there (then the position decides)."""
        scope = self.scope_at(node.start_byte)
        text = self.source[node.start_byte : node.end_byte]
        key = None
        root = _ROOT_NAME.match(text)
        if root is not None and not scope.limited:
            bindings = scope.bindings.get(root.group(0).decode("ascii"))
            if bindings is None or len(bindings) == 1:
                key = (id(scope), text)
                cached = self._hints.get(key)
                if cached is not None:
                    return cached
        values = self._value(node, scope, 0)
        if key is not None:
            self._hints[key] = values
        return values

    def hint_of_name(self, name: str, position: int, suffix: str = "") -> str:
        """The name read at ``position`` (then ``suffix``) as value expressions joined by ``|``."""
        values = self.lookup(name, self.scope_at(position), position)
        return "|".join(suffixed(values, suffix) if suffix else values) or UNKNOWN

    def hint_of(self, node: Node, suffix: str = "") -> str:
        """The expression ``node`` (then ``suffix``) as value expressions joined by ``|``."""
        values = self.values_at(node)
        return "|".join(suffixed(values, suffix) if suffix else values) or UNKNOWN

    # -- facts --------------------------------------------------------------------------------

    def facts(self) -> list[Fact]:
        """Module variables, class attributes, what functions return, which methods are properties."""
        out: list[Fact] = []
        attributes: dict[str, dict[str, list[str]]] = {}
        for class_name, binding, _scope in self.attributes:
            found = attributes.setdefault(class_name, {}).setdefault(binding.name, [])
            found[:] = union([found, self._binding_values(binding)])
        for scope in self.all_scopes:
            if "#" in scope.qualified_name:
                continue  # an anonymous function or class: no definition to hold facts
            if scope.kind == "function":
                out.extend(self._function_facts(scope))
                continue
            names = attributes.get(scope.qualified_name, {}) if scope.kind == "class" else {}
            for name in sorted(set(scope.bindings) | set(names)):
                bound = [b for b in scope.bindings.get(name, []) if not b.definition]
                values = union([*(self._binding_values(b) for b in bound), names.get(name, [])])
                if not bound and name not in names:
                    continue
                if scope.kind == "class" and (not values or values == [UNKNOWN]):
                    continue
                out.append(Fact("bind", scope.qualified_name, name, tuple(values or [UNKNOWN])))
        return out

    def _function_facts(self, scope: Scope) -> list[Fact]:
        out: list[Fact] = []
        annotation = self.return_annotation(scope)
        if scope.generator:
            yielded = union(self.value_of(y) for y in scope.yields)
            if yielded and yielded != [UNKNOWN]:
                out.append(Fact("yields", scope.qualified_name, "", tuple(yielded)))
            values = [EXTERNAL]
        elif annotation is not None:
            values = self.annotation_values(annotation)
        else:
            values = union(self.value_of(r) for r in scope.returns)
        if values and values != [UNKNOWN]:
            out.append(Fact("returns", scope.qualified_name, "", tuple(values)))
        if self.is_property(scope):
            out.append(Fact("property", scope.qualified_name, ""))
        return out
