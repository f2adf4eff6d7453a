"""knowing's corpus + clones + stores + a grid of ``TaskParams`` values → every task scored under
every setting of the grid, and the settings chosen by leave-one-repository-out.

Usage::

    python bench/knowing_sweep.py --knowing PATH --clone cargo=PATH [--clone NAME=PATH ...]
        --stores DIR --grid GRID.json [--repos cargo,jekyll] [--json OUT] [--write-configs DIR]

The stores must already be at the pinned commits (``knowing_corpus.py`` builds them). ``GRID.json``
holds two mappings of ``TaskParams`` field → list of values::

    {"seed": {"weight_names": [0, 2]}, "order": {"rank_consensus": [0, 0.3]}}

``bench/knowing_grid.json`` is the grid behind the figures in ``docs/task.md`` (576 combinations).
``seed`` fields change the seeds (every task is analysed and walked again per combination);
``order`` fields change only the final order (``rank.candidates.order_task_candidates``), so
each is applied to the walk's candidates of every seed combination. Every combination of both
is scored on every task (the pack at a 5,000-token budget, as ``knowing-pr task`` builds it; the
knapsack is offered the first 80 symbols of the final order), with knowing's rules
(``knowing_rules.py``, ``knowing_names.py``).

Leave-one-repository-out: for each repository, the combination with the best mean P@10
(knowing's rule) over the tasks of the *other* repositories (ties: the earlier combination in
grid order, so list each field's current default first) is applied to it; its figures are that
repository's. The report prints, per repository, the chosen combination and its P@10 (knowing's
rule), once-credited P@10, R@10, NDCG@10 and MRR, and the combination chosen on all
repositories. Nothing here is used by ``knowing-pr`` itself: the defaults in
``knowing_pr/config/params.py`` are set by hand from this report.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import statistics
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowing_corpus import METRICS, StoreView, Task, load_manifest, load_tasks, parse_clones, score
from knowing_names import KnowingNamer
from knowing_rules import achievable_ground_truth

from knowing_pr.config import Settings
from knowing_pr.model import ScoredSymbol
from knowing_pr.pack import PackSpec, build_pack
from knowing_pr.pipeline.task import TaskRequest, pack_task, task_query
from knowing_pr.pipeline.workspace import open_workspace
from knowing_pr.rank import RankQuery
from knowing_pr.rank.candidates import order_task_candidates
from knowing_pr.store import Store

#: the knapsack is offered this many symbols of the final order (it packs about 20)
OFFERED = 80

Combo = dict[str, Any]


@dataclass
class Walked:
    """One task analysed and walked under one seed combination: what the final order reads."""

    task: Task
    expected: list[str]
    walk: list[ScoredSymbol]
    query: RankQuery
    run: Any


def combos(grid: Mapping[str, Sequence[Any]]) -> list[Combo]:
    keys = list(grid)
    return [dict(zip(keys, values, strict=True)) for values in itertools.product(*(grid[k] for k in keys))]


def with_task(settings: Settings, combo: Combo) -> Settings:
    task = dataclasses.replace(settings.task, **combo)
    return dataclasses.replace(settings, task=task)


def walk_order(symbols: Sequence[ScoredSymbol]) -> list[ScoredSymbol]:
    """The candidates back in the walk's order, with the walk's scores."""
    walked = [dataclasses.replace(s, score=dict(s.components).get("walk_score", s.score)) for s in symbols]
    return sorted(walked, key=lambda s: (-s.score, s.node.id))


def walk_tasks(
    name: str, clone: Path, stores: Path, tasks: Sequence[Task], seed: Combo, view: StoreView
) -> Iterator[Walked]:
    store_path = stores / f"{name}.sqlite"
    ws = open_workspace(clone, db=str(store_path), budget=5000)
    ws = dataclasses.replace(ws, settings=with_task(ws.settings, seed))
    store = Store.open(store_path, readonly=True)
    try:
        head = store.indexed_commit or ""
        for task in tasks:
            run = pack_task(ws, store, head, TaskRequest(task.description, fmt="json"))
            analysis = run.analysis
            query = task_query(analysis, ws.settings)
            assert view.like_index is not None
            expected = achievable_ground_truth(task.ground_truth, view.like_index)
            yield Walked(task, expected, walk_order(run.ranking.candidates), query, run)
    finally:
        store.close()


def score_order(walked: Walked, settings: Settings, view: StoreView) -> dict[str, float]:
    run = walked.run
    ranking = order_task_candidates(
        list(walked.walk), run.ranking.trace, run.ranking.trace.adjacency, settings, walked.query
    )
    ranking.candidates = ranking.candidates[:OFFERED]
    spec = PackSpec(
        mode="task",
        identity_inputs={"task": walked.task.description},
        inputs={"task": walked.task.description},
        fmt="json",
        commit=run.head,
        graph_root="",
        penalise_tests=walked.query.penalise_tests,
    )
    pack = build_pack(ranking, spec, settings)
    names = [
        view.namer.qualified_name(
            s.node.path, s.node.qualified_name, s.node.name, s.node.kind, s.node.start_line
        )
        for s in pack.symbols
    ]
    return score(names, walked.expected)


def sweep(args: argparse.Namespace) -> dict[str, Any]:
    knowing = Path(args.knowing)
    manifest = load_manifest(knowing)
    clones = parse_clones(args.clone)
    selected = args.repos.split(",") if args.repos else list(clones)
    grid = json.loads(Path(args.grid).read_text())
    seeds, orders = combos(grid.get("seed", {})), combos(grid.get("order", {}))
    tasks = load_tasks(knowing)
    base = Settings(pack=dataclasses.replace(Settings().pack, budget_tokens=5000))
    # results[repo][task id][combo index] = metrics
    results: dict[str, dict[str, list[dict[str, float]]]] = {}
    labels = [{**s, **o} for s in seeds for o in orders]
    for name in selected:
        started = time.perf_counter()
        store = Store.open(Path(args.stores) / f"{name}.sqlite", readonly=True)
        try:
            view = StoreView.build(store, KnowingNamer(clones[name], manifest[name].repo_url, name))
        finally:
            store.close()
        mine = [t for t in tasks if t.repo == name]
        per_task: dict[str, list[dict[str, float]]] = {t.id: [] for t in mine}
        for seed in seeds:
            for walked in walk_tasks(name, clones[name], Path(args.stores), mine, seed, view):
                for order in orders:
                    settings = with_task(base, {**seed, **order})
                    per_task[walked.task.id].append(score_order(walked, settings, view))
        results[name] = per_task
        print(
            f"{name}: {len(mine)} tasks x {len(labels)} settings in {time.perf_counter() - started:.0f} s",
            file=sys.stderr,
        )
    return {"labels": labels, "results": results}


def mean_of(rows: Sequence[dict[str, float]], metric: str) -> float:
    return statistics.fmean(r[metric] for r in rows) if rows else 0.0


def best_index(
    results: Mapping[str, Mapping[str, list[dict[str, float]]]], repos: Sequence[str], count: int
) -> int:
    """The combination with the best mean P@10 (knowing's rule) over the tasks of ``repos``."""
    means = [
        mean_of([per[i] for name in repos for per in results[name].values()], "p10_knowing")
        for i in range(count)
    ]
    return max(range(count), key=lambda i: (means[i], -i))


def leave_one_out(report: Mapping[str, Any]) -> dict[str, Any]:
    results, labels = report["results"], report["labels"]
    repos = list(results)
    out: dict[str, Any] = {"folds": {}}
    all_rows: list[dict[str, float]] = []
    for held in repos:
        chosen = best_index(results, [r for r in repos if r != held], len(labels))
        rows = [per[chosen] for per in results[held].values()]
        all_rows.extend(rows)
        out["folds"][held] = {
            "chosen": labels[chosen],
            "tasks": len(rows),
            **{m: round(mean_of(rows, m), 4) for m in METRICS},
        }
    out["overall"] = {"tasks": len(all_rows), **{m: round(mean_of(all_rows, m), 4) for m in METRICS}}
    everywhere = best_index(results, repos, len(labels))
    out["chosen_on_all"] = labels[everywhere]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--knowing", required=True)
    parser.add_argument("--clone", action="append", default=[])
    parser.add_argument("--stores", required=True)
    parser.add_argument("--grid", required=True)
    parser.add_argument("--repos", default=None)
    parser.add_argument("--json", default=None)
    parser.add_argument(
        "--write-configs",
        default=None,
        help="write DIR/NAME.yml per repository: the task settings chosen without it (for knowing_corpus.py --config)",
    )
    args = parser.parse_args(argv)
    report = sweep(args)
    loo = leave_one_out(report)
    for held, fold in loo["folds"].items():
        figures = " ".join(f"{m} {fold[m]:.3f}" for m in METRICS)
        print(f"{held} ({fold['tasks']}): {figures}  chosen {json.dumps(fold['chosen'])}")
    print("overall: " + " ".join(f"{m} {loo['overall'][m]:.3f}" for m in METRICS))
    print(f"chosen on all repositories: {json.dumps(loo['chosen_on_all'])}")
    if args.json:
        Path(args.json).write_text(json.dumps({**report, "loo": loo}, indent=1) + "\n")
    if args.write_configs:
        write_configs(Path(args.write_configs), loo)
    return 0


def write_configs(directory: Path, loo: Mapping[str, Any]) -> None:
    """``DIR/NAME.yml``: a ``task:`` section with the combination chosen for NAME's fold."""
    import yaml

    directory.mkdir(parents=True, exist_ok=True)
    for held, fold in loo["folds"].items():
        text = yaml.safe_dump({"task": fold["chosen"]}, sort_keys=True)
        (directory / f"{held}.yml").write_text(f"# chosen by leave-one-repository-out without {held}\n{text}")


if __name__ == "__main__":
    raise SystemExit(main())
