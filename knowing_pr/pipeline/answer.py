"""A change (its diffs, the nodes of its files, their definitions at the base) + the store → what
a reviewer asks first: the change's own symbols and how their signatures changed, what it
removed, who calls it (``CallSite``), which tests to run (``TestToRun``) and which changed file
each history partner pairs with — the ``ChangeSummary`` of a ``pr`` pack.

``change_facts`` runs before the ranking (its symbols are the ranking's anchors);
``reviewer_summary`` after it (it reads the same adjacency).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from knowing_pr.config import Settings
from knowing_pr.git import FileDiff, GitRepo, TreeEntry
from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.model import CallSite, ChangeSummary, Definition, Node, RemovedSymbol, TestToRun
from knowing_pr.parse import language_for_path
from knowing_pr.rank.callers import ChangeLines, call_sites, imported_call_sites, removed_call_sites
from knowing_pr.rank.changes import breaks_callers, changed_in_file, in_file_name, signature_changes
from knowing_pr.rank.memo import Memo
from knowing_pr.rank.runnable import select_tests
from knowing_pr.rank.runners import RepoFiles
from knowing_pr.store import Store

__all__ = ["ChangeFacts", "change_facts", "changes_code", "head_files", "reviewer_summary"]

#: call sites and tests a summary keeps before the budget cuts it further
_MAX_LISTED = 400


@dataclass
class ChangeFacts:
    """The change read once: its own symbols (ids, in file order), those that are new, their
    signature changes (id → (what changed, the base's signature)), what it removed, its lines."""

    changed: tuple[str, ...] = ()
    new: frozenset[str] = frozenset()
    signatures: dict[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)
    removed: list[RemovedSymbol] = field(default_factory=list)
    lines: ChangeLines = field(default_factory=lambda: ChangeLines({}))
    has_code: bool = True
    #: the symbols whose signature change may break calls written for the old one
    breaking: frozenset[str] = frozenset()


#: per process: the blobs the summary read, by id (content-addressed, so never stale), each of at
#: most ``_BLOB_KEPT_BYTES``: a warm server reads the same callers' files for change after change
_BLOBS = Memo(capacity=256)
_BLOB_KEPT_BYTES = 128 << 10


def head_files(repo: GitRepo, head: str, max_bytes: int) -> RepoFiles:
    """The head's files for the summary: directory listings and bytes (files over ``max_bytes``
    read as absent)."""

    entries: dict[str, TreeEntry | None] = {}

    def entry_of(path: str) -> TreeEntry | None:
        if path not in entries:
            entry = repo.entries_at(head, [path]).get(path)
            entries[path] = entry if entry is not None and entry.size <= max_bytes else None
        return entries[path]

    def identify(path: str) -> str | None:
        entry = entry_of(path)
        return entry.blob_id if entry is not None else None

    def read(path: str) -> bytes | None:
        entry = entry_of(path)
        if entry is None:
            return None
        if entry.size > _BLOB_KEPT_BYTES:
            return repo.read_blob(entry.blob_id)
        return _BLOBS.get(entry.blob_id, lambda: repo.read_blob(entry.blob_id))

    return RepoFiles(
        lister=lambda directory: repo.file_names(head, directory), reader=read, identifier=identify
    )


def text_lines(files: RepoFiles, path: str) -> list[str] | None:
    data = files.read(path)
    return None if data is None else data.decode("utf-8", "replace").splitlines()


def changes_code(paths: Sequence[str]) -> bool:
    """Whether a change of ``paths`` touches a source file (else it has no code to rank)."""
    return any(language_for_path(p) for p in paths)


def change_facts(
    *,
    diffs: Sequence[FileDiff],
    changed_paths: Sequence[str],
    nodes_by_path: Mapping[str, Sequence[Node]],
    base_defs: Mapping[str, Sequence[Definition]],
    removed: Mapping[str, Sequence[Definition]],
    files: RepoFiles,
) -> ChangeFacts:
    """The change's own symbols and their signature changes (``rank.changes``), what it removed.
    With no diffs (``--files``), every symbol of the files is the change's."""
    has_code = changes_code(changed_paths)
    if not diffs:
        ids = [n.id for p in changed_paths for n in nodes_by_path.get(p, ()) if n.kind != "module"]
        modules = [n.id for p in changed_paths for n in nodes_by_path.get(p, ()) if n.kind == "module"]
        return ChangeFacts(
            changed=tuple(ids or modules),
            lines=ChangeLines(dict.fromkeys(changed_paths)),
            has_code=has_code,
        )
    changed: list[str] = []
    new: set[str] = set()
    signatures: dict[str, tuple[tuple[str, ...], str]] = {}
    breaking: set[str] = set()
    for diff in diffs:
        path = diff.new_path
        if path is None or diff.status == "D" or path not in nodes_by_path:
            continue
        nodes = nodes_by_path[path]
        added = None if diff.status == "A" else diff.added
        code_gaps = _code_deleted_at(diff, removed.get(diff.old_path or "", ()))
        found = changed_in_file(nodes, added, diff.deleted_at, text_lines(files, path), code_gaps).ids
        changed.extend(found)
        base = {(d.qualified_name, d.kind): d for d in base_defs.get(diff.old_path or "", [])}
        by_id = {n.id: n for n in nodes}
        for node_id in found:
            node = by_id[node_id]
            if node.kind == "module":
                continue
            before = base.get((in_file_name(node), node.kind))
            if before is None:
                if diff.status == "A" or diff.old_path in base_defs or _written_whole(node, diff):
                    new.add(node_id)
                continue
            what = signature_changes(before.signature, node.signature, node.name, node.kind)
            if what:
                signatures[node_id] = (what, before.signature)
                if breaks_callers(before.signature, node.signature, node.name, node.kind):
                    breaking.add(node_id)
    removed_symbols = [
        RemovedSymbol(name=d.name, kind=d.kind, path=path, line=d.start_line)
        for path, definitions in sorted(removed.items())
        for d in definitions
        if d.parent is None or d.parent not in {x.qualified_name for x in definitions}
    ]
    lines = ChangeLines(
        {d.new_path: (None if d.status == "A" else d.added) for d in diffs if d.new_path and d.status != "D"}
    )
    return ChangeFacts(
        tuple(changed), frozenset(new), signatures, removed_symbols, lines, has_code, frozenset(breaking)
    )


def _code_deleted_at(diff: FileDiff, removed: Sequence[Definition]) -> list[int]:
    """The gaps of ``diff`` whose deleted lines hold no removed definition's first line (they took
    code with them, not a definition: the definition is reported *removed* instead)."""
    return [
        gap
        for gap, (start, end) in zip(diff.deleted_at, diff.deleted_ranges, strict=False)
        if not any(start <= d.start_line <= end for d in removed)
    ]


def site_lines(sites: Sequence[CallSite]) -> list[str]:
    """Every call site as "path:line,line,…", one item per file, the files in the sites' order."""
    by_path: dict[str, list[int]] = {}
    for site in sites:
        by_path.setdefault(site.path, []).append(site.line)
    return [f"{path}:{','.join(str(n) for n in sorted(set(found)))}" for path, found in by_path.items()]


def _written_whole(node: Node, diff: FileDiff) -> bool:
    """Whether the change wrote every line of ``node`` (a definition it added)."""
    return any(start <= node.start_line and node.end_line <= end for start, end in diff.added)


def reviewer_summary(
    store: Store,
    adjacency: Adjacency,
    settings: Settings,
    facts: ChangeFacts,
    *,
    files: RepoFiles,
    cochange: Sequence[tuple[str, int, int]] = (),
    cochange_with: Mapping[str, str] | None = None,
) -> ChangeSummary:
    """The summary a ``pr`` pack carries (before the budget cuts its lists). A change without
    code has no symbols, callers or removals, but its tests still run: a ``package.json`` whose
    dependency it bumps lists the tests that import that dependency (``rank.jsdeps``)."""
    if not facts.has_code:
        tests = _tests_to_run(store, adjacency, settings, facts, [], files, cochange, cochange_with)
        return ChangeSummary(no_code=True, tests=tests, tests_total=len(tests))
    nodes = store.nodes_by_ids(facts.changed)
    changed = [nodes[i] for i in facts.changed if i in nodes]

    lines_of: dict[str, list[str] | None] = {}

    def read_lines(path: str) -> list[str] | None:  # once per file: a file has many call sites
        if path not in lines_of:
            lines_of[path] = text_lines(files, path)
        return lines_of[path]

    sites = call_sites(
        store,
        adjacency,
        changed,
        lines=facts.lines,
        signature_changed=facts.breaking,
        read_lines=read_lines,
        min_confidence=settings.rank.min_shown_confidence,
    )
    sites += imported_call_sites(
        store,
        changed,
        known={(s.path, s.line) for s in sites},
        lines=facts.lines,
        signature_changed=facts.breaking,
        read_lines=read_lines,
    )
    sites += removed_call_sites(store, facts.removed, lines=facts.lines, read_lines=read_lines)
    sites.sort(key=lambda s: (not s.not_updated, s.in_change, s.path, s.line))
    tests = _tests_to_run(store, adjacency, settings, facts, changed, files, cochange, cochange_with)
    return ChangeSummary(
        call_sites=sites[:_MAX_LISTED],
        call_sites_total=len(sites),
        call_sites_outside=sum(not s.in_change for s in sites),
        call_sites_not_updated=sum(s.not_updated for s in sites),
        call_site_lines=site_lines(sites),
        tests=tests,  # all of them, whatever the budget: names are cheap
        tests_total=len(tests),
        removed=list(facts.removed),
        removed_total=len(facts.removed),
        cochange_with=dict(cochange_with or {}),
    )


def _tests_to_run(
    store: Store,
    adjacency: Adjacency,
    settings: Settings,
    facts: ChangeFacts,
    changed: Sequence[Node],
    files: RepoFiles,
    cochange: Sequence[tuple[str, int, int]],
    cochange_with: Mapping[str, str] | None,
) -> list[TestToRun]:
    pack = settings.pack
    return select_tests(
        store,
        adjacency,
        changed,
        lines=facts.lines,
        files=files,
        max_hops=pack.test_max_hops,
        max_files=pack.test_max_files,
        min_confidence=settings.rank.min_shown_confidence,
        cochange=cochange,
        cochange_with=cochange_with,
        import_depth=pack.test_import_depth,
    )
