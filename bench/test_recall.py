"""A repository's own history → how well ``pr``'s tests to run find the tests a real change touched,
beside two baselines, per repository and pooled.

Usage::

    python bench/test_recall.py --clone jinja=PATH [--clone NAME=PATH ...] --work DIR
        [--commits 30] [--scan 600] [--limits NAME=COMMITS,SCAN ...] [--depths 8,12,16,0]
        [--by-path] [--whole-change] [--json OUT]

(``--limits`` sets ``--commits``/``--scan`` for one repository of the run.)

For each repository, the newest ``--commits`` non-merge commits (among the last ``--scan``) that
change source files and test files together, where at least one of those test files already
existed at the parent. Each is replayed as a synthetic commit on its parent holding the source
part alone (the test files as they were), and ``pr`` packs it in this process (one store per
repository under ``--work``; the clone only gains loose git objects, no ref moves).

``--whole-change``: the synthetic commit also holds the commit's changed files that are no code
(``package.json``, lock files, docs, snapshots): the pull request as a reviewer sees it, minus its
test code (a dependency bump is then part of the change, as it is in the real pull request).

Ground truth: the test files the commit modified that existed at the parent and hold tests there
— as the tool itself decides (``rank.testfiles.holds_tests``: a test file in which a test case is
found), so a fixture, a helper or a generated client under a test folder is not one (a new file
cannot be found either) — and the test cases it edited that already existed (a case holding an
added line at the commit, found by its name in the parent's file). ``--by-path`` reports, in the
same run, the old definition too: any code file under a test folder but ``conftest.py``. Commits
are picked by the old definition (the same commits as before it changed); a definition scores
only the commits with at least one true file under it (``commits`` in the table).

Measures (pooled over commits: hits summed, then divided):

- ``file@5`` / ``file@all``: test-file recall of the first 5 test files / all of them (files in
  the order of their first test in the ranked list);
- ``case``: test-case recall of the whole list;
- ``p@5``: precision of the first 5 test files (true files among the files listed there);
- ``listed``: test files listed per commit (mean).

``--json`` also writes ``per_commit``: each commit's truth, the true files each method missed
(``import_missed`` for the closure), the top 5 listed and the rank and evidence of each true
file found.

Baselines, on the same synthetic head's index: ``import`` — every test file that imports a changed
file, transitively through other files (the store's ``imports`` edges), without a depth bound,
ordered by path; ``stem`` — every test file named after a changed file (``test_x.py``,
``x_test.go``, ``x.test.ts``, ``XTest.java`` …), ordered by path. A baseline lists the files that
are test files under the definition scored (under the default one, files that hold tests).

``--depths`` packs each commit once per ``pack.test_import_depth`` (``0``: no bound), as methods
``pr d=N``, with the mean seconds of a pack (the head indexed before) in ``s/pack``; without it,
``pr`` uses the repository's settings.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowing_pr.config.params import Settings
from knowing_pr.graph.paths import is_test_path, test_subject_stem
from knowing_pr.index import index_commit
from knowing_pr.model import ChangeSummary, EdgeKind
from knowing_pr.parse import language_for_path
from knowing_pr.parse.testcases import find_test_cases
from knowing_pr.pipeline import pr as pr_pipeline
from knowing_pr.pipeline.workspace import Workspace, open_workspace
from knowing_pr.rank.testfiles import holds_tests
from knowing_pr.store import Store

BASELINES = ("import", "stem")
#: the ground truth's definitions of a test file: one that holds tests (the default), any code
#: file under a test folder (``--by-path``)
DEFINITIONS = ("holds tests", "by path")
#: ``--depths 0``: the import walk without a bound
UNBOUNDED = 1_000_000


def git(repo: Path, *args: str, env: dict[str, str] | None = None, data: bytes | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, check=True, env=env, input=data
    )
    return done.stdout.decode("utf-8", "replace")


def git_bytes(repo: Path, *args: str) -> bytes | None:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True)
    return done.stdout if done.returncode == 0 else None


@dataclass
class Sample:
    """One commit: its parent, source and test paths, and the truth."""

    commit: str
    parent: str
    sources: list[str]
    tests: list[str]
    others: list[str] = field(default_factory=list)  # changed files neither code nor test code
    truth_files: set[str] = field(default_factory=set)
    by_path: set[str] = field(default_factory=set)  # the old definition's truth files
    truth_cases: set[tuple[str, int]] = field(default_factory=set)  # (path, line at the parent)


def _code(path: str) -> bool:
    return language_for_path(path) is not None


def _serves(path: str) -> bool:
    """A file that serves tests without holding any to run (``conftest.py``)."""
    return Path(path).name == "conftest.py"


def pick_samples(repo: Path, commits: int, scan: int) -> list[Sample]:
    log = git(repo, "log", "--no-merges", "--format=%H %P", f"-n{scan}", "HEAD").split("\n")
    samples: list[Sample] = []
    for line in log:
        parts = line.split()
        if len(parts) != 2:
            continue
        commit, parent = parts
        status = git(repo, "diff-tree", "-r", "--no-renames", "--name-status", parent, commit)
        changed = [row.split("\t") for row in status.splitlines() if "\t" in row]
        sources = [p for s, p in changed if _code(p) and not is_test_path(p)]
        tests = [p for s, p in changed if _code(p) and is_test_path(p)]
        modified = [p for s, p in changed if s == "M" and _code(p) and is_test_path(p) and not _serves(p)]
        if not sources or not modified or len(sources) > 12:
            continue
        holding = {p for p in modified if holds_tests(p, git_bytes(repo, "show", f"{parent}:{p}") or b"")}
        others = [p for s, p in changed if not _code(p)]
        sample = Sample(commit, parent, sources, tests, others, truth_files=holding, by_path=set(modified))
        sample.truth_cases = edited_cases(repo, sample)
        samples.append(sample)
        if len(samples) >= commits:
            break
    return samples


def _added_lines(repo: Path, parent: str, commit: str, path: str) -> set[int]:
    diff = git(repo, "diff", "-U0", parent, commit, "--", path)
    lines: set[int] = set()
    for row in diff.splitlines():
        if row.startswith("@@"):
            new = row.split("+", 1)[1].split(" ", 1)[0]
            start, _, count = new.partition(",")
            n = int(count) if count else 1
            lines.update(range(int(start), int(start) + max(n, 1)))
    return lines


def edited_cases(repo: Path, sample: Sample) -> set[tuple[str, int]]:
    """(path, line at the parent) of the cases the commit edited that existed at the parent."""
    out: set[tuple[str, int]] = set()
    for path in sorted(sample.truth_files):
        language = language_for_path(path)
        after = git_bytes(repo, "show", f"{sample.commit}:{path}")
        before = git_bytes(repo, "show", f"{sample.parent}:{path}")
        if language is None or after is None or before is None:
            continue
        added = _added_lines(repo, sample.parent, sample.commit, path)
        cases_after, _ = find_test_cases(path, language, after)
        cases_before, _ = find_test_cases(path, language, before)
        at_parent = {c.parts: c.start_line for c in cases_before}
        for case in cases_after:
            if case.parts in at_parent and any(case.start_line <= n <= case.end_line for n in added):
                out.add((path, at_parent[case.parts]))
    return out


def source_only_commit(repo: Path, sample: Sample, whole_change: bool = False) -> str:
    """A commit on the parent whose tree has the sample's source files as the commit has them
    (``whole_change``: every changed file but the test code: manifests, lock files, docs too)."""
    paths = [*sample.sources, *(sample.others if whole_change else [])]
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(scratch) / "index")}
        git(repo, "read-tree", sample.parent, env=env)
        present = git(repo, "ls-tree", "-r", sample.commit, "--", *paths)
        entries = {row.split("\t", 1)[1]: row.split("\t", 1)[0].split() for row in present.splitlines()}
        for path in paths:
            if path in entries:
                mode, _, blob = entries[path]
                git(repo, "update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}", env=env)
            else:
                git(repo, "update-index", "--force-remove", "--", path, env=env)
        tree = git(repo, "write-tree", env=env).strip()
    commit_env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
        "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
    }
    return git(repo, "commit-tree", tree, "-p", sample.parent, "-m", "source part", env=commit_env).strip()


class SummaryTap:
    """Keeps the last whole summary ``pr`` computed (before the budget cuts its lists)."""

    def __init__(self) -> None:
        self.last: ChangeSummary | None = None
        self._real = pr_pipeline.reviewer_summary

        def tapped(*args: Any, **kwargs: Any) -> ChangeSummary:
            self.last = self._real(*args, **kwargs)
            return self.last

        pr_pipeline.reviewer_summary = tapped  # type: ignore[assignment]


def ranked_files(paths: Sequence[str]) -> list[str]:
    seen: dict[str, None] = {}
    for path in paths:
        seen.setdefault(path, None)
    return list(seen)


def import_closure(store: Store, sources: Sequence[str]) -> list[str]:
    """Test files that import a changed file, transitively through other files, by path."""
    path_of = dict(store.node_paths())
    importers: dict[str, set[str]] = {}
    for edge in store.all_edges():
        if edge.kind != EdgeKind.IMPORTS:
            continue
        source, target = path_of.get(edge.source), path_of.get(edge.target)
        if source and target and source != target:
            importers.setdefault(target, set()).add(source)
    seen = set(sources)
    frontier = list(sources)
    while frontier:
        path = frontier.pop()
        for importer in importers.get(path, ()):
            if importer not in seen:
                seen.add(importer)
                frontier.append(importer)
    return sorted(p for p in seen if is_test_path(p) and p not in sources)


def same_stem(repo: Path, head: str, sources: Sequence[str]) -> list[str]:
    stems = {Path(p).name.split(".", 1)[0] for p in sources}
    listed = git(repo, "ls-tree", "-r", "--name-only", head).splitlines()
    return sorted(p for p in listed if _code(p) and is_test_path(p) and test_subject_stem(p) in stems)


@dataclass
class Tally:
    truth_files: int = 0
    truth_cases: int = 0
    at5: int = 0
    at_all: int = 0
    cases: int = 0
    top5_listed: int = 0
    listed: int = 0
    commits: int = 0
    seconds: float = 0.0
    packs: int = 0

    def add(
        self,
        truth: set[str],
        truth_cases: set[tuple[str, int]],
        files: Sequence[str],
        cases: set[tuple[str, int]],
    ) -> None:
        if not truth:
            return
        self.commits += 1
        self.truth_files += len(truth)
        self.truth_cases += len(truth_cases)
        self.at5 += len(truth & set(files[:5]))
        self.at_all += len(truth & set(files))
        self.cases += len(truth_cases & cases)
        self.top5_listed += len(files[:5])
        self.listed += len(files)

    def merge(self, other: Tally) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def row(self) -> dict[str, float | int]:
        def ratio(a: int, b: int) -> float:
            return round(a / b, 3) if b else 0.0

        return {
            "commits": self.commits,
            "truth_files": self.truth_files,
            "file@5": ratio(self.at5, self.truth_files),
            "file@all": ratio(self.at_all, self.truth_files),
            "case": ratio(self.cases, self.truth_cases),
            "p@5": ratio(self.at5, self.top5_listed),
            "listed": round(self.listed / self.commits, 1) if self.commits else 0.0,
        }


#: a repository's tallies: definition → method → tally
Tallies = dict[str, dict[str, Tally]]


def pr_methods(depths: Sequence[int]) -> list[str]:
    return [f"pr d={d}" for d in depths] if depths else ["pr"]


def with_depth(ws: Workspace, depth: int | None) -> Workspace:
    """The workspace with ``pack.test_import_depth`` set (``None``: as the settings have it)."""
    if depth is None:
        return ws
    bound = depth or UNBOUNDED
    pack = dataclasses.replace(ws.settings.pack, test_import_depth=bound)
    settings: Settings = dataclasses.replace(ws.settings, pack=pack)
    return dataclasses.replace(ws, settings=settings)


class HoldsTests:
    """``holds_tests`` of a file at a revision, kept by blob (the same file at many heads)."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._by_blob: dict[tuple[str, str], bool] = {}

    def filter(self, head: str, paths: Sequence[str]) -> list[str]:
        if not paths:
            return []
        listed = git(self.repo, "ls-tree", "-r", head, "--", *paths)
        blobs = {row.split("\t", 1)[1]: row.split()[2] for row in listed.splitlines() if "\t" in row}
        kept: list[str] = []
        for path in paths:
            blob = blobs.get(path)
            if blob is None:
                continue
            key = (path, blob)
            if key not in self._by_blob:
                self._by_blob[key] = holds_tests(path, git_bytes(self.repo, "cat-file", "blob", blob) or b"")
            if self._by_blob[key]:
                kept.append(path)
        return kept


def measure_repo(
    name: str,
    clone: Path,
    work: Path,
    args: argparse.Namespace,
    tap: SummaryTap,
    records: list[dict[str, Any]],
) -> Tallies:
    commits, scan = args.limits.get(name, (args.commits, args.scan))
    samples = pick_samples(clone, commits, scan)
    definitions = DEFINITIONS if args.by_path else DEFINITIONS[:1]
    methods = [*pr_methods(args.depths), *BASELINES]
    tallies = {d: {m: Tally() for m in methods} for d in definitions}
    ws = open_workspace(clone, db=str(work / f"{name}.sqlite"))
    judge = HoldsTests(clone)
    for sample in samples:
        head = source_only_commit(clone, sample, args.whole_change)
        index_commit(ws.repo, ws.settings, rev=head, db_path=ws.db_path)
        listed: dict[str, tuple[list[str], set[tuple[str, int]]]] = {}
        evidence: dict[str, dict[str, str]] = {}  # method → test file → its first entry's evidence
        for method, depth in zip(pr_methods(args.depths), args.depths or [None], strict=True):
            started = time.monotonic()
            request = pr_pipeline.PrRequest(base=sample.parent, head=head, fmt="json")
            pr_pipeline.build_pr_pack(with_depth(ws, depth), request)
            for definition in definitions:
                tallies[definition][method].seconds += time.monotonic() - started
                tallies[definition][method].packs += 1
            summary = tap.last
            tests = list(summary.tests) if summary is not None else []
            listed[method] = (ranked_files([t.path for t in tests]), {(t.path, t.line) for t in tests})
            evidence[method] = {}
            for t in tests:
                evidence[method].setdefault(t.path, t.reason)
        store = Store.open(ws.db_path, readonly=True)
        try:
            closure = import_closure(store, sample.sources)
        finally:
            store.close()
        stems = same_stem(clone, head, sample.sources)
        for definition in definitions:
            by_path = definition == "by path"
            truth = sample.by_path if by_path else sample.truth_files
            for method, (files, cases) in listed.items():
                tallies[definition][method].add(truth, sample.truth_cases, files, cases)
            for method, found in (("import", closure), ("stem", stems)):
                files = found if by_path else judge.filter(head, found)
                tallies[definition][method].add(truth, sample.truth_cases, files, set())
        records.append(commit_record(name, sample, listed, evidence, closure))
        print(
            f"{name} {sample.commit[:10]} src={len(sample.sources)} truth={sorted(sample.truth_files)} "
            f"by_path={len(sample.by_path)} import={len(closure)} stem={len(stems)} "
            + " ".join(
                f"{m}={len(sample.truth_files & set(f))}/{len(f)},cases={len(sample.truth_cases & c)}"
                for m, (f, c) in listed.items()
            ),
            file=sys.stderr,
        )
    return tallies


def commit_record(
    name: str,
    sample: Sample,
    listed: dict[str, tuple[list[str], set[tuple[str, int]]]],
    evidence: dict[str, dict[str, str]],
    closure: Sequence[str],
) -> dict[str, Any]:
    """One commit for the JSON: its truth, and per method the true files missed and the top 5."""
    truth = sample.truth_files
    return {
        "repository": name,
        "commit": sample.commit,
        "sources": sample.sources,
        "truth": sorted(truth),
        "import_missed": sorted(truth - set(closure)),
        "methods": {
            method: {
                "missed": sorted(truth - set(files)),
                "top5": files[:5],
                "rank_of_truth": {
                    p: [files.index(p) + 1, evidence[method].get(p, "")] for p in sorted(truth & set(files))
                },
                "listed": len(files),
            }
            for method, (files, _) in listed.items()
        },
    }


def table(results: dict[str, Tallies]) -> str:
    rows = [
        "| repository | truth | method | commits | truth files | file@5 | file@all | case | p@5 | listed | s/pack |"
    ]
    rows.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for repo, by_definition in results.items():
        for definition, tallies in by_definition.items():
            for method, tally in tallies.items():
                r = tally.row()
                is_pr = method.startswith("pr")
                case = f"{r['case']:.3f}" if is_pr else "–"
                pace = f"{tally.seconds / tally.packs:.2f}" if is_pr and tally.packs else "–"
                rows.append(
                    f"| {repo} | {definition} | {method} | {r['commits']} | {r['truth_files']} | "
                    f"{r['file@5']:.3f} | {r['file@all']:.3f} | {case} | {r['p@5']:.3f} | {r['listed']} | {pace} |"
                )
    return "\n".join(rows)


def depth_list(text: str) -> list[int]:
    try:
        depths = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--depths {text}: not a list of whole numbers") from None
    if not depths or any(d < 0 for d in depths):
        raise argparse.ArgumentTypeError(f"--depths {text}: give depths >= 1, or 0 for no bound")
    return depths


def limit_pair(text: str) -> tuple[str, tuple[int, int]]:
    name, _, pair = text.partition("=")
    commits, _, scan = pair.partition(",")
    if not name or not commits.isdigit() or not scan.isdigit():
        raise argparse.ArgumentTypeError(f"--limits {text}: expected NAME=COMMITS,SCAN")
    return name, (int(commits), int(scan))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clone", action="append", required=True, metavar="NAME=PATH")
    parser.add_argument("--work", required=True, type=Path, help="directory for the stores")
    parser.add_argument("--commits", type=int, default=30)
    parser.add_argument("--scan", type=int, default=600)
    parser.add_argument("--limits", type=limit_pair, action="append", default=[], metavar="NAME=COMMITS,SCAN")
    parser.add_argument(
        "--depths", type=depth_list, default=[], help="pack.test_import_depth values, 0: no bound"
    )
    parser.add_argument("--by-path", action="store_true", help="also score the old definition of a test file")
    parser.add_argument(
        "--whole-change",
        action="store_true",
        help="the source part keeps the commit's other non-code files (package.json, lock files, docs)",
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    args.limits = dict(args.limits)
    args.work.mkdir(parents=True, exist_ok=True)
    tap = SummaryTap()
    results: dict[str, Tallies] = {}
    records: list[dict[str, Any]] = []
    for item in args.clone:
        name, _, path = item.partition("=")
        results[name] = measure_repo(name, Path(path), args.work, args, tap, records)
        print(table({name: results[name]}), file=sys.stderr, flush=True)
    pooled: Tallies = {}
    for by_definition in results.values():
        for definition, tallies in by_definition.items():
            for method, tally in tallies.items():
                pooled.setdefault(definition, {}).setdefault(method, Tally()).merge(tally)
    results["pooled"] = pooled
    print(table(results))
    if args.json is not None:
        data: dict[str, Any] = {
            repo: {
                d: {m: {**t.row(), "counts": dataclasses.asdict(t)} for m, t in ts.items()}
                for d, ts in bd.items()
            }
            for repo, bd in results.items()
        }
        data["per_commit"] = records
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
