"""The change's own symbols + the graph + the test files' source → the test cases to run, each
with a command (``TestToRun``), the change's own tests first, then by how directly they reach it.

1. **Reach.** Walk backwards from the changed symbols (and the module nodes of their files) over
   ``calls``, ``references``, ``tests`` and inheritance edges at least as confident as the
   floor (``rank.min_shown_confidence``), up to ``max_hops``: a node reached
   at ``h`` hops reaches the change through ``h - 1`` other symbols. ``imports`` count into the
   change's own files only (a test that imports a changed module and names a changed symbol).
2. **Test files**: the files of reached nodes that are test files (``conftest.py`` included),
   nearest first, at most ``max_files`` of them, plus the test files the change itself edited.
3. **Test cases** of each file as its framework collects them (``parse.testcases``; those the
   index kept when the head's file is the blob it indexed, else found in the head's source); a
   case reaches the change
   - when a reached node lies inside it (the test function itself, or a function nested in it);
   - when a line of it names what a reached node of its file links to (how a ``describe``/``it``
     block, which is no node, reaches the change; a name known only through a link to a whole
     file counts when the line's receiver is unknown), or names a reached helper or a reached
     pytest fixture (a parameter named after a fixture of the file or of a ``conftest.py``
     above it): one hop more than that helper;
   - when a setup hook of its group (class, ``describe``) does: ``setUp``, ``beforeEach``,
     ``before do``, ``@BeforeEach``;
   - and at 0 hops when the change edited it. A test file whose code outside its cases the
     change edited (its imports, a setup at the top), none of its cases edited, is one entry
     that runs the whole file, at 0 hops too: every case runs that code.
4. **Commands** from ``rank.runners``.
5. **Whole test files** tied to the change otherwise (``rank.testfiles``: named after a changed
   file, changed with it before, driving its program, in its Go package, importing it), none of
   whose cases step 3 found, one entry each with a command that runs the file — when the file
   holds a test case at all: a fixture, a helper or a generated client under a test folder has
   nothing to run (in a language whose cases are not found, every test file is kept).

The list is ordered by evidence (``_band``): edited; cases calling the change from a file
named after a changed file or changed with it before; other cases one hop away; whole files
named or changed with it; cases farther away; whole files driving the program, in the Go
package, importing the change, importing it through other files, importing a dependency whose
version the change bumps, run after a runner setup file that reaches the change.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from knowing_pr.graph import shared_refs
from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.graph.paths import is_test_path
from knowing_pr.model import EdgeKind, Node, Reference, SymbolKind, TestToRun
from knowing_pr.parse import language_for_path
from knowing_pr.parse.testcases import (
    TEST_CASE_LANGUAGES,
    TestCase,
    TestGroup,
    decode_test_cases,
    find_test_cases,
)
from knowing_pr.rank.callers import ChangeLines, incoming_edges
from knowing_pr.rank.memo import Memo
from knowing_pr.rank.runners import RepoFiles, run_command, run_file_command
from knowing_pr.rank.testfiles import FileEvidence, test_files_by_evidence
from knowing_pr.store import Store

__all__ = ["REACH_LINKS", "Reach", "reach_back", "select_tests"]

REACH_LINKS = frozenset(
    {
        EdgeKind.CALLS,
        EdgeKind.REFERENCES,
        EdgeKind.TESTS,
        EdgeKind.EXTENDS,
        EdgeKind.IMPLEMENTS,
        EdgeKind.INHERITS,
    }
)
_FIRST_HOP_LINKS = REACH_LINKS | {EdgeKind.IMPORTS}
#: a Rust symbol inside a ``mod test``/``mod tests`` of a source file (unit tests live there)
_RUST_TEST_MODULE = re.compile(r"\.tests?\.")
#: a frontier bigger than this is recorded but not walked further (a core helper of a big graph)
_MAX_FRONTIER = 5000


@dataclass
class Reach:
    """Positions reached walking back from the change: hops, and what each links to."""

    hops: dict[int, int] = field(default_factory=dict)
    links: dict[int, set[int]] = field(default_factory=dict)


def reach_back(
    adjacency: Adjacency, start: Collection[int], max_hops: int, min_confidence: float = 0.0
) -> Reach:
    """Step 1 of the module docstring, over positions of ``adjacency``, on edges resolved at least
    as surely as ``min_confidence`` (a method name guessed on an unknown receiver is no reach:
    Go's ``w.Header().Clone()`` does not run chi's ``Context.Clone``)."""
    reach = Reach(hops=dict.fromkeys(start, 0))
    frontier = set(start)
    for hop in range(1, max_hops + 1):
        if not frontier or len(frontier) > _MAX_FRONTIER:
            break
        kinds = _FIRST_HOP_LINKS if hop == 1 else REACH_LINKS
        found: set[int] = set()
        for source, target, _ in incoming_edges(adjacency, frontier, kinds, min_confidence):
            reach.links.setdefault(source, set()).add(target)
            if source not in reach.hops:
                reach.hops[source] = hop
                found.add(source)
        frontier = found
    return reach


@dataclass(frozen=True)
class _Hit:
    """How a test case reaches the change: in how many hops, through which symbol."""

    hops: int
    via: str = ""
    changed: bool = False


def _better(current: _Hit | None, candidate: _Hit) -> _Hit:
    if current is None or (not candidate.changed, candidate.hops) < (not current.changed, current.hops):
        return candidate
    return current


@dataclass
class _FileFacts:
    """What one test file knows: its reached nodes and the names its lines can reach through."""

    reached: list[tuple[Node, int, str]]  # (node, hops, the symbol it reaches the change through)
    targets: dict[str, tuple[int, str]]  # name → (hops of the target, its name when a helper)
    #: target names known only through a link to a whole file, not through an edge to them
    by_file: set[str] = field(default_factory=set)


def select_tests(
    store: Store,
    adjacency: Adjacency,
    changed: Sequence[Node],
    *,
    lines: ChangeLines,
    files: RepoFiles,
    max_hops: int = 3,
    max_files: int = 80,
    min_confidence: float = 0.0,
    cochange: Sequence[tuple[str, int, int]] = (),
    cochange_with: Mapping[str, str] | None = None,
    import_depth: int = 12,
) -> list[TestToRun]:
    """The tests to run, best first (module docstring)."""
    changed_ids = {node.id for node in changed}
    changed_paths = {node.path for node in changed}
    modules = [n for n in store.nodes_in_paths(sorted(changed_paths)) if n.kind == SymbolKind.MODULE]
    start = {p for n in [*changed, *modules] if (p := adjacency.index_of(n.id)) is not None}
    reach = reach_back(adjacency, start, max_hops, min_confidence)
    nodes = store.nodes_by_ids(adjacency.node_ids[p] for p in reach.hops)
    by_position = {p: nodes[adjacency.node_ids[p]] for p in reach.hops if adjacency.node_ids[p] in nodes}
    own_tests = sorted(p for p in lines.added if _may_hold_tests(p))
    test_files = _test_files(by_position, reach, own_tests, max_files)
    facts = _file_facts(test_files, by_position, reach, changed_ids)
    fixtures = _conftest_fixtures(by_position, reach)
    refs = {path: shared_refs(path, data).references for path, data in store.refs_for(test_files).items()}
    kept = store.test_cases_for(test_files)
    found: list[TestToRun] = []
    for path in test_files:
        language = language_for_path(path)
        found_cases = _test_cases(path, language, files, kept.get(path)) if language is not None else None
        if found_cases is None:
            continue
        cases, groups = found_cases
        hits = _case_hits(path, cases, groups, facts.get(path), refs.get(path, []), lines, fixtures, max_hops)
        for case, hit in hits:
            run = run_command(case, path, files)
            found.append(
                TestToRun(
                    name=run.name,
                    path=path,
                    line=case.start_line,
                    framework=run.framework,
                    run=run.command,
                    hops=hit.hops,
                    changed=hit.changed,
                    via=hit.via,
                    reason="edited" if hit.changed else "calls",
                    evidence=_case_evidence(hit),
                    scope=run.scope,
                )
            )
    whole = test_files_by_evidence(
        store,
        adjacency,
        sorted(changed_paths | set(lines.added)),
        files,
        cochange=cochange,
        cochange_with=cochange_with,
        max_depth=import_depth,
        added=lines.added,
    )
    file_kind = {e.path: e.kind for e in whole}
    edited_modules = _edited_test_modules(store, changed, found, files)
    if edited_modules:  # a file that runs whole lists none of its cases beside it
        whole_files = {t.path for t in edited_modules}
        found = [t for t in found if t.path not in whole_files] + edited_modules
    with_cases = {t.path for t in found}
    whole = [e for e in whole if e.path not in with_cases]
    runnable = _holding_tests(whole, files, store.test_cases_for(e.path for e in whole))
    found += [_whole_file(e, files) for e in runnable]
    return sorted(found, key=lambda t: (_band(t, file_kind.get(t.path, "")), t.hops, t.path, t.line, t.name))


#: the order of the list: a band per kind of evidence (``_band``)
_WHOLE_FILE_BANDS = {
    "named": 3,
    "history": 3,
    "program": 5,
    "package": 6,
    "imports": 7,
    "imports-via": 8,
    "dependency": 9,
    "setup": 10,
}


def _band(test: TestToRun, file_kind: str) -> int:
    """Edited first; then cases that call the change from a test file named after a changed file
    or changed with it before; then the other cases one hop away; then whole files named after a
    changed file or changed with it; then cases farther away; then whole files driving the
    program, in the package, importing the change, importing it through other files, importing a
    dependency the change bumps, run after a runner setup file reaching the change."""
    if test.changed:
        return 0
    if test.reason == "calls":
        if file_kind in ("named", "history"):
            return 1
        return 2 if test.hops <= 1 else 4
    return _WHOLE_FILE_BANDS.get(test.reason, 11)


def _case_evidence(hit: _Hit) -> str:
    if hit.changed:
        return "edited in this change"
    if hit.via:
        return f"calls the change through `{hit.via}`"
    return "calls the changed code"


def _edited_test_modules(
    store: Store, changed: Sequence[Node], found: Sequence[TestToRun], files: RepoFiles
) -> list[TestToRun]:
    """The whole test files whose own code outside their test cases the change edited (their
    imports, a setup at the top) when it edited none of their cases: each of their tests runs
    that code (the pack lists the file as "tests in … edited"; without this entry its tests to
    run could be none)."""
    edited_cases = {t.path for t in found if t.changed}
    paths = sorted(
        {
            node.path
            for node in changed
            if node.kind == SymbolKind.MODULE and is_test_path(node.path) and node.path not in edited_cases
        }
    )
    if not paths:
        return []
    evidence = [
        FileEvidence(path, "edited", "its code outside the test cases is edited in this change")
        for path in paths
    ]
    holding = _holding_tests(evidence, files, store.test_cases_for(paths))
    return [replace(_whole_file(e, files), changed=True) for e in holding]


def _holding_tests(
    whole: Sequence[FileEvidence], files: RepoFiles, kept: Mapping[str, tuple[str, str, str]]
) -> list[FileEvidence]:
    """The whole files that hold a test case (step 5)."""
    out: list[FileEvidence] = []
    for evidence in whole:
        language = language_for_path(evidence.path)
        if language is None:
            continue
        if language not in TEST_CASE_LANGUAGES:
            out.append(evidence)
            continue
        found = _test_cases(evidence.path, language, files, kept.get(evidence.path))
        if found is not None and found[0]:
            out.append(evidence)
    return out


def _whole_file(evidence: FileEvidence, files: RepoFiles) -> TestToRun:
    run = run_file_command(evidence.path, files)
    return TestToRun(
        name=run.name,
        path=evidence.path,
        line=1,
        framework=run.framework,
        run=run.command,
        hops=0,
        reason=evidence.kind,
        evidence=evidence.words,
        scope=run.scope,
    )


#: a test file's cases by its path, language and content: a warm server reads the same test
#: files for every change of a branch
_CASES: Memo = Memo(capacity=1024)


def _test_cases(
    path: str, language: str, files: RepoFiles, kept: tuple[str, str, str] | None
) -> tuple[list[TestCase], list[TestGroup]] | None:
    """The file's cases and groups (None: the head has no such file to read): those the index
    kept (``kept``: the blob id and language they were found at, and their text) when the head's
    file is that blob, else found in its source."""
    if kept is not None and kept[1] == language and files.blob_id(path) == kept[0]:
        return decode_test_cases(kept[2])
    source = files.read(path)
    if source is None:
        return None
    key = (path, language, hashlib.blake2b(source, digest_size=16).digest())
    return _CASES.get(key, lambda: find_test_cases(path, language, source))


def _may_hold_tests(path: str) -> bool:
    """A changed file that can hold test cases: a test file, or Rust source (unit tests in-file)."""
    language = language_for_path(path)
    return language is not None and (is_test_path(path) or language == "rust")


def _test_files(
    by_position: Mapping[int, Node], reach: Reach, own_tests: Sequence[str], max_files: int
) -> list[str]:
    best: dict[str, int] = {}
    for position, node in by_position.items():
        in_test_module = node.language == "rust" and _RUST_TEST_MODULE.search(node.qualified_name)
        if is_test_path(node.path) or posixpath.basename(node.path) == "conftest.py" or in_test_module:
            best[node.path] = min(best.get(node.path, 99), reach.hops[position])
    ranked = sorted(best, key=lambda p: (best[p], p))[:max_files]
    return sorted(set(ranked) | set(own_tests))


def _file_facts(
    paths: Sequence[str],
    by_position: Mapping[int, Node],
    reach: Reach,
    changed_ids: Collection[str],
) -> dict[str, _FileFacts]:
    """For each test file: its reached nodes, and the names its lines can reach the change through:
    what its reached nodes link to, and — for a link to a whole file (it imports the file, or is
    named after it) — every reached symbol of that file (a call through an unresolved receiver,
    ``req.GET``, still names one of them)."""
    wanted = set(paths)
    facts: dict[str, _FileFacts] = {}
    reached_in: dict[str, list[int]] = {}
    for position, node in by_position.items():
        reached_in.setdefault(node.path, []).append(position)
    for position, node in by_position.items():
        if node.path not in wanted:
            continue
        fact = facts.setdefault(node.path, _FileFacts([], {}))
        fact.reached.append((node, reach.hops[position], _via(position, by_position, reach, changed_ids)))
        for target in reach.links.get(position, ()):
            linked = by_position.get(target)
            if linked is None:
                continue
            whole_file = linked.kind == SymbolKind.MODULE
            members = reached_in.get(linked.path, []) if whole_file else [target]
            for member in members:
                symbol = by_position[member]
                if symbol.kind != SymbolKind.MODULE:
                    via = "" if symbol.id in changed_ids else symbol.name
                    _add_target(fact, symbol.name, reach.hops[member], via, by_file=whole_file)
    return facts


def _via(position: int, by_position: Mapping[int, Node], reach: Reach, changed_ids: Collection[str]) -> str:
    """The name of the nearest reached symbol ``position`` links to, "" when that is the change."""
    linked = [t for t in reach.links.get(position, ()) if t in by_position and t in reach.hops]
    if not linked:
        return ""
    best = min(linked, key=lambda t: (reach.hops[t], by_position[t].name))
    node = by_position[best]
    return "" if node.id in changed_ids or node.kind == SymbolKind.MODULE else node.name


def _add_target(fact: _FileFacts, name: str, hops: int, via: str, *, by_file: bool) -> None:
    if not name:
        return
    if name not in fact.targets:
        if by_file:
            fact.by_file.add(name)
    elif not by_file:
        fact.by_file.discard(name)
    if name not in fact.targets or hops < fact.targets[name][0]:
        fact.targets[name] = (hops, via)


def _receiver_unknown(ref: Reference) -> bool:
    """A reference whose receiver nothing tells: no value expression (a language read by names
    only) or one that starts unknown (``?.GET``: a parameter without a type). A reference whose
    receiver the parser knew (``httptest.NewRecorder().Header().Clone``) and the resolver did not
    link to the repository's symbol of that name is not a use of it."""
    return not ref.hint or ref.hint.startswith("?")


def _conftest_fixtures(by_position: Mapping[int, Node], reach: Reach) -> dict[str, dict[str, int]]:
    """Per directory of a ``conftest.py``: its reached functions (pytest fixtures) and hops."""
    out: dict[str, dict[str, int]] = {}
    for position, node in by_position.items():
        if posixpath.basename(node.path) == "conftest.py" and node.kind == SymbolKind.FUNCTION:
            names = out.setdefault(posixpath.dirname(node.path), {})
            names[node.name] = min(names.get(node.name, 99), reach.hops[position])
    return out


def _inside(node: Node, case: TestCase) -> bool:
    return case.start_line <= node.start_line and node.end_line <= case.end_line


def _case_hits(
    path: str,
    cases: Sequence[TestCase],
    groups: Sequence[TestGroup],
    fact: _FileFacts | None,
    refs: Sequence[Reference],
    lines: ChangeLines,
    fixtures: Mapping[str, Mapping[str, int]],
    max_hops: int,
) -> list[tuple[TestCase, _Hit]]:
    hits: dict[int, _Hit] = {}

    def offer(index: int, hit: _Hit) -> None:
        if hit.changed or hit.hops <= max_hops:
            hits[index] = _better(hits.get(index), hit)

    targets = dict(fact.targets) if fact else {}
    by_file = fact.by_file if fact else set()
    helpers: dict[str, tuple[int, str]] = {}
    for node, hops, via in fact.reached if fact else ():
        holders = [i for i, case in enumerate(cases) if _inside(node, case)]
        if node.kind == SymbolKind.MODULE:
            continue
        if holders:
            for i in holders:
                offer(i, _Hit(hops, via))
            continue
        helpers[node.name] = (hops + 1, node.name)
        holding = _hook_groups(groups, node.start_line, node.end_line)
        for i, case in enumerate(cases if holding else ()):  # a setup hook runs before each case
            if _holds(holding, case):
                offer(i, _Hit(hops + 1, node.name))
    for directory, names in fixtures.items():
        if path.startswith(f"{directory}/" if directory else ""):
            for name, hops in names.items():
                helpers.setdefault(name, (hops + 1, name))
    own_names = set(helpers)  # the file's own reached helpers and its fixtures
    for name, (hops, via) in targets.items():
        helpers[name] = min(helpers.get(name, (99, "")), (hops + 1, via))
    weak = by_file - own_names
    case_of_line = _case_of_line(cases)
    for ref in refs:
        found = helpers.get(ref.name)
        if found is None or (ref.name in weak and not _receiver_unknown(ref)):
            continue
        index = case_of_line.get(ref.line)
        if index is not None:
            offer(index, _Hit(found[0], found[1]))
            continue
        holding = _hook_groups(groups, ref.line, ref.line)
        for i, case in enumerate(cases if holding else ()):  # a setup hook's line runs before each case
            if _holds(holding, case):
                offer(i, _Hit(found[0], found[1]))
    for i, case in enumerate(cases):
        for param in case.params:
            if param in helpers:
                offer(i, _Hit(helpers[param][0], helpers[param][1]))
        if lines.has(path) and any(lines.touched(path, n) for n in range(case.start_line, case.end_line + 1)):
            offer(i, _Hit(0, changed=True))
    return [(cases[i], hit) for i, hit in sorted(hits.items())]


def _case_of_line(cases: Sequence[TestCase]) -> dict[int, int]:
    """The innermost case holding each line (cases nest only in odd code)."""
    out: dict[int, int] = {}
    for index in sorted(range(len(cases)), key=lambda i: -(cases[i].end_line - cases[i].start_line)):
        for line in range(cases[index].start_line, cases[index].end_line + 1):
            out[line] = index
    return out


def _hook_groups(groups: Sequence[TestGroup], start: int, end: int) -> list[TestGroup]:
    """The groups with a setup hook holding lines ``start``–``end`` (usually none: then no case
    needs to be looked at)."""
    return [g for g in groups if any(h_start <= start and end <= h_end for h_start, h_end in g.hooks)]


def _holds(groups: Sequence[TestGroup], case: TestCase) -> bool:
    """Whether one of ``groups`` holds ``case``."""
    return any(g.start_line <= case.start_line and case.end_line <= g.end_line for g in groups)
