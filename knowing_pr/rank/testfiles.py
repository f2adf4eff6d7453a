"""The changed files + the graph + the head's files + history → test files to run as a whole, each
with the evidence that ties it to the change (``FileEvidence``), for the files no test case of
which reaches the changed code through calls (``rank.runnable``).

Evidence, strongest first (``EVIDENCE_ORDER``):

- ``named``: the test file is named after a changed file (``test_x.py``, ``x_test.go``,
  ``x.test.ts``, ``XTest.java``) and imports it (maybe through other files), or lives in its Go
  package (a test of a Go ``package main`` stays ``program``); or a changed Vitest/Jest config names
  its path on a line the change wrote (vite's ``vitest.config.e2e.ts`` listing a spec to leave
  out of one mode);
- ``history``: it changed together with a changed file in the past (the pack's co-change rows);
- ``program``: it drives the program a changed file belongs to: a Rust integration test in
  ``tests/`` that runs the crate's binary (``cargo_bin``, ``CARGO_BIN_EXE_``), a Python test that
  runs a console script through Click's ``CliRunner`` or ``subprocess``, a Go test of ``package
  main``, a JavaScript/TypeScript test of the changed file's package that starts a process and
  names, from its own directory, a file that is changed or imports the change
  (``execFileSync(tsx, [path.resolve(__dirname, '../src/cli.ts')])``);
- ``package``: a Go test file of a changed file's package (Go imports packages, not files);
- ``imports``: it imports a changed file (through the package's re-exports too, as the resolver
  follows them);
  a Rust integration test (``tests/**.rs``) of the changed file's crate or of a crate that
  depends on it (``use`` edges across crates' re-exports are often missing from the graph);
- ``imports-via``: it imports a file that imports a changed file, up to ``max_depth`` files away;
- ``dependency``: a JavaScript/TypeScript test file that imports a dependency whose version the
  change bumps in the ``package.json`` the import resolves it from (the nearest above the file
  declaring it: ``rank.jsdeps``);
- ``setup``: a JavaScript/TypeScript test runner's config (``vitest.config.ts``, ``jest.config.js``)
  includes it and the change edits that config (or one it imports: ``mergeConfig(base, …)``),
  or the config names a setup file
  (``setupFiles``, ``globalSetup``) that is changed, imports the change (up to ``max_depth``
  files away) or imports by name the package a changed file belongs to (``rank.runnerconfig``;
  a setup file of another language than JavaScript/TypeScript, which the runner cannot load, none):
  the test runs after that setup, whatever it imports itself (vite's end-to-end specs and the
  dev server their ``vitestSetup.ts`` starts; vite's browser client, which no module imports,
  belongs to the package ``vite`` the setup imports). Every test file of such a config has it,
  so it ranks last.

A test file is ``named`` after a changed file by its own name or by a directory of its test tree
(koa's ``__tests__/response/body.test.js`` and ``lib/response.js``).

Every test file found by ``imports``/``imports-via`` is listed: the import closure is the recall
floor, the order is the precision.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.graph.packages import manifest_name
from knowing_pr.graph.paths import is_test_path, test_subject_stem
from knowing_pr.model import EdgeKind
from knowing_pr.parse import language_for_path
from knowing_pr.parse.testcases import TEST_CASE_LANGUAGES, find_test_cases
from knowing_pr.rank.callers import incoming_edges
from knowing_pr.rank.jsdeps import bumped_dependencies, governing_bumps, imports_any, manifests_changed
from knowing_pr.rank.runnerconfig import RunnerConfig, is_runner_config, paths_written
from knowing_pr.rank.runners import RepoFiles, crate_name, is_crate_manifest, runner_config
from knowing_pr.store import Store

__all__ = ["EVIDENCE_ORDER", "FileEvidence", "holds_tests", "test_files_by_evidence"]

#: evidence kinds, strongest first (case-level kinds of ``rank.runnable`` included)
EVIDENCE_ORDER = (
    "edited",
    "calls",
    "named",
    "history",
    "program",
    "package",
    "imports",
    "imports-via",
    "dependency",
    "setup",
)
#: a Rust integration test that runs the crate's binary
_RUNS_BINARY = re.compile(rb"cargo_bin|CARGO_BIN_EXE_|assert_cmd|escargot")
#: a Python test that drives a command line: Click's runner, or a subprocess
_RUNS_CLI = re.compile(rb"CliRunner|subprocess\.|\brun_cli\b")
#: a JavaScript/TypeScript test that starts a process (Node's ``child_process``, execa)
_SPAWNS_JS = re.compile(rb"\b(?:execa(?:Node|Sync)?|execFile(?:Sync)?|execSync|spawn(?:Sync)?|fork)\s*\(")
#: a path a JavaScript/TypeScript file names from its own directory: ``path.resolve(__dirname,
#: '../src/cli.ts')``, ``join(import.meta.dirname, 'bin/x.js')``, ``new URL('../bin/x.js', import.meta.url)``
_OWN_DIR_PATH = re.compile(
    rb"(?:__dirname|import\.meta\.dirname)\s*,\s*(['\"`])([^'\"`\n]+)\1"
    rb"|new\s+URL\(\s*(['\"`])([^'\"`\n]+)\3\s*,\s*import\.meta\.url"
)
_JS_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})
#: the extensions tried after a named path that has none (``'../src/cli'``)
_JS_EXTENSIONS = (".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs")
_GO_MAIN = re.compile(rb"^\s*package\s+main\b", re.M)
#: the directories a test tree starts at
_TEST_DIRS = frozenset({"tests", "test", "__tests__", "spec", "testing", "testsuite"})
#: the most files one import level may add to the walk (a core module imported everywhere)
_MAX_LEVEL_FILES = 5000


@dataclass(frozen=True)
class FileEvidence:
    """One test file and why it is to run: ``kind`` (``EVIDENCE_ORDER``) and a few words."""

    path: str
    kind: str
    words: str
    depth: int = 0  # import levels for ``imports``/``imports-via``


def test_files_by_evidence(
    store: Store,
    adjacency: Adjacency,
    changed_paths: Sequence[str],
    files: RepoFiles,
    *,
    cochange: Sequence[tuple[str, int, int]] = (),
    cochange_with: Mapping[str, str] | None = None,
    max_depth: int = 12,
    added: Mapping[str, Sequence[tuple[int, int]] | None] | None = None,
) -> list[FileEvidence]:
    """Test files tied to the change, each by its strongest evidence, best first (module
    docstring); ``added``: the lines the change wrote per path (None: all of them), which tell
    the dependencies a ``package.json`` bumps."""
    sources = [p for p in changed_paths if language_for_path(p) is not None and not is_test_path(p)]
    manifests = manifests_changed(changed_paths, added or {})
    if not sources and not manifests:
        return []
    importers = _import_closure(store, adjacency, sources, max_depth)
    found: dict[str, FileEvidence] = {}

    def offer(evidence: FileEvidence) -> None:
        current = found.get(evidence.path)
        if current is None or _rank(evidence) < _rank(current):
            found[evidence.path] = evidence

    for path, (depth, through) in importers.items():
        if not _is_test_file(path):
            continue
        if depth == 1:
            offer(FileEvidence(path, "imports", f"imports `{through}`", depth))
        else:
            offer(FileEvidence(path, "imports-via", f"imports `{through}`, which uses the change", depth))
    for evidence in _go_packages(sources, files):
        offer(evidence)
    for evidence in _rust_crates(store, sources, files):
        offer(evidence)
    for evidence in _programs(sources, files, [p for p in importers if _is_test_file(p)]):
        offer(evidence)
    for evidence in _js_programs_by_path(store, sources, files, importers):
        offer(evidence)
    for evidence in _runner_setups(store, sources, files, importers, added or {}, max_depth):
        offer(evidence)
    for evidence in _dependency_importers(store, manifests, files, added or {}):
        offer(evidence)
    partners = cochange_with or {}
    for path, together, out_of in cochange:
        if _is_test_file(path) and files.exists(path):
            source = partners.get(path, "the changed files")
            words = f"changed with `{source}` in {together} of {out_of} commits"
            offer(FileEvidence(path, "history", words))
    stems = {_stem(p): p for p in sources}
    for path, evidence in list(found.items()):
        subject = next((s for s in _subjects(path) if s in stems), None)
        if subject is not None and evidence.kind in ("imports", "imports-via", "package", "setup"):
            offer(FileEvidence(path, "named", f"named after `{stems[subject]}`"))
    return sorted(found.values(), key=lambda e: (*_rank(e), e.path))


def _subjects(path: str) -> list[str]:
    """The source stems a test file may be named after: its own (``test_x.py``, ``x_test.go``,
    ``x.test.js``; a Rust integration test ``tests/x.rs``), and its directories inside the test
    tree (koa's ``__tests__/response/body.test.js`` tests ``lib/response.js``)."""
    parts = path.split("/")
    found = [s for s in (test_subject_stem(path),) if s]
    if path.endswith(".rs") and "tests" in parts[:-1]:
        found.append(_stem(path))
    for index, part in enumerate(parts[:-1]):
        if part in _TEST_DIRS:
            found += parts[index + 1 : -1]
            break
    return found


def _rank(evidence: FileEvidence) -> tuple[int, int]:
    return EVIDENCE_ORDER.index(evidence.kind), evidence.depth


def _stem(path: str) -> str:
    return posixpath.basename(path).split(".", 1)[0]


def _is_test_file(path: str) -> bool:
    """A test file that holds tests to run: a ``conftest.py`` only serves them, and a Python
    module under a test folder is collected only when its name says it holds tests (pytest's
    ``test_*.py`` and ``*_test.py``, unittest's ``test*.py``), not a helper such as
    ``tests/support.py``."""
    name = posixpath.basename(path)
    if name == "conftest.py":
        return False
    language = language_for_path(path)
    if language == "python" and not (name.startswith("test") or name.endswith("_test.py")):
        return False
    return language is not None and is_test_path(path)


def holds_tests(path: str, source: bytes) -> bool:
    """A file that holds tests to run, as this tool decides: a test file (``_is_test_file``) in
    which at least one test case is found (``parse.testcases``); a fixture, a helper or a
    generated client under a test folder holds none. In a language whose cases are not found,
    every test file counts."""
    language = language_for_path(path)
    if language is None or not _is_test_file(path):
        return False
    if language not in TEST_CASE_LANGUAGES:
        return True
    cases, _ = find_test_cases(path, language, source)
    return bool(cases)


def _import_closure(
    store: Store, adjacency: Adjacency, sources: Sequence[str], max_depth: int
) -> dict[str, tuple[int, str]]:
    """Files that import a changed file, directly (depth 1) or through other files: path → (depth,
    the file it imports on the way: a changed file at depth 1)."""
    found: dict[str, tuple[int, str]] = {}
    frontier = list(sources)
    seen = set(sources)
    for depth in range(1, max_depth + 1):
        if not frontier or len(frontier) > _MAX_LEVEL_FILES:
            break
        positions = {
            p for node, _ in store.node_paths(frontier) if (p := adjacency.index_of(node)) is not None
        }
        edges = incoming_edges(adjacency, positions, (EdgeKind.IMPORTS,))
        ids = {adjacency.node_ids[s] for s, _, _ in edges} | {adjacency.node_ids[t] for _, t, _ in edges}
        path_of = store.paths_of_nodes(ids)
        level: list[str] = []
        for source, target, _ in sorted(edges):
            importer = path_of.get(adjacency.node_ids[source])
            imported = path_of.get(adjacency.node_ids[target])
            if importer is None or imported is None or importer in seen:
                continue
            seen.add(importer)
            found[importer] = (depth, imported)
            level.append(importer)
        frontier = sorted(level)
    return found


def _go_packages(sources: Sequence[str], files: RepoFiles) -> list[FileEvidence]:
    """The ``_test.go`` files beside each changed Go file: its package's tests (``program`` when
    the package is ``main``: they drive the program)."""
    out: list[FileEvidence] = []
    for directory in sorted({posixpath.dirname(p) for p in sources if p.endswith(".go")}):
        tests = [n for n in files.names(directory) if n.endswith("_test.go")]
        if not tests:
            continue
        sample = next((p for p in sources if posixpath.dirname(p) == directory), "")
        is_main = bool(_GO_MAIN.search(files.read(sample) or b""))
        for name in tests:
            path = f"{directory}/{name}" if directory else name
            if is_main:
                out.append(FileEvidence(path, "program", "tests package main, the program"))
            else:
                out.append(FileEvidence(path, "package", f"tests package `{directory or '.'}`"))
    return out


def _programs(
    sources: Sequence[str], files: RepoFiles, importing_tests: Collection[str]
) -> list[FileEvidence]:
    """Tests that drive the program a changed file belongs to (module docstring)."""
    out: list[FileEvidence] = []
    for crate in sorted(
        {c for p in sources if p.endswith(".rs") and (c := _binary_crate(p, files)) is not None}
    ):
        tests_dir = f"{crate}/tests" if crate else "tests"
        for name in files.names(tests_dir):
            path = f"{tests_dir}/{name}"
            if name.endswith(".rs") and _RUNS_BINARY.search(files.read(path) or b""):
                out.append(FileEvidence(path, "program", "runs the crate's binary"))
    if any(p.endswith(".py") for p in sources):
        for path in sorted(importing_tests):
            if path.endswith(".py") and _RUNS_CLI.search(files.read(path) or b""):
                out.append(FileEvidence(path, "program", "runs the command line"))
    return out


def _js_programs_by_path(
    store: Store, sources: Sequence[str], files: RepoFiles, importers: Collection[str]
) -> list[FileEvidence]:
    """The JavaScript/TypeScript tests of a changed file's package that start a process and name,
    from their own directory, a file that is changed or imports the change (module docstring)."""
    js_sources = [p for p in sources if language_for_path(p) in _JS_LANGUAGES]
    if not js_sources:
        return []
    programs = set(js_sources) | {
        p for p in importers if language_for_path(p) in _JS_LANGUAGES and not is_test_path(p)
    }
    packages = {
        posixpath.dirname(manifest)
        for p in js_sources
        if (manifest := files.nearest(p, lambda c: posixpath.basename(c) == "package.json"))
    }
    out: list[FileEvidence] = []
    for path in sorted(store.indexed_paths()):
        if language_for_path(path) not in _JS_LANGUAGES or not _is_test_file(path):
            continue
        if not any(not root or path.startswith(f"{root}/") for root in packages):
            continue
        source = files.read(path) or b""
        if not _SPAWNS_JS.search(source):
            continue
        program = next((p for p in _named_from_own_dir(path, source) if p in programs), None)
        if program is not None:
            out.append(FileEvidence(path, "program", f"runs `{program}` by its path"))
    return out


def _runner_setups(
    store: Store,
    sources: Sequence[str],
    files: RepoFiles,
    importers: Mapping[str, tuple[int, str]],
    added: Mapping[str, Sequence[tuple[int, int]] | None],
    max_depth: int,
) -> list[FileEvidence]:
    """The JavaScript/TypeScript test files a runner config includes whose setup file reaches
    the change, or whose config the change edits or reaches (a config extending a changed one:
    ``mergeConfig(base, …)``) (module docstring); a config governs the test
    files under its directory but those under a deeper directory holding a config of its own.
    A test file a changed config names on a line the change wrote is ``named``. Only a
    JavaScript/TypeScript file can be a config, a setup file or a package's file, so a change
    that neither holds nor reaches one (a Python change) reads no config."""
    if not _holds_js([*sources, *importers]):
        return []
    indexed = sorted(store.indexed_paths())
    config_paths = [p for p in indexed if is_runner_config(p)]
    tests = [p for p in indexed if language_for_path(p) in _JS_LANGUAGES and _is_test_file(p)]
    packages = _package_names(sources, files)
    reached: list[tuple[RunnerConfig, int, str]] = []  # config, depth, words
    out: list[FileEvidence] = []
    for path in config_paths:
        changed = path in sources
        config = runner_config(files, path, without_setup=changed or path in importers)
        if config is None:
            continue
        if changed:
            reached.append((config, 1, f"its runner's config `{path}` changes"))
            source = files.read(path) or b""
            written = set(paths_written(source, added.get(path, None), posixpath.dirname(path)))
            words = f"named on a changed line of `{path}`"
            out += [FileEvidence(t, "named", words) for t in tests if t in written]
            continue
        if path in importers:  # it extends a changed config, or imports the change
            depth, through = importers[path]
            words = f"imports `{through}`" + (", which uses the change" if depth > 1 else "")
            reached.append((config, depth + 1, f"its runner's config `{path}` {words}"))
            continue
        hit = next(
            (
                h
                for setup in config.setups
                if (h := _reached_setup(setup, sources, importers, files, packages))
            ),
            None,
        )
        if hit is not None:
            setup, depth, words = hit
            reached.append(
                (config, depth if depth else max_depth + 1, f"its runner's setup `{setup}` {words}")
            )
    config_dirs = {posixpath.dirname(p) for p in config_paths}
    for config, depth, words in reached:
        directory = posixpath.dirname(config.path)
        deeper = [d for d in config_dirs if d != directory and _under(d, directory)]
        for path in tests:
            if not _under(path, directory) or any(_under(path, d) for d in deeper):
                continue
            if config.includes(path):
                out.append(FileEvidence(path, "setup", words, depth))
    return out


def _holds_js(paths: Sequence[str]) -> bool:
    return any(language_for_path(p) in _JS_LANGUAGES for p in paths)


def _package_names(sources: Sequence[str], files: RepoFiles) -> dict[str, str]:
    """The names of the JavaScript/TypeScript packages the changed files belong to → one of those files."""
    names: dict[str, str] = {}
    for path in sources:
        if language_for_path(path) not in _JS_LANGUAGES:
            continue
        manifest = files.nearest(path, lambda c: posixpath.basename(c) == "package.json")
        name = manifest_name(files.read(manifest) or b"") if manifest else None
        if name:
            names.setdefault(name, path)
    return names


def _reached_setup(
    setup: str,
    sources: Sequence[str],
    importers: Mapping[str, tuple[int, str]],
    files: RepoFiles,
    packages: Mapping[str, str],
) -> tuple[str, int, str] | None:
    """A setup file (its extension maybe left out) that is changed, imports the change, or
    imports by name the package a changed file belongs to (depth 0: the caller ranks it after
    the others): its path, its import depth and a few words; else None."""
    candidates = [setup] if posixpath.splitext(setup)[1] else [setup + ext for ext in _JS_EXTENSIONS]
    # the runner loads a setup as a module: a file of another language (``setup.py``) binds nothing
    candidates = [p for p in candidates if language_for_path(p) in _JS_LANGUAGES]
    for path in candidates:
        if path in sources:
            return path, 1, "is changed"
        if path in importers:
            depth, through = importers[path]
            return path, depth + 1, f"imports `{through}`" + (", which uses the change" if depth > 1 else "")
    for path in candidates:
        name = imports_any(files.read(path) or b"", sorted(packages))
        if name is not None:
            return path, 0, f"imports `{name}`, the package of `{packages[name]}`"
    return None


def _dependency_importers(
    store: Store,
    manifests: Sequence[str],
    files: RepoFiles,
    added: Mapping[str, Sequence[tuple[int, int]] | None],
) -> list[FileEvidence]:
    """The JavaScript/TypeScript test files that import a dependency whose version the change
    bumps in the manifest their import resolves it from (module docstring)."""
    bumped = {m: names for m in manifests if (names := bumped_dependencies(m, files, added.get(m)))}
    if not bumped:
        return []
    roots = [posixpath.dirname(m) for m in bumped]
    declared: dict[str, frozenset[str]] = {}
    out: list[FileEvidence] = []
    for path in sorted(store.indexed_paths()):
        if language_for_path(path) not in _JS_LANGUAGES or not _is_test_file(path):
            continue
        if not any(_under(path, root) for root in roots):
            continue
        governing = governing_bumps(path, bumped, files, declared)
        name = imports_any(files.read(path) or b"", sorted(governing)) if governing else None
        if name is not None:
            words = f"imports `{name}`, whose version `{governing[name]}` changes"
            out.append(FileEvidence(path, "dependency", words))
    return out


def _under(path: str, directory: str) -> bool:
    return not directory or path.startswith(f"{directory}/")


def _named_from_own_dir(path: str, source: bytes) -> list[str]:
    """The repository paths a JavaScript/TypeScript file names from its own directory, each
    with the extensions tried when it has none."""
    directory = posixpath.dirname(path)
    found: list[str] = []
    for match in _OWN_DIR_PATH.finditer(source):
        named = (match.group(2) or match.group(4) or b"").decode("utf-8", "replace")
        resolved = posixpath.normpath(posixpath.join(directory, named))
        if resolved.startswith("../") or resolved == "..":
            continue
        found.append(resolved)
        if not posixpath.splitext(resolved)[1]:
            found += [resolved + ext for ext in _JS_EXTENSIONS]
    return found


def _rust_crates(store: Store, sources: Sequence[str], files: RepoFiles) -> list[FileEvidence]:
    """The integration tests (``tests/**.rs``) of a changed Rust file's crate and of the crates of
    the repository that depend on it: they reach it through the crate's public names, which the
    graph's ``use`` edges often miss (re-exports across crates)."""
    crates: dict[str, str] = {}  # crate directory → package name
    for path in sources:
        if path.endswith(".rs"):
            manifest = files.nearest(path, lambda p: is_crate_manifest(files, p))
            name = crate_name(files, manifest) if manifest else None
            if manifest and name:
                crates[posixpath.dirname(manifest)] = name
    if not crates:
        return []
    roots: dict[str, list[str]] = {}
    for path in store.indexed_paths():
        if path.endswith(".rs") and (path.startswith("tests/") or "/tests/" in path):
            root = path[: path.find("tests/")].rstrip("/")
            roots.setdefault(root, []).append(path)
    out: list[FileEvidence] = []
    for root, tests in sorted(roots.items()):
        manifest_text = (files.read(f"{root}/Cargo.toml" if root else "Cargo.toml") or b"").decode(
            "utf-8", "replace"
        )
        for directory, name in sorted(crates.items()):
            if root == directory:
                words = f"tests crate `{name}`"
            elif re.search(
                rf'^\s*{re.escape(name)}\s*[=.]|package\s*=\s*"{re.escape(name)}"', manifest_text, re.M
            ):
                words = f"tests a crate that uses `{name}`"
            else:
                continue
            out += [FileEvidence(path, "imports", words, 2) for path in sorted(tests)]
            break
    return out


def _binary_crate(path: str, files: RepoFiles) -> str | None:
    """The directory of the Rust package holding ``path`` when it builds a binary (``src/main.rs``,
    ``src/bin/``, or a ``[[bin]]`` section), else None."""
    manifest = files.nearest(path, lambda p: posixpath.basename(p) == "Cargo.toml")
    if manifest is None:
        return None
    crate = posixpath.dirname(manifest)
    src = f"{crate}/src" if crate else "src"
    has_main = "main.rs" in files.names(src) or bool(files.names(f"{src}/bin"))
    if has_main or b"[[bin]]" in (files.read(manifest) or b""):
        return crate
    return None
