"""Plain records shared by every stage (no I/O): parse output, graph nodes and edges.

Parse stage output (per file, language-neutral):
    ``Definition``  a symbol the file defines
    ``Reference``   a name the file uses (call, inheritance, type use)
    ``Import``      a module the file imports, with the names it binds
    ``Fact``        what a name of the file holds, for other files' resolution
    ``ParsedFile``  all of the above for one file

Value expressions (``Reference.hint``, ``Fact.values``): what a name or an expression holds,
written by a language's extractor after its own scopes were applied (locals and parameters
replaced by what they hold), evaluated by the resolver (``knowing_pr/graph/values.py``) against
the whole repository. One atom, then any number of suffixes:

- atoms: ``NAME`` (a name of the file's module scope: a definition, an import, a module-level
  variable or a builtin), ``<q.n>`` (the file's own definition with in-file qualified name
  ``q.n``), ``&<q.n>`` (``self``: an instance of the file's class ``q.n``), ``^<q.n>``
  (``super()`` inside class ``q.n``), ``{spec:name}`` (what an import of ``name`` from the module
  ``spec`` binds; ``*``: the module), ``#name#`` (the object literal the file's module-level
  ``name`` holds: its properties are the module facts ``name.property``), ``?`` (unknown: an
  unannotated parameter, a loop variable), ``!`` (certainly not the repository's code: a
  literal, a builtin's result);
- suffixes: ``.name`` (an attribute), ``()`` (the result of calling it), ``[]`` (an element).

Graph stage output:
    ``Node``  a resolved symbol with a stable id
    ``Edge``  a typed, weighted, confidence-rated link between two node ids
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import IntEnum
from typing import NamedTuple

__all__ = [
    "CallSite",
    "ChangeSummary",
    "Definition",
    "Edge",
    "Fact",
    "EdgeKind",
    "Import",
    "LANGUAGES",
    "Node",
    "Pack",
    "ParsedFile",
    "RankedFile",
    "Reference",
    "RemovedSymbol",
    "Reviewer",
    "ScoredSymbol",
    "SymbolKind",
    "TYPE_KINDS",
    "TestToRun",
    "node_id",
]


class EdgeKind(IntEnum):
    """Edge types; the values are the stable ids used in the store and the adjacency blob."""

    CALLS = 1
    IMPORTS = 2
    CONTAINS = 3
    MEMBER_OF = 4
    EXTENDS = 5
    IMPLEMENTS = 6
    INHERITS = 7
    REFERENCES = 8
    TESTS = 9
    CO_CHANGED_WITH = 10

    @property
    def label(self) -> str:
        return self.name.lower()


#: the languages the index knows (the ``language`` of files and nodes); ``parse`` maps file
#: extensions to them
LANGUAGES = frozenset({"csharp", "go", "java", "javascript", "python", "ruby", "rust", "tsx", "typescript"})


class SymbolKind:
    """Symbol kinds as strings (stored verbatim in the store and the JSON contract)."""

    MODULE = "module"
    CLASS = "class"
    STRUCT = "struct"
    INTERFACE = "interface"
    TRAIT = "trait"
    ENUM = "enum"
    FUNCTION = "function"
    METHOD = "method"
    CONSTANT = "constant"

    ALL = (MODULE, CLASS, STRUCT, INTERFACE, TRAIT, ENUM, FUNCTION, METHOD, CONSTANT)


#: kinds that can contain methods and take part in inheritance
TYPE_KINDS = frozenset(
    {SymbolKind.CLASS, SymbolKind.STRUCT, SymbolKind.INTERFACE, SymbolKind.TRAIT, SymbolKind.ENUM}
)


@dataclass(frozen=True, slots=True)
class Definition:
    """A symbol defined in a file.

    ``qualified_name`` is relative to the file's module: ``C.f`` for method ``f`` of class
    ``C``; the graph stage prefixes the module name. ``parent`` is the in-file qualified
    name of the enclosing definition (``C`` for ``C.f``) or ``None`` at top level. Lines are
    1-based and inclusive; bytes are the half-open source range used for ``content_hash``.
    """

    name: str
    qualified_name: str
    kind: str
    start_line: int
    end_line: int
    start_byte: int
    end_byte: int
    signature: str = ""
    doc: str = ""
    parent: str | None = None


@dataclass(frozen=True, slots=True)
class Reference:
    """A use of a name inside a file.

    ``kind`` is one of ``call``, ``extends``, ``implements``, ``type``.
    ``name`` is the bare identifier (``g`` in ``b.g()``); ``qualifier`` the text before it
    (``b``, ``self``, ``os.path``) or ``""``. ``scope`` is the in-file qualified name of the
    innermost enclosing definition, ``None`` at module level. ``line`` is 1-based. ``hint``: the
    used expression as value expressions joined by ``|`` (module docstring), ``""`` when the
    extractor has none (the resolver then reads ``qualifier`` and ``name`` as written).
    """

    kind: str
    name: str
    line: int
    scope: str | None = None
    qualifier: str = ""
    hint: str = ""


@dataclass(frozen=True, slots=True)
class Import:
    """An import statement.

    ``module`` is the module spec as written (``b``, ``.b``, ``./x.js``, ``github.com/a/b``,
    ``java.util.List``, ``crate::x::y``). ``names`` are the (imported name, local alias)
    pairs it binds; a whole-module import binds ``("*", alias-or-last-segment)``.
    """

    module: str
    names: tuple[tuple[str, str], ...] = ()
    line: int = 0


@dataclass(frozen=True, slots=True)
class Fact:
    """What a name of the file holds, as value expressions (module docstring).

    ``kind``: ``bind`` (``name`` bound in ``scope``: a module-level variable when ``scope`` is
    ``""``, a class attribute or an instance attribute when it is a class), ``returns`` (what
    the function ``scope`` returns; ``name`` is ``""``), ``property`` (the method ``scope`` is
    read as an attribute; no values).
    """

    kind: str
    scope: str
    name: str
    values: tuple[str, ...] = ()


@dataclass(slots=True)
class ParsedFile:
    """Everything the parse stage learned about one file."""

    path: str
    language: str
    definitions: list[Definition] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    line_count: int = 0
    facts: list[Fact] = field(default_factory=list)
    #: its test cases (``parse.testcases.encode_test_cases``) when it may hold some
    #: (``index.parse.keeps_test_cases``), else None
    test_cases: str | None = None


@dataclass(frozen=True, slots=True)
class Node:
    """A symbol of the graph (one per definition plus one ``module`` node per file)."""

    id: str
    path: str
    name: str
    qualified_name: str
    kind: str
    language: str
    start_line: int
    end_line: int
    signature: str
    doc: str
    content_hash: str


class Edge(NamedTuple):
    """A directed typed edge; ``confidence`` in (0, 1] says how sure the resolution is,
    ``rule`` which rule made it (``knowing_pr/graph/rules.py``; ``""`` when unknown).

    A named tuple, not a dataclass: a full index builds hundreds of thousands of them."""

    source: str
    target: str
    kind: EdgeKind
    confidence: float
    rule: str = ""


def node_id(path: str, qualified_name: str, kind: str) -> str:
    """Stable node identity: survives edits of the symbol's body (DESIGN.md, Node identity)."""
    digest = hashlib.sha256(f"{path}\0{qualified_name}\0{kind}".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class ScoredSymbol:
    """A node with its final score and every component that produced it (rank stage output).

    ``reason`` says why the symbol is in the pack: ``changed`` (overlaps a hunk or lies in a
    changed file), ``caller`` (calls into the change), ``callee`` (the change relies on it),
    ``test`` (exercises the change), ``cochange`` (changed together in history), ``related``
    (reached by the walk), ``match`` (task mode: matched the task text).
    """

    node: Node
    score: float
    rwr: float = 0.0
    authority: float = 0.0
    hub: float = 0.0
    distance: int = 0
    reason: str = "related"
    is_seed: bool = False
    is_test: bool = False
    components: tuple[tuple[str, float], ...] = ()
    #: shown as one line (a changed symbol under a tight budget): name, kind and place only
    brief: bool = False
    #: a changed symbol whose signature differs from the base's: what changed
    #: (``parameters``, ``return type``, ``visibility``, ``signature``) and the base's signature
    signature_changes: tuple[str, ...] = ()
    signature_before: str = ""
    #: a changed symbol the change added
    is_new: bool = False


@dataclass(frozen=True, slots=True)
class RankedFile:
    """A file the change is likely to touch too (the ranked file list of a PR pack, best first).

    ``score`` in (0, 1) is the fitted model's probability that the file changes with the change;
    ``reasons`` name the signals that raised it most, strongest first: ``cochange`` (changed
    together in history), ``caller`` (uses the changed files), ``callee`` (the changed files use
    it), ``test`` (tests them, or is the code a changed test tests), ``sibling`` (same directory
    and stem), ``same_name`` (same stem elsewhere), ``near_duplicate`` (similar content),
    ``connected`` (near in the file graph), ``same_directory``, ``similar_path``; ``evidence``
    says it in words; ``signals`` are the signal values behind the score (non-zero ones).
    """

    path: str
    score: float
    reasons: tuple[str, ...]
    evidence: str
    signals: tuple[tuple[str, float], ...] = ()


@dataclass(slots=True)
class Pack:
    """A packed, content-addressed selection of symbols (pack stage output, render input)."""

    pack_root: str
    mode: str
    token_budget: int
    tokens_used: int
    graph_root: str
    commit: str | None
    inputs: dict[str, object]
    symbols: list[ScoredSymbol]
    edges: list[tuple[str, str, str]]  # (source id, target id, edge kind label)
    params: dict[str, object] = field(default_factory=dict)
    #: symbols that ranked but did not fit (id, reason) — for ``why`` and the "cut" note
    dropped: list[tuple[str, str]] = field(default_factory=list)
    #: "often changed together" evidence: (path, together, out_of) per co-changed file
    cochange: list[tuple[str, int, int]] = field(default_factory=list)
    #: the ranked file list (a PR pack): the files the change likely touches too, best first,
    #: the changed files excluded, independent of the symbol budget
    files: list[RankedFile] = field(default_factory=list)
    #: the reviewer's answer of a change (``pr`` packs): call sites, tests to run, what was removed
    summary: ChangeSummary | None = None


# -- the reviewer's answer of a change (a ``pr`` pack's summary) ----------------------------------


@dataclass(frozen=True, slots=True)
class CallSite:
    """A line that calls (or names) a changed or removed symbol.

    ``caller`` is the enclosing definition's display name (``""`` at module level); ``text`` the
    call line itself, trimmed. ``in_change``: the line's file is part of the change.
    ``not_updated``: the callee's signature changed (or it was removed) and the change did not touch
    the line's file.
    ``removed``: the callee was removed by the change."""

    path: str
    line: int
    caller: str
    caller_id: str | None
    callee: str
    callee_id: str | None
    text: str = ""
    in_change: bool = False
    not_updated: bool = False
    removed: bool = False


@dataclass(frozen=True, slots=True)
class TestToRun:
    """A test case its framework runs, with a command that runs just it.

    ``name`` as the framework names it (``TestClass::test_x``, ``TestRouter``, ``describe > it``);
    ``hops``: 0 for a test the change itself added or edited, 1 when the test calls changed code,
    n when it reaches it through n - 1 other symbols (helpers and fixtures included), 0 for a
    whole test file found otherwise; ``via``: the helper or fixture it reaches the change through,
    when not directly; ``reason``: the evidence's kind (``rank.testfiles.EVIDENCE_ORDER``:
    ``edited``, ``calls``, ``named``, ``history``, ``program``, ``package``, ``imports``,
    ``imports-via``, ``dependency``, ``setup``) and ``evidence`` the same in a few words; ``scope``: what ``run`` runs —
    ``test`` (just this test), ``file`` (every test of its file) or ``suite`` (the whole suite:
    Karma cannot pick one test)."""

    __test__ = False  # not a pytest test class

    name: str
    path: str
    line: int
    framework: str
    run: str
    hops: int = 1
    changed: bool = False
    via: str = ""
    reason: str = "calls"
    evidence: str = ""
    scope: str = "test"


@dataclass(frozen=True, slots=True)
class RemovedSymbol:
    """A definition the change deleted: its base path and line."""

    name: str
    kind: str
    path: str
    line: int


@dataclass(frozen=True, slots=True)
class Reviewer:
    """A person suggested to review a change (``history/reviewers.py``): their name as the
    repository writes it (untrusted text), their stable key (an e-mail address lowercased, or a
    CODEOWNERS handle), the reason in a few words, the score, every reason, and the GitHub login
    when one is known (an @-mention only where the repository's settings opt in)."""

    name: str
    key: str
    reason: str
    score: float
    evidence: tuple[str, ...] = ()
    login: str | None = None


@dataclass(slots=True)
class ChangeSummary:
    """What a reviewer asks of a change, beside its symbols: who calls it, which tests to run,
    what it removed, which changed files have history partners. Lists are ordered best first;
    ``*_total`` count them all when a list is cut to fit the budget."""

    no_code: bool = False
    call_sites: list[CallSite] = field(default_factory=list)
    call_sites_total: int = 0
    #: of all call sites: those outside the change's files, and those not updated
    call_sites_outside: int = 0
    call_sites_not_updated: int = 0
    #: every call site, compactly: "path:line,line,…" per file (``call_sites`` details the first)
    call_site_lines: list[str] = field(default_factory=list)
    tests: list[TestToRun] = field(default_factory=list)
    tests_total: int = 0
    removed: list[RemovedSymbol] = field(default_factory=list)
    removed_total: int = 0
    #: co-changed path → the changed path whose history pairs it
    cochange_with: dict[str, str] = field(default_factory=dict)
    #: changed symbols not even a one-line entry fits for: "path:line name", and how many
    changed_left_out: list[str] = field(default_factory=list)
    changed_left_out_count: int = 0
    #: who should review, best first (``history/reviewers.py``)
    reviewers: list[Reviewer] = field(default_factory=list)
