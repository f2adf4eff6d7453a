"""Query matches of one file → ``Definition``/``Reference``/``Import`` records, for every language module.

Every language module runs its query file (``queries/<language>.scm``) through
``knowing_pr.parse.treesitter.query_matches`` and turns the captures into records with the
helpers here: definition candidates nested into qualified names and parents (spans from
``knowing_pr.parse.spans``, signatures and docs from ``knowing_pr.parse.docs``), uses scoped to
their innermost definition, and the rule-driven driver ``extract_with_rules``.
Capture names follow one convention across languages:

- ``@definition.<kind>`` on the whole definition node (kind from ``SymbolKind``) with
  ``@name`` on its identifier;
- ``@reference.call`` / ``@reference.extends`` / ``@reference.implements`` /
  ``@reference.type`` on the using node, with ``@name`` (and optionally ``@receiver``);
- ``@import`` on an import statement (the language module reads its parts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from tree_sitter import Node

from knowing_pr.model import TYPE_KINDS, Definition, Fact, Import, Reference, SymbolKind
from knowing_pr.parse.docs import signature_of
from knowing_pr.parse.spans import innermost_spans, nest_spans, qualify_spans
from knowing_pr.parse.treesitter import (
    Captures,
    compact_text,
    descendants,
    first_capture,
    line_of,
    load_query,
    node_text,
    query_matches,
)

__all__ = [
    "CaptureRoute",
    "DefinitionCandidate",
    "ExtractionRules",
    "MatchRecords",
    "Records",
    "Use",
    "build_definitions",
    "QUALIFIER_MAX_CHARS",
    "as_kind",
    "assemble_nested",
    "call_use",
    "header_candidate",
    "import_route",
    "is_noise_use",
    "kind_use_route",
    "kind_candidate",
    "named_type_uses",
    "use_route",
    "extract_with_rules",
    "drop_duplicate_definitions",
    "nest_definitions",
    "scope_references",
]

#: cap on a reference's qualifier text (``a.b`` of ``a.b.f()``, ``f(x)`` of ``f(x).g()``)
QUALIFIER_MAX_CHARS = 120

#: (anchor node, reference kind, name, qualifier) before scoping
Use = tuple[Node, str, str, str]
#: what a language module's ``extract`` returns (facts: ``[]`` for a language without scopes)
Records = tuple[list[Definition], list[Reference], list[Import], list[Fact]]


def nest_definitions(candidates: list[tuple[Node, str, str, str, str]]) -> list[Definition]:
    """(outer node, name, kind, signature, doc) candidates → ``Definition`` records in file order.

    Nesting comes from the byte spans of the outer nodes: ``qualified_name`` joins the names
    of the enclosing candidates with ``.``, ``parent`` is the enclosing one's qualified name,
    and a ``function`` directly inside a type (class, interface, …) becomes a ``method``.
    Several definitions may share a qualified name (a property getter and its setter); see
    ``drop_duplicate_definitions``. A candidate name may itself be dotted (Ruby ``class A::B``
    gives ``A.B``): it extends the qualified name and ``name`` is its last part.
    """
    unique: dict[tuple[int, int, str], tuple[Node, str, str, str, str]] = {}
    for candidate in candidates:
        node = candidate[0]
        unique.setdefault((node.start_byte, node.end_byte, candidate[1]), candidate)
    ordered = sorted(unique.values(), key=lambda c: (c[0].start_byte, -c[0].end_byte))
    parents = nest_spans([(c[0].start_byte, c[0].end_byte) for c in ordered])
    qualified: list[str] = []
    kinds: list[str] = []
    definitions: list[Definition] = []
    for index, (node, name, kind, signature, doc) in enumerate(ordered):
        parent = parents[index]  # parents precede children in this order
        parent_name = qualified[parent] if parent >= 0 else None
        if kind == SymbolKind.FUNCTION and parent >= 0 and kinds[parent] in TYPE_KINDS:
            kind = SymbolKind.METHOD
        qualified.append(f"{parent_name}.{name}" if parent_name else name)
        kinds.append(kind)
        definitions.append(
            Definition(
                name=name.rsplit(".", 1)[-1],
                qualified_name=qualified[index],
                kind=kind,
                start_line=int(node.start_point[0]) + 1,
                end_line=int(node.end_point[0]) + 1,
                start_byte=node.start_byte,
                end_byte=node.end_byte,
                signature=signature,
                doc=doc,
                parent=parent_name,
            )
        )
    return definitions


def scope_references(
    definitions: list[Definition],
    uses: list[tuple[Node, str, str, str]],
    hints: dict[tuple[int, str, str, str], str] | None = None,
) -> list[Reference]:
    """(node, kind, name, qualifier) uses → ``Reference`` records scoped to the innermost definition.

    Duplicates (same node, kind and name) collapse into one; output is in file order. ``hints``:
    each use's ``Reference.hint`` by (start byte, kind, name, qualifier), for a language whose
    extractor applies its scopes.
    """
    unique: dict[tuple[int, str, str, str], Node] = {}
    for node, kind, name, qualifier in uses:
        if name:
            unique.setdefault((node.start_byte, kind, name, qualifier), node)
    keys = sorted(unique)
    spans = [(d.start_byte, d.end_byte) for d in definitions]
    scopes = innermost_spans(spans, [key[0] for key in keys])
    references: list[Reference] = []
    for key, scope in zip(keys, scopes, strict=True):
        _, kind, name, qualifier = key
        references.append(
            Reference(
                kind=kind,
                name=name,
                line=line_of(unique[key]),
                scope=definitions[scope].qualified_name if scope >= 0 else None,
                qualifier=qualifier,
                hint=hints.get(key, "") if hints else "",
            )
        )
    return references


def drop_duplicate_definitions(definitions: list[Definition]) -> list[Definition]:
    """One definition of each (qualified name, kind), so node ids stay unique per file: the first,
    unless a later one is longer (an overload stub or a declaration gives way to the definition
    with the body), in the place of the first."""
    position: dict[tuple[str, str], int] = {}
    unique: list[Definition] = []
    for definition in definitions:
        key = (definition.qualified_name, definition.kind)
        if key not in position:
            position[key] = len(unique)
            unique.append(definition)
            continue
        kept = unique[position[key]]
        if definition.end_line - definition.start_line > kept.end_line - kept.start_line:
            unique[position[key]] = definition
    return unique


@dataclass(frozen=True, slots=True)
class DefinitionCandidate:
    """A definition found by a query, before nesting gives it a qualified name.

    ``leaf``: cannot contain other definitions (constants of one statement share its span).
    ``emit``: ``False`` for a span that only names a scope (a Rust ``impl T`` block is ``T``).
    ``owner``: a parent declared elsewhere that overrides nesting (a Go method's receiver type).
    ``tag``: what sets this scope apart from others of its name (a Rust ``impl Trait for T`` is
    ``T`` tagged ``Trait``): a definition directly inside it whose qualified name another
    definition of the file has too is named ``T.<Trait>.name`` (``disambiguate_definitions``).
    """

    node: Node
    name: str
    kind: str
    signature: str = ""
    doc: str = ""
    leaf: bool = False
    emit: bool = True
    owner: str | None = None
    tag: str = ""


def build_definitions(
    candidates: list[DefinitionCandidate], *, overloads: bool = False
) -> tuple[list[Definition], list[Definition]]:
    """Candidates → (definitions to report, in file order; every scope, for ``scope_references``).

    Candidates without a name (a MISSING node in a broken file) are dropped. ``overloads``: a
    language whose methods overload by parameters (Java, C#): ``name_overloads``.
    """
    named = [c for c in candidates if c.name]
    ordered = sorted(named, key=lambda c: (c.node.start_byte, -c.node.end_byte))
    names = qualify_spans(
        [(c.node.start_byte, c.node.end_byte) for c in ordered],
        [c.name for c in ordered],
        [c.leaf for c in ordered],
    )
    scopes: list[Definition] = []
    for candidate, (qualified, parent) in zip(ordered, names, strict=True):
        if candidate.owner:
            qualified, parent = f"{candidate.owner}.{candidate.name}", candidate.owner
        node = candidate.node
        scopes.append(
            Definition(
                name=candidate.name,
                qualified_name=qualified,
                kind=candidate.kind,
                start_line=int(node.start_point[0]) + 1,
                end_line=int(node.end_point[0]) + 1,
                start_byte=node.start_byte,
                end_byte=node.end_byte,
                signature=candidate.signature,
                doc=candidate.doc,
                parent=parent,
            )
        )
    parents = nest_spans([(c.node.start_byte, c.node.end_byte) for c in ordered])
    tags = [ordered[p].tag if p >= 0 else "" for p in parents]
    emitted = [i for i, c in enumerate(ordered) if c.emit]
    reported = disambiguate_definitions([(scopes[i], tags[i]) for i in emitted])
    if overloads:
        reported = name_overloads(reported)
    for i, definition in zip(emitted, reported, strict=True):
        # a use inside a renamed definition (``T.<Trait>.f``, an overload ``C.f(String s)``) is
        # that definition's: under the name it had before, it fell to the type or to the first overload
        scopes[i] = definition
    return drop_duplicate_definitions(reported), scopes


def name_overloads(definitions: list[Definition]) -> list[Definition]:
    """Java/C# overloads as symbols of their own: the first of a name keeps ``C.f``, each later one
    is ``C.f(its parameters)`` (``C.f(String s)``, as written, spaces squeezed; docs/edges.md)."""
    seen: set[tuple[str, str]] = set()
    out: list[Definition] = []
    for definition in definitions:
        key = (definition.qualified_name, definition.kind)
        parameters = _parameters(definition.signature)
        if key in seen and definition.kind in _OVERLOADED_KINDS and parameters is not None:
            definition = replace(definition, qualified_name=f"{definition.qualified_name}({parameters})")
        seen.add(key)
        out.append(definition)
    return out


_OVERLOADED_KINDS = frozenset({SymbolKind.METHOD, SymbolKind.FUNCTION})


def _parameters(signature: str) -> str | None:
    """The text between a signature's first ``(`` and its matching ``)``, spaces squeezed."""
    start = signature.find("(")
    if start < 0:
        return None
    depth = 0
    for index in range(start, len(signature)):
        depth += {"(": 1, ")": -1}.get(signature[index], 0)
        if depth == 0:
            return " ".join(signature[start + 1 : index].split())
    return None


def disambiguate_definitions(definitions: list[tuple[Definition, str]]) -> list[Definition]:
    """(definition, the tag of the scope directly around it) → the definitions, those of a tagged
    scope renamed ``parent.<tag>.name`` when another definition of the file shares their qualified
    name and kind: a Rust trait impl's ``path`` beside the type's own ``path`` are two symbols,
    ``DirEntry.path`` and ``DirEntry.<Colorable>.path`` (docs/edges.md)."""
    counts: dict[tuple[str, str], int] = {}
    for definition, _ in definitions:
        key = (definition.qualified_name, definition.kind)
        counts[key] = counts.get(key, 0) + 1
    out: list[Definition] = []
    for definition, tag in definitions:
        if tag and counts[(definition.qualified_name, definition.kind)] > 1:
            prefix = f"{definition.parent}." if definition.parent else ""
            definition = replace(definition, qualified_name=f"{prefix}<{tag}>.{definition.name}")
        out.append(definition)
    return out


def call_use(name: Node, source: bytes, receiver: Node | None = None) -> Use:
    """A call of ``name``, qualified by the receiver's compacted text (empty without one)."""
    return (name, "call", node_text(name, source), compact_text(receiver, source, QUALIFIER_MAX_CHARS))


def as_kind(uses: list[Use], kind: str) -> list[Use]:
    """The same uses with their reference kind replaced (a constructed type is a call)."""
    return [(anchor, kind, name, qualifier) for anchor, _, name, qualifier in uses]


def named_type_uses(
    type_node: Node,
    source: bytes,
    kind: str,
    stop_types: frozenset[str],
    scoped_use: tuple[str, Callable[[Node, bytes, str], Use]],
) -> list[Use]:
    """Every ``type_identifier`` inside a type expression, in document order, as ``kind`` uses.

    ``scoped_use`` is (node type of a qualified type, how to read one): those become one use
    each through it; ``stop_types`` are not walked into.
    """
    scoped_type, read_scoped = scoped_use
    uses: list[Use] = []
    for node in descendants(type_node, stop_types):
        if node.type == "type_identifier":
            uses.append((node, kind, node_text(node, source), ""))
        elif node.type == scoped_type:
            uses.append(read_scoped(node, source, kind))
    return uses


def is_noise_use(
    use: Use, checked_kinds: frozenset[str], builtin_types: frozenset[str], type_parameters: set[str]
) -> bool:
    """An unqualified use of a checked kind naming a builtin type or a type parameter."""
    _, kind, name, qualifier = use
    if kind not in checked_kinds or qualifier:
        return False
    return name in builtin_types or name in type_parameters


def header_candidate(
    node: Node,
    name: str,
    kind: str,
    source: bytes,
    body: Node | None,
    doc_of: Callable[[Node, bytes], str],
    *,
    leaf: bool = False,
) -> DefinitionCandidate:
    """A candidate whose signature is its header up to ``body`` (a trailing ``;`` dropped)."""
    return DefinitionCandidate(
        node=node,
        name=name,
        kind=kind,
        signature=signature_of(node, source, body).rstrip(";").strip(),
        doc=doc_of(node, source),
        leaf=leaf,
    )


def kind_candidate(
    captures: Captures, source: bytes, kinds: tuple[str, ...], doc_of: Callable[[Node, bytes], str]
) -> DefinitionCandidate | None:
    """The candidate for the first ``@definition.<kind>`` of ``kinds`` in a match, named by ``@name``.

    Its body is ``@body``; a ``constant`` is a leaf. ``None`` without a name or such a capture.
    """
    name = first_capture(captures, "name")
    if name is None:
        return None
    for kind in kinds:
        node = first_capture(captures, f"definition.{kind}")
        if node is not None:
            body = first_capture(captures, "body")
            leaf = kind == SymbolKind.CONSTANT
            return header_candidate(node, node_text(name, source), kind, source, body, doc_of, leaf=leaf)
    return None


def assemble_nested(
    candidates: list[tuple[Node, str, str, str, str]],
    uses: list[Use],
    imports: list[Import],
    hints: dict[tuple[int, str, str, str], str] | None = None,
) -> Records:
    """``nest_definitions`` candidates and uses → the records of one file (see ``nest_definitions``)."""
    definitions = nest_definitions(candidates)
    references = scope_references(definitions, uses, hints)
    return drop_duplicate_definitions(definitions), references, imports, []


@dataclass(slots=True)
class MatchRecords:
    """What the query matches of one file gave so far (filled in by capture routes)."""

    candidates: list[DefinitionCandidate] = field(default_factory=list)
    uses: list[Use] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    type_parameters: set[str] = field(default_factory=set)


#: (capture name, handler): a match holding that capture goes to the handler
CaptureRoute = tuple[str, Callable[[Captures, bytes, MatchRecords], None]]


def import_route(capture: str, imports_of: Callable[[Node, bytes], list[Import]]) -> CaptureRoute:
    """Route the first ``@capture`` node of a match to ``imports_of``."""

    def handle(captures: Captures, source: bytes, found: MatchRecords) -> None:
        found.imports.extend(imports_of(captures[capture][0], source))

    return capture, handle


def use_route(capture: str, uses_of: Callable[[Node, bytes], list[Use]]) -> CaptureRoute:
    """Route the first ``@capture`` node of a match to ``uses_of``."""

    def handle(captures: Captures, source: bytes, found: MatchRecords) -> None:
        found.uses.extend(uses_of(captures[capture][0], source))

    return capture, handle


def kind_use_route(capture: str, uses_of: Callable[[Node, bytes, str], list[Use]], kind: str) -> CaptureRoute:
    """Route the first ``@capture`` node of a match to ``uses_of`` with the reference ``kind``."""

    def handle(captures: Captures, source: bytes, found: MatchRecords) -> None:
        found.uses.extend(uses_of(captures[capture][0], source, kind))

    return capture, handle


@dataclass(frozen=True, slots=True)
class ExtractionRules:
    """How a language module reads its query's matches (see ``extract_with_rules``).

    A match holding ``@type_parameter`` (a pattern of its own in every query) names type
    parameters. ``routes``: in order, the first whose capture a match holds takes any other
    match; ``define`` takes the rest. ``checked_kinds``: use kinds dropped when they name one of
    ``builtin_types`` or a type parameter without a qualifier.
    """

    query_name: str
    routes: tuple[CaptureRoute, ...]
    define: Callable[[Captures, bytes], list[DefinitionCandidate]]
    builtin_types: frozenset[str]
    checked_kinds: frozenset[str] = frozenset({"type"})


def extract_with_rules(
    rules: ExtractionRules,
    root: Node,
    source: bytes,
    language: str,
    hint_of: Callable[[Use], str] | None = None,
) -> Records:
    """Run ``queries/<rules.query_name>.scm`` over ``root`` and route each match → records
    (``hint_of``: each use's ``Reference.hint``, for a language whose extractor has scopes)."""
    found = MatchRecords()
    for _, captures in query_matches(load_query(rules.query_name, language), root):
        if "type_parameter" in captures:
            found.type_parameters.update(node_text(node, source) for node in captures["type_parameter"])
            continue
        handler = next((handle for capture, handle in rules.routes if capture in captures), None)
        if handler is None:
            found.candidates.extend(rules.define(captures, source))
        else:
            handler(captures, source, found)
    definitions, scopes = build_definitions(found.candidates, overloads=language in ("java", "csharp"))
    kept = [
        use
        for use in found.uses
        if not is_noise_use(use, rules.checked_kinds, rules.builtin_types, found.type_parameters)
    ]
    hints = {(u[0].start_byte, u[1], u[2], u[3]): hint_of(u) for u in kept} if hint_of is not None else None
    return definitions, scope_references(scopes, kept, hints), found.imports, []
