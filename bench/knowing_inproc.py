"""knowing's corpus + clones + stores → ``knowing-pr task``'s ranked lists computed in this process
(one store, adjacency and history read per repository), for quick diagnosis and parameter sweeps.

Usage::

    python bench/knowing_inproc.py --knowing PATH --clone cargo=PATH [--clone NAME=PATH ...]
        --stores DIR [--repos cargo,jekyll] [--set field=value ...] [--show] [--json OUT]

The stores must already be at the pinned commits (``knowing_corpus.py`` builds them); nothing is
indexed here. ``--set`` overrides a ``TaskParams`` field (repeatable). ``--show`` prints, per task,
the expected symbols, the first ten returned and where each expected symbol sits in the final
order of all candidates (``cand#N``), the seed order (``seed#N``) and the pack (``pack#N``).

The figures this prints are for development; the reported ones come from ``knowing_corpus.py``,
which runs ``knowing-pr task`` as a fresh process per task.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowing_corpus import (
    METRICS,
    StoreView,
    Task,
    load_manifest,
    load_tasks,
    parse_clones,
    score,
)
from knowing_names import KnowingNamer
from knowing_rules import achievable_ground_truth, normalize_symbol, normalized_match

from knowing_pr.config import Settings, TaskParams
from knowing_pr.pipeline.task import TaskRequest, pack_task
from knowing_pr.pipeline.workspace import open_workspace
from knowing_pr.store import Store

K = 10


@dataclass
class RepoContext:
    """One corpus repository opened once: workspace, store, knowing's names."""

    name: str
    clone: Path
    store_path: Path
    head: str
    view: StoreView


def open_repo(name: str, clone: Path, stores: Path, repo_url: str) -> RepoContext:
    store_path = stores / f"{name}.sqlite"
    store = Store.open(store_path, readonly=True)
    try:
        head = store.indexed_commit or ""
        view = StoreView.build(store, KnowingNamer(clone, repo_url, name))
    finally:
        store.close()
    return RepoContext(name, clone, store_path, head, view)


def knowing_name(ctx: RepoContext, node: Any) -> str:
    return ctx.view.namer.qualified_name(
        node.path, node.qualified_name, node.name, node.kind, node.start_line
    )


def first_match(names: Sequence[str], expected: str) -> int | None:
    target = normalize_symbol(expected)
    for i, name in enumerate(names):
        if normalized_match(normalize_symbol(name), target):
            return i + 1
    return None


def relevant_count(names: Sequence[str], expected: Sequence[str]) -> int:
    targets = [normalize_symbol(g) for g in expected]
    return sum(any(normalized_match(normalize_symbol(n), t) for t in targets) for n in names)


def run_task(ctx: RepoContext, task: Task, settings: Settings, budget: int) -> dict[str, Any]:
    ws = open_workspace(ctx.clone, db=str(ctx.store_path), budget=budget)
    ws = dataclasses.replace(ws, settings=dataclasses.replace(settings, pack=ws.settings.pack))
    store = Store.open(ctx.store_path, readonly=True)
    try:
        run = pack_task(ws, store, ctx.head, TaskRequest(task.description, fmt="json"))
        packed = [knowing_name(ctx, s.node) for s in run.pack.symbols]
        order_ids = [nid for nid, _ in run.ranking.display_order] or [
            c.node.id for c in run.ranking.candidates
        ]
        by_id = {c.node.id: c.node for c in run.ranking.candidates}
        candidates = [knowing_name(ctx, by_id[nid]) for nid in order_ids if nid in by_id]
        seed_nodes = store.nodes_by_ids(run.analysis.seed_order()[:300])
        seeds = [knowing_name(ctx, seed_nodes[n]) for n in run.analysis.seed_order()[:300] if n in seed_nodes]
    finally:
        store.close()
    assert ctx.view.like_index is not None
    expected = achievable_ground_truth(task.ground_truth, ctx.view.like_index)
    metrics = score(packed, expected)
    metrics.update({f"cand_{k}": v for k, v in score(candidates, expected).items()})
    metrics["oracle_p10"] = min(K, relevant_count(candidates, expected)) / K
    metrics["oracle_seed_p10"] = min(K, relevant_count(seeds, expected)) / K
    where = {
        g: {"pack": first_match(packed, g), "cand": first_match(candidates, g), "seed": first_match(seeds, g)}
        for g in expected
    }
    return {
        "id": task.id,
        "description": task.description,
        "expected": expected,
        "metrics": metrics,
        "top10": [normalize_symbol(n) for n in packed[:K]],
        "where": where,
        "candidates": len(candidates),
        "packed": len(packed),
    }


def show(record: dict[str, Any]) -> None:
    m = record["metrics"]
    print(f"== {record['id']} P@10 {m['p10_knowing']:.1f} once {m['p10_once']:.1f} | {record['description']}")
    for g, w in record["where"].items():
        print(f"   {normalize_symbol(g):60s} pack#{w['pack']} cand#{w['cand']} seed#{w['seed']}")
    print(f"   top: {record['top10']}  ({record['packed']} packed of {record['candidates']})")


def parse_sets(values: Sequence[str]) -> dict[str, Any]:
    fields = {f.name: f for f in dataclasses.fields(TaskParams)}
    out: dict[str, Any] = {}
    for value in values:
        key, _, raw = value.partition("=")
        if key not in fields:
            raise SystemExit(f"--set: TaskParams has no field {key!r}")
        default = getattr(TaskParams(), key)
        out[key] = type(default)(json.loads(raw)) if not isinstance(default, bool) else raw == "true"
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--knowing", required=True)
    parser.add_argument("--clone", action="append", default=[])
    parser.add_argument("--stores", required=True)
    parser.add_argument("--repos", default=None)
    parser.add_argument("--budget", type=int, default=5000)
    parser.add_argument("--set", action="append", default=[], dest="sets")
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--only", default=None, help="comma-separated task ids")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)

    knowing = Path(args.knowing)
    manifest = load_manifest(knowing)
    clones = parse_clones(args.clone)
    selected = args.repos.split(",") if args.repos else list(clones)
    settings = Settings(task=dataclasses.replace(TaskParams(), **parse_sets(args.sets)))
    tasks = load_tasks(knowing)
    only = set(args.only.split(",")) if args.only else None
    report: dict[str, Any] = {}
    all_rows: list[dict[str, float]] = []
    for name in selected:
        ctx = open_repo(name, clones[name], Path(args.stores), manifest[name].repo_url)
        records = []
        for task in tasks:
            if task.repo != name or (only and task.id not in only):
                continue
            record = run_task(ctx, task, settings, args.budget)
            records.append(record)
            if args.show:
                show(record)
        rows = [r["metrics"] for r in records]
        all_rows.extend(rows)
        keys = [*METRICS, *(f"cand_{m}" for m in METRICS[:2]), "oracle_p10", "oracle_seed_p10"]
        means = {m: round(statistics.fmean(r[m] for r in rows), 4) for m in keys} if rows else {}
        report[name] = {"means": means, "tasks": records}
        print(f"{name} ({len(rows)}): " + " ".join(f"{m} {v:.3f}" for m, v in means.items()), file=sys.stderr)
    keys = [*METRICS, *(f"cand_{m}" for m in METRICS[:2]), "oracle_p10", "oracle_seed_p10"]
    overall = {m: round(statistics.fmean(r[m] for r in all_rows), 4) for m in keys} if all_rows else {}
    print("overall: " + " ".join(f"{m} {v:.3f}" for m, v in overall.items()), file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps({"overall": overall, "repos": report}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
