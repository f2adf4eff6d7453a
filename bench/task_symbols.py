"""Issue reports → the symbols their fix changed: symbol Acc@1/@3/@5 and file-of-symbol Acc@1/@3
of ``knowing-pr task``'s symbol order ("Code to look at"), the current order and the order that
follows the task's file list (``TaskParams.rank_file_prior``) in the same run.

Usage::

    python bench/task_symbols.py --tasks <tasks.jsonl> --reports <reports.jsonl> \\
        --clone jinja=<clone> ... --stores <stores dir> [--json out.json]

The tasks, reports and stores are ``bench/localize.py``'s (its loaders are imported): one task a
report, each repository indexed once at its anchor. The answer of a task: the non-test source
files its fix changed (indexed at the anchor), and the *gold symbols*, the definitions of those
files whose line span, in the fix's parent, overlaps a line the fix changed or removed (or holds
a line it inserted), matched by qualified name to the anchor's index (``git diff -U0`` of the fix
against its parent; the parent's file parsed as the index parses it). A task whose gold symbols
are not in the anchor's index (the fix changed only code added after it, or only module-level
lines) counts in the file-of-symbol measures only.

For each task the symbol order is computed once as ``task`` computes it (the analysis, the
recipe, the file list from that order), then reordered under each weight of ``WEIGHTS``
(``task_rank.follow_file_list``). ``current``: the order today (weight 0); ``follow (LOO)``: each
repository with the weight best (mean symbol Acc@1 + Acc@5, then the smaller weight) on the
*other* repositories' tasks; ``follow (all)``: the weight best on all (in-sample).

Acc@k (symbols): a gold symbol among the first k; Acc@k (files): a gold file among the files of
the first k symbols.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from localize import load_tasks, repository_tasks, with_reports

from knowing_pr.config import Settings, TaskParams
from knowing_pr.graph import is_test_path
from knowing_pr.graph.paths import module_name
from knowing_pr.model import Node
from knowing_pr.parse import language_for_path, parse_source
from knowing_pr.pipeline.task import symbol_paths, task_query
from knowing_pr.rank import rank_candidates
from knowing_pr.rank.task_rank import follow_file_list
from knowing_pr.task import analyse_task
from knowing_pr.task.files import task_files

WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
SYMBOL_KS = (1, 3, 5)
FILE_KS = (1, 3)
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.M)


@dataclasses.dataclass
class Case:
    repo: str
    gold_files: frozenset[str]
    gold_symbols: frozenset[str]
    #: the order today: (node id, score), best first
    order: list[tuple[str, float]]
    nodes: dict[str, Node]
    file_scores: dict[str, float]
    pinned: frozenset[str]


def git(clone: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(clone), *args], check=True, capture_output=True, text=True, errors="replace"
    ).stdout


def touched_lines(clone: Path, sha: str, path: str) -> tuple[set[int], set[int]]:
    """The parent's lines ``sha`` changed or removed, and those after which it inserted lines."""
    changed: set[int] = set()
    inserted: set[int] = set()
    for match in HUNK.finditer(git(clone, "diff", "-U0", "--no-renames", f"{sha}^", sha, "--", path)):
        start, count = int(match.group(1)), int(match.group(2) or "1")
        if count == 0:
            inserted.add(start)
        else:
            changed.update(range(start, start + count))
    return changed, inserted


def gold_symbol_names(clone: Path, sha: str, path: str) -> set[str]:
    """Qualified names of the parent's definitions of ``path`` that the fix touched."""
    language = language_for_path(path)
    if language is None:
        return set()
    try:
        source = subprocess.run(
            ["git", "-C", str(clone), "show", f"{sha}^:{path}"], check=True, capture_output=True
        ).stdout
    except subprocess.CalledProcessError:
        return set()  # the file is new in the fix
    changed, inserted = touched_lines(clone, sha, path)
    prefix = module_name(path)
    names: set[str] = set()
    for d in parse_source(path, language, source).definitions:
        if any(d.start_line <= line <= d.end_line for line in changed) or any(
            d.start_line <= line < d.end_line for line in inserted
        ):
            names.add(f"{prefix}.{d.qualified_name}")
    return names


def build_cases(tasks: Sequence[dict[str, Any]], clones: dict[str, Path], stores: Path) -> list[Case]:
    settings = Settings()
    cases: list[Case] = []
    for repository in repository_tasks(tasks, clones, stores, settings):
        name, store, indexed = repository.name, repository.store, repository.indexed
        for task in repository.tasks:
            gold_files = frozenset(p for p in task["files"] if p in indexed and not is_test_path(p))
            if not gold_files:
                continue
            wanted = {(p, q) for p in gold_files for q in gold_symbol_names(clones[name], task["sha"], p)}
            gold_symbols = frozenset(
                n.id for n in store.nodes_in_paths(gold_files) if (n.path, n.qualified_name) in wanted
            )
            analysis = analyse_task(store, settings, task["text"])
            query = task_query(analysis, settings)
            ranking = rank_candidates(store, repository.adjacency, settings, query, repository.history)
            files = task_files(store, analysis, symbol_paths(ranking), settings.task)
            nodes = {c.node.id: c.node for c in ranking.candidates}
            cases.append(
                Case(
                    name,
                    gold_files,
                    gold_symbols,
                    list(ranking.display_order),
                    nodes,
                    {f.path: f.score for f in files},
                    query.pinned,
                )
            )
    return cases


def case_scores(case: Case, weight: float) -> tuple[float, ...]:
    params = TaskParams(rank_file_prior=weight)
    order = [
        nid for nid, _ in follow_file_list(case.order, case.nodes, case.file_scores, case.pinned, params)
    ]
    first = next((i for i, nid in enumerate(order, 1) if nid in case.gold_symbols), None)
    symbol_hits = tuple(float(first is not None and first <= k) for k in SYMBOL_KS)
    first_file = next((i for i, nid in enumerate(order, 1) if case.nodes[nid].path in case.gold_files), None)
    file_hits = tuple(float(first_file is not None and first_file <= k) for k in FILE_KS)
    return (*symbol_hits, *file_hits)


NAMES = (*(f"sym@{k}" for k in SYMBOL_KS), *(f"file@{k}" for k in FILE_KS))


def summary(rows: Sequence[tuple[float, ...]]) -> dict[str, float]:
    return {n: round(statistics.fmean(r[i] for r in rows), 3) if rows else 0.0 for i, n in enumerate(NAMES)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tasks", type=Path, required=True)
    parser.add_argument("--reports", type=Path, required=True)
    parser.add_argument("--clone", action="append", default=[], metavar="NAME=PATH", required=True)
    parser.add_argument("--stores", type=Path, required=True)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    clones = {n: Path(p) for n, _, p in (c.partition("=") for c in args.clone)}
    tasks = with_reports([t for t in load_tasks(args.tasks) if t["repo"] in clones], load_tasks(args.reports))
    t0 = time.perf_counter()
    cases = build_cases(tasks, clones, args.stores)
    print(f"{len(cases)} tasks ready in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    repos = sorted({c.repo for c in cases})
    # symbol measures over the tasks with gold symbols; file-of-symbol over every task
    table = {w: [case_scores(c, w) for c in cases] for w in WEIGHTS}

    def objective(weight: float, keep: set[str]) -> tuple[float, float]:
        rows = [r for r, c in zip(table[weight], cases, strict=True) if c.repo in keep and c.gold_symbols]
        if not rows:  # a fold with nothing to learn from: the smallest weight
            return (0.0, -weight)
        return (statistics.fmean(r[0] + r[2] for r in rows), -weight)

    chosen = {repo: max(WEIGHTS, key=lambda w: objective(w, set(repos) - {repo})) for repo in repos}
    best_all = max(WEIGHTS, key=lambda w: objective(w, set(repos)))
    report: dict[str, Any] = {"chosen": {**chosen, "all": best_all}, "repos": {}, "weights": list(WEIGHTS)}
    for repo in [*repos, None]:
        mine = [i for i, c in enumerate(cases) if repo is None or c.repo == repo]
        rows = {
            "current": [table[0.0][i] for i in mine],
            "follow (LOO)": [table[chosen[cases[i].repo]][i] for i in mine],
            "follow (all)": [table[best_all][i] for i in mine],
        }
        entry: dict[str, Any] = {
            "tasks": len(mine),
            "with symbols": sum(1 for i in mine if cases[i].gold_symbols),
        }
        for name, values in rows.items():
            symbols = summary([v for v, i in zip(values, mine, strict=True) if cases[i].gold_symbols])
            files = summary(values)
            entry[name] = {**{k: symbols[k] for k in NAMES[:3]}, **{k: files[k] for k in NAMES[3:]}}
        report["repos"]["**pooled**" if repo is None else repo] = entry
    report["per_weight"] = {
        str(w): {
            repo: summary(
                [r for r, c in zip(table[w], cases, strict=True) if c.repo == repo and c.gold_symbols]
            )
            for repo in repos
        }
        for w in WEIGHTS
    }
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    print(
        "| repository | tasks (with gold symbols) | order | sym Acc@1 | sym Acc@3 | sym Acc@5 | file Acc@1 | file Acc@3 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for repo, entry in report["repos"].items():
        for name in ("current", "follow (LOO)", "follow (all)"):
            m = entry[name]
            print(
                f"| {repo} | {entry['tasks']} ({entry['with symbols']}) | {name} | {m['sym@1']:.3f}"
                f" | {m['sym@3']:.3f} | {m['sym@5']:.3f} | {m['file@1']:.3f} | {m['file@3']:.3f} |"
            )
    print(json.dumps(report["chosen"]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
