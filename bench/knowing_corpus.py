"""knowing's public cross-system corpus (tasks + hand-labelled symbols) + clones at the pinned
commits → P@10, R@10, NDCG@10 and MRR of ``knowing-pr task`` and of a BM25-only baseline,
scored by a port of knowing's own matching rules, with where each expected symbol ended up.

Usage::

    python bench/knowing_corpus.py --knowing PATH --clone cargo=PATH [--clone NAME=PATH ...]
        [--repos cargo,jekyll] [--method both|task|bm25] [--budget 5000] [--limit N]
        [--stores DIR] [--json OUT] [--check-with-go] [--config NAME=PATH ...]

Nothing is fetched. ``--knowing`` is a checkout of github.com/blackwell-systems/knowing; its
``bench/cross-system/`` holds ``corpus/MANIFEST.yaml`` (repositories and pinned commits),
``corpus/tasks/**.yaml`` (task text and ground truth), ``normalize/normalize.go``,
``metrics/metrics.go`` and ``harness_test.go``. Each ``--clone NAME=PATH`` is a git clone of the
corpus repository NAME; the script detaches its HEAD at the pinned commit (and refuses when the
commit is not in the clone's history or the checkout fails). Tasks are grouped by their
``repo:`` field, as knowing's harness does (so ``cross-cutting/`` tasks count for their repository).

Per repository a store (``--stores DIR/NAME.sqlite``, kept between runs) is brought to the
pinned commit with ``python -m knowing_pr index``; then, per task:

- ``task``: ``python -m knowing_pr task TEXT --repo CLONE --db STORE --budget 5000 --format json``
  (plus ``--config PATH`` when ``--config NAME=PATH`` names one for the repository, e.g. the
  settings chosen for it by leave-one-repository-out: ``knowing_sweep.py --write-configs``), its
  ranked ``symbols`` (knowing's harness gives knowing a 5,000-token budget);
- ``bm25``: the store's FTS5 table only: the task's query as the ``bm25`` channel of ``task``
  builds it (``knowing_pr.task.keywords.extract_keywords`` of ``analysis.prose_of``, then
  ``channels.build_fts_query`` with the default ``TaskParams``), ``Store.search_fts`` in BM25 order,
  module nodes left out as ``task`` leaves them out, the first ``--bm25-depth`` symbols.

Scoring (``knowing_rules.py``, a port of knowing's Go rules; ``knowing_names.py`` gives each
symbol the qualified name knowing's indexer would): ground truth is first reduced to the
"achievable" symbols as knowing's harness does (``filterAchievableGroundTruth``); then P@10 as
knowing computes it (a retrieved symbol matching any expected one counts, so one expected symbol
can be credited several times), P@10 with each expected symbol credited at most once, R@10,
NDCG@10 (can exceed 1 under knowing's rule) and MRR, as means over tasks.

Diagnostic, for every expected symbol of every task (first that applies): ``top10`` (matched in
the first 10), ``pack11+`` (matched further down the returned list), ``not_indexed`` (no symbol
of the store matches it under knowing's rule), ``sibling`` (another symbol of a file defining it
was returned), ``not_reached`` (nothing from its files was returned).

``--check-with-go`` compiles knowing's ``normalize``, ``metrics`` and ``benchtype`` packages from the
``--knowing`` checkout (``knowing_gocheck.py``; needs ``go``, e.g. Debian's ``golang-go``) and
compares every verdict and metric of the run with the port's; exit status 1 on any difference.

Run one repository at a time on a shared machine; it is sequential by design.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from knowing_gocheck import check_with_go
from knowing_names import KnowingNamer
from knowing_rules import (
    QualifiedNameIndex,
    achievable_ground_truth,
    ndcg_at,
    normalize_symbol,
    normalized_match,
    precision_at,
    precision_once_at,
    recall_at,
    reciprocal_rank,
)

from knowing_pr.model import SymbolKind
from knowing_pr.store import Store
from knowing_pr.task.analysis import prose_of
from knowing_pr.task.channels import TaskParams, build_fts_query, path_terms
from knowing_pr.task.keywords import extract_keywords

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path("bench/cross-system/corpus")
K = 10
CATEGORIES = ("top10", "pack11+", "sibling", "not_reached", "not_indexed")
METRICS = ("p10_knowing", "p10_once", "r10", "ndcg10", "mrr")


@dataclass(frozen=True)
class CorpusRepo:
    name: str
    url: str
    commit: str
    language: str

    @property
    def repo_url(self) -> str:
        """knowing's repository URL form: ``github.com/owner/name``."""
        return re.sub(r"^https?://", "", self.url).removesuffix(".git")


@dataclass(frozen=True)
class Task:
    id: str
    repo: str
    tier: str
    description: str
    ground_truth: tuple[str, ...]
    path: str


@dataclass
class Symbol:
    """One ranked symbol of a run, with knowing's name for it."""

    name: str
    qualified_name: str
    kind: str
    file: str
    start_line: int
    knowing_name: str = ""


# -- corpus --------------------------------------------------------------------------------
def load_manifest(knowing: Path) -> dict[str, CorpusRepo]:
    data = yaml.safe_load((knowing / CORPUS / "MANIFEST.yaml").read_text())
    return {
        r["name"]: CorpusRepo(r["name"], r["url"], str(r["commit"]), r.get("language", ""))
        for r in data["repos"]
    }


def load_tasks(knowing: Path) -> list[Task]:
    """Every ``corpus/tasks/**.yaml`` with an id, in path order (``harness_test.go`` ``loadTasks``)."""
    tasks_dir = knowing / CORPUS / "tasks"
    tasks = []
    for path in sorted(tasks_dir.rglob("*.yaml")):
        data = yaml.safe_load(path.read_text()) or {}
        if data.get("id"):
            tasks.append(
                Task(
                    id=str(data["id"]),
                    repo=str(data.get("repo", "")),
                    tier=str(data.get("tier", "")),
                    description=str(data.get("description", "")),
                    ground_truth=tuple(str(g) for g in data.get("ground_truth") or ()),
                    path=str(path.relative_to(tasks_dir)),
                )
            )
    return tasks


# -- clones and stores ---------------------------------------------------------------------
def git(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(clone), *args], capture_output=True, text=True)


def detach_at_pinned_commit(repo: CorpusRepo, clone: Path) -> None:
    if git(clone, "cat-file", "-e", f"{repo.commit}^{{commit}}").returncode != 0:
        raise SystemExit(
            f"{repo.name}: the pinned commit {repo.commit} is not in the history of {clone}"
            f" (fetch {repo.url} with that commit, then run again)"
        )
    head = git(clone, "rev-parse", "HEAD").stdout.strip()
    if head == repo.commit:
        return
    done = git(clone, "-c", "advice.detachedHead=false", "checkout", "-q", "--detach", repo.commit)
    if done.returncode != 0:
        raise SystemExit(f"{repo.name}: cannot check out {repo.commit} in {clone}: {done.stderr.strip()}")


def knowing_pr(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"}
    return subprocess.run(
        [sys.executable, "-m", "knowing_pr", *args], capture_output=True, text=True, env=env
    )


def index_store(clone: Path, store: Path) -> float:
    """Bring the store to the clone's HEAD (incremental when it exists); wall seconds."""
    started = time.perf_counter()
    done = knowing_pr("index", "--repo", str(clone), "--db", str(store), "--quiet")
    if done.returncode != 0:
        raise SystemExit(f"index of {clone} failed: {done.stderr.strip()}")
    return time.perf_counter() - started


# -- the two rankings ----------------------------------------------------------------------
def run_task(clone: Path, store: Path, text: str, budget: int, config: str | None = None) -> list[Symbol]:
    extra = ("--config", config) if config else ()
    done = knowing_pr(
        "task",
        text,
        "--repo",
        str(clone),
        "--db",
        str(store),
        "--budget",
        str(budget),
        "--format",
        "json",
        *extra,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "task failed")
    return [
        Symbol(s["name"], s["qualified_name"], s["kind"], s["file"], int(s["start_line"]))
        for s in json.loads(done.stdout)["symbols"]
    ]


def bm25_query(text: str) -> str:
    """The FTS5 query of ``task``'s ``bm25`` channel for this text (default ``TaskParams``)."""
    params = TaskParams()
    keywords = extract_keywords(prose_of(text))
    terms = path_terms(keywords, params.path_min_chars)
    return build_fts_query(keywords, terms, params.max_query_terms, target_columns=params.bm25_target_columns)


def run_bm25(store: Store, text: str, depth: int) -> list[Symbol]:
    query = bm25_query(text)
    if not query:
        return []
    ranked = store.search_fts(query, limit=depth * 4)
    nodes = store.nodes_by_ids(nid for nid, _ in ranked)
    ordered = [nodes[nid] for nid, _ in ranked if nid in nodes and nodes[nid].kind != SymbolKind.MODULE]
    return [Symbol(n.name, n.qualified_name, n.kind, n.path, n.start_line) for n in ordered[:depth]]


# -- the store as knowing would name it ----------------------------------------------------
@dataclass
class StoreView:
    """Every symbol of a store under knowing's names: for the achievable filter and the diagnostic."""

    namer: KnowingNamer
    names: list[str] = field(default_factory=list)  # knowing-style qualified names
    normalized: list[str] = field(default_factory=list)  # normalize_symbol of each
    paths: list[str] = field(default_factory=list)
    by_component: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    like_index: QualifiedNameIndex | None = None

    @classmethod
    def build(cls, store: Store, namer: KnowingNamer) -> StoreView:
        view = cls(namer)
        qualified_names = []
        for node in sorted(store.all_nodes(), key=lambda n: (n.path, n.start_line, n.id)):
            qualified = namer.qualified_name(
                node.path, node.qualified_name, node.name, node.kind, node.start_line
            )
            qualified_names.append(qualified)
            if node.kind == SymbolKind.MODULE:
                continue
            index = len(view.names)
            view.names.append(qualified)
            view.normalized.append(normalize_symbol(qualified))
            view.paths.append(node.path)
            for component in _components(view.normalized[-1]):
                view.by_component[component].append(index)
        view.like_index = QualifiedNameIndex(qualified_names)
        return view

    def defining_files(self, expected: str) -> set[str]:
        """Files of the symbols matching ``expected``: the closest matches (same name at some
        qualification depth) when there are any, else every symbol knowing's rule accepts."""
        target = normalize_symbol(expected)
        candidates = {i for c in _components(target) for i in self.by_component.get(c, ())}
        matching = [i for i in sorted(candidates) if normalized_match(self.normalized[i], target)]
        close = [i for i in matching if _same_symbol(self.normalized[i], target)]
        return {self.paths[i] for i in (close or matching)}


def _components(normalized: str) -> set[str]:
    return {p.lower() for p in re.split(r"\.|::", normalized) if p}


def _same_symbol(r: str, g: str) -> bool:
    r, g = r.lower(), g.lower()
    return r == g or r.endswith("." + g) or g.endswith("." + r)


# -- scoring -------------------------------------------------------------------------------
def score(retrieved: Sequence[str], expected: Sequence[str]) -> dict[str, float]:
    r_norm = [normalize_symbol(r) for r in retrieved]
    g_norm = [normalize_symbol(g) for g in expected]
    verdicts = [[normalized_match(r, g) for g in g_norm] for r in r_norm]

    def matcher(i: int, j: int) -> bool:
        return verdicts[i][j]

    n, m = len(retrieved), len(expected)
    return {
        "p10_knowing": precision_at(n, m, matcher, K),
        "p10_once": precision_once_at(n, m, matcher, K),
        "r10": recall_at(n, m, matcher, K),
        "ndcg10": ndcg_at(n, m, matcher, K),
        "mrr": reciprocal_rank(n, m, matcher),
    }


def diagnose(symbols: Sequence[Symbol], expected: Sequence[str], view: StoreView) -> dict[str, str]:
    returned_files = {s.file for s in symbols}
    normalized = [normalize_symbol(s.knowing_name) for s in symbols]
    verdicts: dict[str, str] = {}
    for wanted in expected:
        target = normalize_symbol(wanted)
        ranks = [i for i, r in enumerate(normalized) if normalized_match(r, target)]
        if ranks and ranks[0] < K:
            verdicts[wanted] = "top10"
        elif ranks:
            verdicts[wanted] = "pack11+"
        else:
            files = view.defining_files(wanted)
            if not files:
                verdicts[wanted] = "not_indexed"
            else:
                verdicts[wanted] = "sibling" if files & returned_files else "not_reached"
    return verdicts


def keyword_summary(text: str) -> dict[str, list[str]]:
    keywords = extract_keywords(prose_of(text))
    return {
        "compounds": list(keywords.primary()),
        "components": list(keywords.components),
        "priority": list(keywords.priority),
    }


# -- one repository ------------------------------------------------------------------------
def evaluate_repo(
    repo: CorpusRepo, clone: Path, tasks: Sequence[Task], methods: Sequence[str], args: argparse.Namespace
) -> dict[str, Any]:
    detach_at_pinned_commit(repo, clone)
    store_path = Path(args.stores) / f"{repo.name}.sqlite"
    store_path.parent.mkdir(parents=True, exist_ok=True)
    index_s = index_store(clone, store_path)
    print(f"{repo.name}: store at {repo.commit[:12]} ready in {index_s:.1f} s", file=sys.stderr)
    store = Store.open(store_path, readonly=True)
    try:
        view = StoreView.build(store, KnowingNamer(clone, repo.repo_url, repo.name))
        results = [evaluate_task(task, clone, store_path, store, view, methods, args) for task in tasks]
    finally:
        store.close()
    return {"commit": repo.commit, "index_s": round(index_s, 2), "tasks": results}


def evaluate_task(
    task: Task,
    clone: Path,
    store_path: Path,
    store: Store,
    view: StoreView,
    methods: Sequence[str],
    args: argparse.Namespace,
) -> dict[str, Any]:
    assert view.like_index is not None
    expected = achievable_ground_truth(task.ground_truth, view.like_index)
    record: dict[str, Any] = {
        "id": task.id,
        "repo": task.repo,
        "tier": task.tier,
        "path": task.path,
        "description": task.description,
        "ground_truth": list(task.ground_truth),
        "achievable": expected,
        "keywords": keyword_summary(task.description),
        "methods": {},
    }
    for method in methods:
        started = time.perf_counter()
        try:
            if method == "task":
                config = parse_clones(args.config).get(task.repo) if args.config else None
                symbols = run_task(
                    clone, store_path, task.description, args.budget, str(config) if config else None
                )
            else:
                symbols = run_bm25(store, task.description, args.bm25_depth)
        except RuntimeError as exc:
            record["methods"][method] = {"error": str(exc)}
            print(f"  {task.id} {method}: error: {exc}", file=sys.stderr)
            continue
        seconds = time.perf_counter() - started
        for s in symbols:
            s.knowing_name = view.namer.qualified_name(s.file, s.qualified_name, s.name, s.kind, s.start_line)
        metrics = score([s.knowing_name for s in symbols], expected)
        record["methods"][method] = {
            **{k: round(v, 4) for k, v in metrics.items()},
            "returned": len(symbols),
            "seconds": round(seconds, 3),
            "diagnostic": diagnose(symbols, task.ground_truth, view),
            "retrieved": [s.knowing_name for s in symbols],
            "top10": [
                {"knowing": normalize_symbol(s.knowing_name), "file": s.file, "kind": s.kind}
                for s in symbols[:K]
            ],
        }
        if method == "bm25":
            record["methods"][method]["query"] = bm25_query(task.description)
        print(
            f"  {task.id} {method}: P@10 {metrics['p10_knowing']:.2f} once {metrics['p10_once']:.2f}"
            f" R@10 {metrics['r10']:.2f} MRR {metrics['mrr']:.2f} ({seconds:.1f} s)",
            file=sys.stderr,
        )
    return record


# -- report --------------------------------------------------------------------------------
def aggregate(task_records: Iterable[dict[str, Any]], method: str) -> dict[str, Any]:
    rows = [
        t["methods"][method] for t in task_records if "error" not in t["methods"].get(method, {"error": 1})
    ]
    if not rows:
        return {"tasks": 0}
    out: dict[str, Any] = {"tasks": len(rows)}
    for metric in METRICS:
        out[metric] = round(statistics.fmean(r[metric] for r in rows), 4)
    out["ndcg_above_1"] = sum(r["ndcg10"] > 1 for r in rows)
    out["multi_credit_tasks"] = sum(r["p10_knowing"] > r["p10_once"] for r in rows)
    out["median_returned"] = statistics.median(r["returned"] for r in rows)
    out["diagnostic"] = dict(Counter(v for r in rows for v in r["diagnostic"].values()))
    return out


def markdown_table(report: dict[str, Any], methods: Sequence[str]) -> str:
    lines = [
        "| repository | tasks | method | P@10 (knowing) | P@10 once | R@10 | NDCG@10 | MRR "
        "| top10 | pack11+ | sibling | not reached | not indexed |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    groups = [*report["repos"].items(), ("overall", report["overall"])]
    for name, group in groups:
        for method in methods:
            a = group["methods"][method] if "methods" in group else group[method]
            if not a.get("tasks"):
                continue
            d = a["diagnostic"]
            lines.append(
                f"| {name} | {a['tasks']} | {method} | {a['p10_knowing']:.3f} | {a['p10_once']:.3f} "
                f"| {a['r10']:.3f} | {a['ndcg10']:.3f} | {a['mrr']:.3f} | "
                + " | ".join(str(d.get(c, 0)) for c in CATEGORIES)
                + " |"
            )
    return "\n".join(lines)


def parse_clones(values: Sequence[str]) -> dict[str, Path]:
    clones = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise SystemExit(f"--clone wants NAME=PATH, got {value!r}")
        clones[name] = Path(path)
    return clones


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--knowing", required=True, help="a checkout of github.com/blackwell-systems/knowing")
    parser.add_argument("--clone", action="append", default=[], help="NAME=PATH of a corpus repository clone")
    parser.add_argument("--repos", default=None, help="comma-separated names to run (default: every --clone)")
    parser.add_argument("--method", choices=("both", "task", "bm25"), default="both")
    parser.add_argument(
        "--budget", type=int, default=5000, help="token budget of task (knowing's harness: 5000)"
    )
    parser.add_argument("--bm25-depth", type=int, default=20, help="symbols the BM25 list keeps")
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        help="NAME=PATH: a .knowing-pr.yml for that repository's task runs (knowing_sweep.py --write-configs)",
    )
    parser.add_argument("--limit", type=int, default=0, help="first N tasks per repository (0: all)")
    parser.add_argument("--stores", default=".knowing-corpus-stores", help="directory of the per-repo stores")
    parser.add_argument("--json", default=None, help="write the full report (every task) here")
    parser.add_argument(
        "--check-with-go",
        action="store_true",
        help="compare the port with knowing's Go code on every scored list (needs go on PATH)",
    )
    args = parser.parse_args(argv)

    knowing = Path(args.knowing)
    manifest = load_manifest(knowing)
    clones = parse_clones(args.clone)
    selected = args.repos.split(",") if args.repos else list(clones)
    for name in selected:
        if name not in manifest:
            raise SystemExit(f"{name} is not in the corpus manifest ({', '.join(sorted(manifest))})")
        if name not in clones:
            raise SystemExit(f"{name}: no --clone {name}=PATH given")
    methods = ("task", "bm25") if args.method == "both" else (args.method,)
    by_repo: dict[str, list[Task]] = defaultdict(list)
    for task in load_tasks(knowing):
        by_repo[task.repo].append(task)

    report: dict[str, Any] = {"budget": args.budget, "bm25_depth": args.bm25_depth, "repos": {}}
    all_tasks: list[dict[str, Any]] = []
    for name in selected:
        tasks = by_repo[name][: args.limit] if args.limit else by_repo[name]
        result = evaluate_repo(manifest[name], clones[name], tasks, methods, args)
        result["methods"] = {m: aggregate(result["tasks"], m) for m in methods}
        report["repos"][name] = result
        all_tasks.extend(result["tasks"])
    report["overall"] = {m: aggregate(all_tasks, m) for m in methods}
    print(markdown_table(report, methods))
    for method in methods:
        overall = report["overall"][method]
        print(
            f"{method}: P@10 (knowing) above once-credited P@10 on {overall.get('multi_credit_tasks', 0)}"
            f" tasks; NDCG@10 above 1 on {overall.get('ndcg_above_1', 0)}; median list length"
            f" {overall.get('median_returned', 0)}"
        )
    status = 0
    if args.check_with_go:
        report["go_check"] = go_check(knowing, all_tasks)
        status = 1 if report["go_check"]["differences"] else 0
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    return status


def go_check(knowing: Path, task_records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Every scored list through knowing's Go code too; prints and returns the differences."""
    cases = [
        (run["retrieved"], record["achievable"], score(run["retrieved"], record["achievable"]))
        for record in task_records
        for run in record["methods"].values()
        if "retrieved" in run
    ]
    result = check_with_go(knowing, cases)
    for difference in result["differences"][:20]:
        print(f"go check: {difference}")
    print(
        f"go check: {result['pairs']} (retrieved, expected) pairs in {result['lists']} lists,"
        f" {len(result['differences'])} differences from knowing's Go code"
    )
    return result


if __name__ == "__main__":
    raise SystemExit(main())
