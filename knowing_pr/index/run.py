"""A commit of a git repository → the store brought to that commit (full or incremental), in one
transaction, as named phases:

1. **diff** — the files changed since the indexed commit (a tree diff), or every file (full);
2. **classify** — skip reasons from the tree entry and the bytes (``classify.py``);
3. **parse** — tree-sitter in isolated processes (``parse.py``) → nodes; an incremental run takes
   the results kept for file versions it parsed before (``parsecache.py``);
4. **resolve** — the symbol table (lazy per name for an everyday commit, read whole for a large
   update) → the edges of every re-resolved origin (``names.py`` says which);
5. **store** — files, nodes, references and edges written;
6. **roots** — file and directory Merkle roots up to the graph root (``roots.py``);
7. **history** — new commits mined, co-change edges rewritten (``history.py``);
8. **cache** — the adjacency blob patched or rebuilt (``cache.py``);
9. **fit** — the file model's training rows for the new commits, and a refit when enough
   arrived (``filefit.py``);
10. **meta** — the indexed commit, the graph root, the settings key, the run report.

Phases 5–10 run inside one ``BEGIN IMMEDIATE`` transaction: a killed process leaves the
previous commit. Damage found before writing or by a query moves the file aside and rebuilds.

``index_commit`` (``commit.py``) runs it when the store is not at the commit already. One module
for the whole run (a little over the style's ~400 lines): the phases share one transaction and the
run's state, and read best in order in one place.
"""

from __future__ import annotations

import gc
import json
import posixpath
import time
from dataclasses import dataclass, field

from knowing_pr import __version__
from knowing_pr.config import Settings
from knowing_pr.git import MODE_GITLINK, MODE_SYMLINK, GitRepo, TreeEntry, is_utf8
from knowing_pr.graph import (
    FileRefs,
    SymbolTable,
    build_nodes,
    decode_refs,
    encode_refs,
    file_refs,
    resolve_file,
)
from knowing_pr.graph.deps import DEPENDS_PREFIX, closure
from knowing_pr.graph.packages import PACKAGE_MANIFEST, Packages, manifest_name
from knowing_pr.graph.values import Evaluator
from knowing_pr.index.cache import AdjacencyDelta, write_adjacency
from knowing_pr.index.classify import classify_content, classify_entry
from knowing_pr.index.filefit import update_file_model
from knowing_pr.index.fileinputs import refresh_file_inputs
from knowing_pr.index.history import WindowAhead, start_mine_from_scratch, update_history
from knowing_pr.index.historyahead import MineAhead
from knowing_pr.index.names import (
    changed_fact_keys,
    changed_manifest_keys,
    reference_names,
    touched_names,
)
from knowing_pr.index.parse import Progress, parse_items
from knowing_pr.index.parsecache import ParseCache
from knowing_pr.index.report import IndexReport, grammar_version, settings_key
from knowing_pr.index.roots import file_roots, rebuild_dir_roots, update_dir_roots
from knowing_pr.model import Edge, Node, ParsedFile
from knowing_pr.parse import language_for_path
from knowing_pr.parse.sketch import content_sketch, is_generated, sketch_to_bytes
from knowing_pr.store import FileRow, Store
from knowing_pr.store.filedata import inputs_tag
from knowing_pr.store.filewords import delete_file_words, file_text_words, paths_without_words, put_file_words
from knowing_pr.store.history import HISTORY_ORIGIN
from knowing_pr.store.schema import FILE_WORDS_PENDING_META
from knowing_pr.store.sketches import delete_sketches, put_sketches

__all__ = ["IndexRun"]

#: an index run that parsed at least this many files frees the resolve step's reference cycles
#: at once (memory only: what is stored does not depend on it)
COLLECT_AFTER_FILES = 256

SymbolRow = tuple[str, str, str, str, str]


@dataclass
class _Change:
    """Phase 1: what the run must (re)index and remove."""

    incremental: bool
    entries: dict[str, TreeEntry]
    changed: set[str]
    removed: set[str]
    #: the commit the store held before (an incremental run's base)
    previous: str | None = None


@dataclass
class _Files:
    """Phases 2–3: each touched file's row, and the parse results of the indexed ones."""

    rows: dict[str, FileRow] = field(default_factory=dict)
    #: (path, language, bytes) of the files to parse, emptied by the parse phase
    to_parse: list[tuple[str, str, bytes]] = field(default_factory=list)
    parsed: dict[str, ParsedFile] = field(default_factory=dict)
    nodes: dict[str, list[Node]] = field(default_factory=dict)
    #: (content sketch, generated) of each parsed file (``parse.sketch``)
    sketches: dict[str, tuple[bytes, bool]] = field(default_factory=dict)
    #: each parsed file's words for the file-level BM25 (``store.filewords``)
    words: dict[str, str] = field(default_factory=dict)
    #: the parse results kept by file version (an incremental run's)
    cache: ParseCache | None = None


@dataclass
class _Resolution:
    """Phase 4: the edges of every re-resolved origin, and what the adjacency patch needs."""

    refs: dict[str, FileRefs]
    edges_by_origin: dict[str, list[Edge]]
    affected: set[str]
    old_rows: set[SymbolRow]
    new_rows: set[SymbolRow]
    #: path → references of it whose analysis failed (no edge for them: ``resolve_file``)
    failed: dict[str, int] = field(default_factory=dict)


@dataclass
class IndexRun:
    """One index run of ``target`` into a store that is not at it (the phases above)."""

    repo: GitRepo
    settings: Settings
    target: str | None
    full: bool
    progress: Progress | None
    t0: float
    #: the hook path: keep the file model's weights even when a refit is due
    defer_refit: bool = False
    timings: dict[str, float] = field(default_factory=dict)
    unreadable_paths: int = 0

    def _step(self, step: str, done: int = 0, total: int = 0) -> None:
        """Where a long step is (``total`` 0: a step without a count), for ``progress``."""
        if self.progress is not None:
            self.progress(step, done, total)

    def _timed(self, phase: str, since: float) -> None:
        self.timings[phase] = (time.perf_counter() - since) * 1000

    def index(self, store: Store, recovered: str | None) -> IndexReport:
        previous = store.indexed_commit
        key = settings_key(self.settings)
        stale_settings = store.get_meta("settings_key") != key
        # about to write: never build on a damaged file (a flipped page survives incremental runs)
        if self.settings.index.verify_before_write and not store.unchanged_since_own_write():
            t = time.perf_counter()
            store.check_integrity()
            self._timed("check", t)
        change = self._diff(store, previous, stale_settings)
        self._timed("diff", self.t0)
        t = time.perf_counter()
        files = self._classify(change)
        self._timed("read", t)
        t = time.perf_counter()
        self._parse(change, files, store, key)
        self._timed("parse", t)
        ahead: MineAhead | WindowAhead | None = None
        try:
            t = time.perf_counter()
            ahead = self._mine_ahead(store, change, stale_settings)
            if ahead is not None:
                self._timed("history_start", t)
            t = time.perf_counter()
            resolution = self._resolve(store, change, files)
            # the cycle collector is paused for the run (``commit._no_cycle_collection``), and the
            # resolve step's evaluation leaves reference cycles (171,000 objects on sympy): one
            # collection here frees them before the store and the history mine build on top. A
            # small run leaves few, and a full collection costs the whole heap of a long-lived
            # process (the MCP server, a test run): only a run of many files collects
            if len(change.changed) >= COLLECT_AFTER_FILES:
                gc.collect()
            self._timed("resolve", t)
            return self._write(
                store, change, files, resolution, previous, key, stale_settings, recovered, ahead
            )
        finally:
            if ahead is not None:
                ahead.drop()

    def _mine_ahead(
        self, store: Store, change: _Change, stale_settings: bool
    ) -> MineAhead | WindowAhead | None:
        """The history's mine from scratch started before this run resolves and stores, when the
        history step will mine from scratch (``start_mine_from_scratch``): all of it in a child
        process when the run is large enough to leave a core idle that long
        (``index.mine_ahead_min_files``), else its ``git log`` alone, on the idle core while
        resolve and store run on the other (the setting 0: neither); the history step takes
        either, or mines itself."""
        least = self.settings.index.mine_ahead_min_files
        if self.target is None or not least:
            return None
        return start_mine_from_scratch(
            self.repo,
            store,
            self.settings,
            self.target,
            full=self.full or stale_settings,
            child=len(change.changed) >= least,
        )

    # -- 1. diff --------------------------------------------------------------------------------

    def _diff(self, store: Store, previous: str | None, stale_settings: bool) -> _Change:
        target = self.target
        incremental = (
            not self.full
            and not stale_settings
            and previous is not None
            and target is not None
            and self.repo.has_commit(previous)
        )
        if incremental:
            assert previous is not None and target is not None
            changed: set[str] = set()
            removed: set[str] = set()
            for item in self.repo.diff_trees(previous, target):
                if item.old_path and item.old_path != item.new_path:
                    removed.add(item.old_path)
                if item.new_path:
                    changed.add(item.new_path)
            removed -= changed
            entries = self.repo.entries_at(target, changed)
        else:
            entries = {e.path: e for e in self.repo.tree_entries(target)} if target else {}
            changed = set(entries)
            removed = set(store.file_paths()) - changed
        # only what is in the target tree can be (re)indexed
        removed |= {p for p in changed if p not in entries}
        changed &= set(entries)
        # a path whose bytes are not UTF-8 cannot be a row of the store (SQLite text is UTF-8):
        # such a file is counted as skipped, never half-written
        unreadable = {p for p in changed if not is_utf8(p)}
        self.unreadable_paths = len(unreadable)
        return _Change(
            incremental,
            entries,
            changed - unreadable,
            {p for p in removed if is_utf8(p)},
            previous if incremental else None,
        )

    # -- 2. classify ----------------------------------------------------------------------------

    def _classify(self, change: _Change) -> _Files:
        files = _Files()
        for path in sorted(change.changed):
            entry = change.entries[path]
            language = language_for_path(path)
            reason = classify_entry(entry, self.settings)
            data = b""
            if reason is None:
                data = self.repo.read_blob(entry.blob_id)
                reason = classify_content(data, self.settings)
            if reason is not None:
                files.rows[path] = FileRow(
                    path, entry.blob_id, language, entry.size, "skipped", reason, None, 0
                )
                continue
            assert language is not None
            files.to_parse.append((path, language, data))
        return files

    # -- 3. parse -------------------------------------------------------------------------------

    def _parse(self, change: _Change, files: _Files, store: Store, key: str) -> None:
        sources = {path: data for path, _, data in files.to_parse}
        if change.incremental:  # versions parsed before are taken as kept (``parsecache.py``)
            blobs = {path: change.entries[path].blob_id for path in sources}
            files.cache = ParseCache(store, blobs, key)
        for path, result, reason in parse_items(files.to_parse, self.settings, self.progress, files.cache):
            entry = change.entries[path]
            if result is None:
                files.rows[path] = FileRow(
                    path,
                    entry.blob_id,
                    language_for_path(path),
                    entry.size,
                    "skipped",
                    reason or "parser-error",
                    None,
                    0,
                )
                continue
            files.parsed[path] = result
            files.rows[path] = FileRow(
                path, entry.blob_id, result.language, entry.size, "indexed", None, None, result.line_count
            )
            # nodes need the bytes once (content hashes); drop them as we go to bound peak memory
            data = sources.pop(path)
            files.sketches[path] = (sketch_to_bytes(content_sketch(data)), is_generated(data))
            files.words[path] = file_text_words(data)
            files.nodes[path] = build_nodes(result, data, entry.blob_id)
        files.to_parse = []

    # -- 4. resolve -----------------------------------------------------------------------------

    def _resolve(self, store: Store, change: _Change, files: _Files) -> _Resolution:
        gone = change.changed | change.removed
        new_rows = {
            (n.id, n.path, n.name, n.qualified_name, n.kind) for ns in files.nodes.values() for n in ns
        }
        old_rows: set[SymbolRow] = set()
        refs = {path: file_refs(p) for path, p in files.parsed.items()}
        if change.incremental:
            old_rows = set(store.symbol_rows_in(gone))
            touched = touched_names(old_rows ^ new_rows) | changed_fact_keys(store, gone, refs)
            touched |= changed_manifest_keys(gone, self._manifest_names(change, gone))
            touched = closure(touched, lambda names: store.keys_reading(names, DEPENDS_PREFIX))
            affected = (store.paths_referencing(touched) - gone) if touched else set()
            share = self.settings.index.eager_symbols_share
            if len(files.parsed) + len(affected) >= share * store.indexed_file_count():
                # a large update: one read of every other file's symbols, the table a full index has
                kept = [row for row in store.symbol_rows() if row[1] not in gone]
                table = SymbolTable([*kept, *sorted(new_rows)])
            else:  # an everyday commit: ask the store per name, for the few names its files use
                table = SymbolTable(
                    sorted(new_rows),
                    source=store,
                    module_paths=set(files.parsed),
                    hidden_paths=frozenset(gone),
                )
                table.prefetch_modules(affected)
        else:
            affected = set()
            table = SymbolTable(
                (n.id, n.path, n.name, n.qualified_name, n.kind) for ns in files.nodes.values() for n in ns
            )
        table.packages = Packages(self._manifest_bytes, lambda: self._manifest_paths(store, change))
        affected = {p for p in affected if p in table.module_of}
        for path, text in store.refs_for(affected).items():
            refs[path] = decode_refs(path, text)
        # other files' facts (what a module variable, an attribute, a return holds) are read
        # from this run's parse results, else from the store
        table.use_refs(refs, store if change.incremental else None)
        values = Evaluator(table)
        edges_by_origin: dict[str, list[Edge]] = {}
        for done, (path, refs_of_file) in enumerate(sorted(refs.items()), 1):
            edges_by_origin[path] = resolve_file(table, refs_of_file, self.settings.index, values)
            self._step("resolve", done, len(refs))
        return _Resolution(refs, edges_by_origin, affected, old_rows, new_rows, dict(values.failed))

    def _manifest_bytes(self, path: str) -> bytes | None:
        """A ``package.json`` at the indexed commit (a JS directory import's entry), or None when
        absent, a link, or over the file size limit."""
        return self._manifest_at(self.target, path)

    def _manifest_paths(self, store: Store, change: _Change) -> list[str]:
        """Every ``package.json`` of the indexed commit outside ``node_modules`` and the
        excluded paths (a workspace's packages): the store's files before this run, updated by
        the run's changes."""
        paths = set(change.entries) if not change.incremental else set(store.file_paths())
        paths = (paths - change.removed) | change.changed
        return sorted(
            p
            for p in paths
            if posixpath.basename(p) == PACKAGE_MANIFEST
            and "node_modules" not in p.split("/")
            and not self.settings.index.is_excluded(p)
        )

    def _manifest_names(self, change: _Change, paths: set[str]) -> set[str]:
        """The package names the changed and removed manifests declared before and after."""
        names: set[str] = set()
        for path in sorted(p for p in paths if posixpath.basename(p) == PACKAGE_MANIFEST):
            for commit in (change.previous, self.target):
                data = self._manifest_at(commit, path)
                name = manifest_name(data) if data is not None else None
                if name:
                    names.add(name)
        return names

    def _manifest_at(self, commit: str | None, path: str) -> bytes | None:
        if commit is None:
            return None
        entry = self.repo.entries_at(commit, [path]).get(path)
        if entry is None or entry.mode in (MODE_SYMLINK, MODE_GITLINK) or entry.size < 0:
            return None
        if entry.size > self.settings.index.max_file_bytes:
            return None
        return self.repo.read_blob(entry.blob_id)

    # -- 5.–9. store, roots, history, cache, meta (one transaction) --------------------------------

    def _write(
        self,
        store: Store,
        change: _Change,
        files: _Files,
        resolution: _Resolution,
        previous: str | None,
        key: str,
        stale_settings: bool,
        recovered: str | None,
        ahead: MineAhead | WindowAhead | None = None,
    ) -> IndexReport:
        t = time.perf_counter()
        gone = change.changed | change.removed
        dirty = set(resolution.edges_by_origin)
        now_skipped = {p for p, row in files.rows.items() if row.status == "skipped"}
        delta: AdjacencyDelta | None = None
        if change.incremental:
            old_ids = {r[0] for r in resolution.old_rows}
            new_ids = {r[0] for r in resolution.new_rows}
            delta = AdjacencyDelta(
                dirty_origin_ids=sorted(store.origin_ids(gone | dirty | {HISTORY_ORIGIN}).values()),
                vanished_ids=old_ids - new_ids,
                added_ids=new_ids - old_ids,
            )
        self._step("store")
        with store.transaction():
            self._store_rows(store, change, files, resolution, gone, dirty, now_skipped)
            _record_failures(store, gone | dirty, resolution.failed)
            if files.cache is not None:
                files.cache.keep()
            roots = file_roots(store, dirty, files.nodes, resolution.edges_by_origin)
            store.set_file_roots(roots)
            if change.incremental:
                graph_root = update_dir_roots(store, set(files.rows) | change.removed | dirty)
            else:
                graph_root = rebuild_dir_roots(store)
            self._timed("store", t)
            parsed_count, affected_count = len(files.parsed), len(resolution.affected)
            # the graph is in the store now: free the parse results before the history mine
            # (they and the mine's records together were the peak of a large index)
            _free_parse_results(files, resolution)
            t = time.perf_counter()
            self._step("history")
            history = update_history(
                self.repo, store, self.settings, self.target, full=self.full or stale_settings, ahead=ahead
            )
            self._timed("history", t)
            # within "history", unless the mine ran ahead: then the child's time, and the wait
            self.timings["history_mine"] = history.mine_seconds * 1000
            if history.ahead_wait_seconds is not None:
                self.timings["history_wait"] = history.ahead_wait_seconds * 1000
            t = time.perf_counter()
            if delta is not None:
                current = store.origin_ids(dirty | {HISTORY_ORIGIN}).values()
                delta.dirty_origin_ids = sorted(set(delta.dirty_origin_ids) | set(current))
            self._step("adjacency")
            adjacency_mode = write_adjacency(store, graph_root, delta)
            self._timed("adjacency", t)
            t = time.perf_counter()
            self._step("fit")
            update_file_model(
                store,
                self.settings,
                history.state,
                extended_from=history.extended_from,
                full=self.full or stale_settings,
                defer_refit=self.defer_refit,
            )
            if not self.defer_refit and self.settings.files.enabled:  # the hook's worker: when idle
                refresh_file_inputs(store, inputs_tag(graph_root, self.target), rewrite=True)
            self._timed("fit", t)
            return self._record(
                store,
                change,
                files,
                graph_root,
                previous,
                key,
                parsed_count,
                affected_count,
                adjacency_mode,
                recovered,
                resolution,
            )

    def _store_rows(
        self,
        store: Store,
        change: _Change,
        files: _Files,
        resolution: _Resolution,
        gone: set[str],
        dirty: set[str],
        now_skipped: set[str],
    ) -> None:
        store.delete_edges_from(sorted(gone | dirty))
        delete_file_words(store.conn, sorted(change.removed | now_skipped))
        store.delete_files(sorted(change.removed | now_skipped))
        delete_sketches(store, sorted(change.removed | now_skipped))
        put_sketches(store, ((path, *files.sketches[path]) for path in sorted(files.sketches)))
        store.upsert_files(files.rows.values())
        put_file_words(store.conn, sorted(files.words.items()))
        self._fill_file_words(store)
        for path in sorted(files.nodes):
            store.replace_nodes(path, files.nodes[path])
        store.put_refs(
            (path, encode_refs(p), reference_names(path, resolution.refs[path], files.nodes[path]))
            for path, p in sorted(files.parsed.items())
        )
        store.put_test_cases((path, p.test_cases) for path, p in sorted(files.parsed.items()))
        origins = sorted(resolution.edges_by_origin)
        for start in range(0, len(origins), 256):  # in slices: one huge row list costs memory
            batch = origins[start : start + 256]
            store.insert_edges((e, origin) for origin in batch for e in resolution.edges_by_origin[origin])

    def _fill_file_words(self, store: Store) -> None:
        """The indexed files without a ``file_words`` row (a store written before the table
        existed): their words from their blobs. Only once, after the table was added: the scan of
        both tables is not for every run (the hook's)."""
        if store.get_meta(FILE_WORDS_PENDING_META) != "1":
            return
        missing = paths_without_words(store.conn)
        paths = sorted(missing)
        for start in range(0, len(paths), 512):
            batch = paths[start : start + 512]
            put_file_words(store.conn, [(p, file_text_words(self.repo.read_blob(missing[p]))) for p in batch])
        store.set_meta(FILE_WORDS_PENDING_META, "")

    def _record(
        self,
        store: Store,
        change: _Change,
        files: _Files,
        graph_root: str,
        previous: str | None,
        key: str,
        parsed_count: int,
        affected_count: int,
        adjacency_mode: str,
        recovered: str | None,
        resolution: _Resolution,
    ) -> IndexReport:
        store.set_meta("graph_root", graph_root)
        store.set_meta("indexed_commit", self.target or "")
        store.set_meta("settings_key", key)
        store.set_meta("tool_version", __version__)
        store.set_meta("grammar_version", grammar_version())
        skipped: dict[str, int] = {"path-not-utf8": self.unreadable_paths} if self.unreadable_paths else {}
        for row in files.rows.values():
            if row.status == "skipped" and row.reason:
                skipped[row.reason] = skipped.get(row.reason, 0) + 1
        self.timings["total"] = (time.perf_counter() - self.t0) * 1000
        report = IndexReport(
            commit=self.target,
            previous=previous,
            graph_root=graph_root,
            mode="incremental" if change.incremental else "full",
            files_parsed=parsed_count,
            files_removed=len(change.removed),
            files_affected=affected_count,
            skipped=skipped,
            timings_ms=self.timings,
            recovered_from=recovered,
            adjacency=adjacency_mode,
            analysis_failures=dict(sorted(resolution.failed.items())),
            parses_kept=files.cache.taken if files.cache is not None else 0,
        )
        store.set_meta("last_run", json.dumps(report.as_dict(), sort_keys=True))
        return report


def _free_parse_results(files: _Files, resolution: _Resolution) -> None:
    """Drop what the store holds now (nodes, references, edges, sketches, words); the file rows
    and the counts stay for the run report."""
    files.parsed.clear()
    files.nodes.clear()
    files.sketches.clear()
    files.words.clear()
    resolution.refs.clear()
    resolution.edges_by_origin.clear()


#: store meta key: path → references whose analysis failed, over every run (``stats`` shows it)
ANALYSIS_FAILURES_KEY = "analysis_failures"


def _record_failures(store: Store, resolved: set[str], failed: dict[str, int]) -> None:
    """The store's list of files with failed references: the re-resolved and removed files'
    entries replaced by this run's."""
    raw = store.get_meta(ANALYSIS_FAILURES_KEY)
    held: dict[str, int] = json.loads(raw) if raw else {}
    kept = {path: n for path, n in held.items() if path not in resolved}
    kept.update(failed)
    if kept or raw:
        store.set_meta(ANALYSIS_FAILURES_KEY, json.dumps(dict(sorted(kept.items()))))
