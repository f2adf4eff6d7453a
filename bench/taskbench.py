"""A git repository's history → Recall@5, Recall@10 and MRR (file level) of ``knowing-pr task``
against a BM25-only baseline on the same FTS index.

Usage: ``python bench/taskbench.py --repo PATH [--window 300] [--tasks 60] [--json]``.

Tasks come from real commits: the commit message is the task, the non-test source files the
commit modified are the answer. The repository is indexed once, in a scratch store, at an
anchor commit ``--window`` first-parent commits before HEAD; tasks are the later non-merge
commits that modify 1–8 indexed source files which all exist at the anchor (a commit that
adds a file cannot be answered from an index without it). The clone is never modified: the
index is read from git objects.

Rankings compared, each turned into a list of distinct files (tests left out of every list,
since the answers exclude them):

- ``bm25``: ``Store.search_fts`` over the quoted, OR-joined words of the message (stop
  words removed), top 200 symbols in BM25 order;
- ``task seeds``: the task channels fused by weighted RRF, in fused order (no walk);
- ``task walk``: seeds, RWR, HITS, scoring — the engine's candidates in score order;
- ``task``: what ``knowing-pr task`` orders by: the walk's candidates re-ordered by the
  final fusion with the seed order (``rank/candidates.py`` step 7, as the pack does).

Every list is turned into files the same way: each file at its first appearance.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from knowing_pr.config import Settings, TaskParams
from knowing_pr.git import GitRepo
from knowing_pr.graph import is_test_path
from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.index import index_commit
from knowing_pr.parse import language_for_path
from knowing_pr.pipeline.task import task_query
from knowing_pr.rank import load_adjacency, rank_candidates, read_history_signals
from knowing_pr.store import Store
from knowing_pr.store.opening import open_store
from knowing_pr.task import analyse_task
from knowing_pr.task.keywords import STOP_WORDS


@dataclass
class Task:
    sha: str
    message: str
    answer: set[str]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, errors="replace"
    ).stdout


def clean_message(message: str) -> str:
    """The message without trailers, PR numbers and issue references."""
    lines = [
        line
        for line in message.strip().splitlines()
        if not re.match(r"^\s*(signed-off-by|co-authored-by|reviewed-by|fixes|closes|see)\b:?", line, re.I)
    ]
    text = "\n".join(lines)
    text = re.sub(r"\(#\d+\)|#\d+|https?://\S+", " ", text)
    return text.strip()


def collect_tasks(repo: Path, window: int, limit: int) -> tuple[str, list[Task]]:
    chain = git(repo, "rev-list", "--first-parent", f"--max-count={window + 1}", "HEAD").split()
    anchor = chain[-1]
    anchor_files = set(git(repo, "ls-tree", "-r", "--name-only", anchor).splitlines())
    tasks: list[Task] = []
    for sha in reversed(chain[:-1]):
        parents = git(repo, "rev-list", "--parents", "-n", "1", sha).split()[1:]
        if len(parents) != 1:
            continue
        status = git(repo, "diff-tree", "--no-commit-id", "-r", "--name-status", "--no-renames", sha)
        changed = [line.split("\t") for line in status.splitlines() if "\t" in line]
        sources = [
            parts[-1] for parts in changed if language_for_path(parts[-1]) and not is_test_path(parts[-1])
        ]
        if not 1 <= len(sources) <= 8:
            continue
        if any(parts[0] != "M" for parts in changed if parts[-1] in sources):
            continue
        if not all(path in anchor_files for path in sources):
            continue
        message = clean_message(git(repo, "log", "-1", "--format=%B", sha))
        if len(message) < 12:
            continue
        tasks.append(Task(sha, message, set(sources)))
        if len(tasks) >= limit:
            break
    return anchor, tasks


def distinct_files(paths: Sequence[str], limit: int = 50) -> list[str]:
    out: list[str] = []
    for path in paths:
        if path not in out and not is_test_path(path):
            out.append(path)
            if len(out) >= limit:
                break
    return out


def bm25_files(store: Store, message: str) -> list[str]:
    words = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]+", message) if w.lower() not in STOP_WORDS]
    query = " OR ".join(dict.fromkeys(f'"{w}"' for w in words[:64]))
    if not query:
        return []
    hits = store.search_fts(query, limit=200)
    nodes = store.nodes_by_ids(nid for nid, _ in hits)
    return distinct_files([nodes[nid].path for nid, _ in hits if nid in nodes])


def task_files(
    store: Store, settings: Settings, message: str, cache: dict[str, Adjacency]
) -> tuple[list[str], list[str], list[str]]:
    """(seeds in fused order, the walk's order, the final fused order) as distinct files."""
    analysis = analyse_task(store, settings, message)
    fused_nodes = store.nodes_by_ids(nid for nid, _ in analysis.fused)
    seeds_only = distinct_files([fused_nodes[nid].path for nid, _ in analysis.fused if nid in fused_nodes])
    if "adjacency" not in cache:
        cache["adjacency"] = load_adjacency(store)
    query = task_query(analysis, settings)
    ranking = rank_candidates(
        store, cache["adjacency"], settings, query, read_history_signals(store, settings)
    )
    # the candidates come in the final order; the walk's order is that of their walk scores
    walk_order = sorted(ranking.candidates, key=lambda c: (-dict(c.components)["walk_score"], c.node.id))
    walked = distinct_files([c.node.path for c in walk_order])
    by_id = {c.node.id: c.node for c in ranking.candidates}
    final = distinct_files([by_id[nid].path for nid, _ in ranking.display_order])
    return seeds_only, walked, final


def metrics(ranking: Sequence[str], answer: set[str]) -> tuple[float, float, float]:
    def recall(k: int) -> float:
        return len(answer & set(ranking[:k])) / len(answer)

    reciprocal = next((1.0 / i for i, path in enumerate(ranking, 1) if path in answer), 0.0)
    return recall(5), recall(10), reciprocal


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repo", required=True, type=Path)
    parser.add_argument("--window", type=int, default=300, help="first-parent commits after the anchor")
    parser.add_argument("--tasks", type=int, default=60, help="at most this many tasks")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--set", action="append", default=[], metavar="FIELD=VALUE", help="override a TaskParams value"
    )
    args = parser.parse_args(argv)
    overrides = {}
    for item in args.set:
        key, _, value = item.partition("=")
        kind = type(getattr(TaskParams(), key))
        overrides[key] = kind(float(value)) if kind is not bool else value.lower() in ("1", "true")
    params = TaskParams(**overrides)

    anchor, tasks = collect_tasks(args.repo, args.window, args.tasks)
    if not tasks:
        print("no qualifying commits in the window", file=sys.stderr)
        return 1
    settings = dataclasses.replace(Settings(), task=params)
    results: dict[str, list[tuple[float, float, float]]] = {
        "bm25": [],
        "task seeds": [],
        "task walk": [],
        "task": [],
    }
    seconds: dict[str, list[float]] = {"bm25": [], "task": []}
    with tempfile.TemporaryDirectory(prefix="taskbench-") as tmp:
        repo = GitRepo.open(args.repo)
        t0 = time.perf_counter()
        index_commit(repo, settings, rev=anchor, db_path=Path(tmp) / "index.sqlite")
        index_s = time.perf_counter() - t0
        store, _ = open_store(Path(tmp) / "index.sqlite")
        cache: dict[str, Adjacency] = {}
        try:
            counts = store.counts()
            for task in tasks:
                t = time.perf_counter()
                baseline = bm25_files(store, task.message)
                seconds["bm25"].append(time.perf_counter() - t)
                t = time.perf_counter()
                seeds_only, walked, final = task_files(store, settings, task.message, cache)
                seconds["task"].append(time.perf_counter() - t)
                results["bm25"].append(metrics(baseline, task.answer))
                results["task seeds"].append(metrics(seeds_only, task.answer))
                results["task walk"].append(metrics(walked, task.answer))
                results["task"].append(metrics(final, task.answer))
        finally:
            store.close()
    summary = {
        name: {
            "recall@5": round(statistics.fmean(r[0] for r in rows), 3),
            "recall@10": round(statistics.fmean(r[1] for r in rows), 3),
            "mrr": round(statistics.fmean(r[2] for r in rows), 3),
        }
        for name, rows in results.items()
    }
    report = {
        "repo": args.repo.name,
        "anchor": anchor,
        "tasks": len(tasks),
        "files": counts["files"],
        "nodes": counts["nodes"],
        "index_s": round(index_s, 2),
        "median_ms": {k: round(statistics.median(v) * 1000, 1) for k, v in seconds.items()},
        "results": summary,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"{report['repo']}: {len(tasks)} tasks, index at {anchor[:12]} "
        f"({counts['files']} files, {counts['nodes']} nodes, {index_s:.1f} s)"
    )
    print("| ranking | Recall@5 | Recall@10 | MRR | median ms/task |")
    print("|---|---|---|---|---|")
    for name, row in summary.items():
        ms = report["median_ms"].get("task" if name.startswith("task") else "bm25", 0.0)
        print(f"| {name} | {row['recall@5']:.3f} | {row['recall@10']:.3f} | {row['mrr']:.3f} | {ms} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
