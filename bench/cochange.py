"""A git repository's own history → Recall@5, Recall@10 and MRR of five ways to predict the
rest of a change from part of it (file level).

Usage::

    python bench/cochange.py --repo PATH [--repo PATH ...] [--tasks 60] [--seed 7]
                             [--span 0.4] [--json OUT.json]
    python bench/cochange.py --combine a.json b.json ...     # the overall table

Tasks come from the repository's first-parent history: a non-merge commit that modified
2–8 source files (files of a supported language that exist before and after the commit).
A seeded random half of them (rounded up) is the change; the rest is held out. Tasks are
drawn from the last ``--span`` of the first-parent chain; the store is indexed once at the
parent of the earliest task and moved forward incrementally (``index_commit(rev=parent)``),
so every method sees only the code and the history before the task's commit.

Methods (input files never count as predictions):

- ``structure``: knowing-pr's PR ranking with history off (no co-change edges walked, no
  recency); files in order of their first symbol in the ranking;
- ``structure+history``: the same ranking as ``knowing-pr pr`` (co-change edges with the
  repository's measured share, recency from history);
- ``cochange``: files ranked by co-change confidence with the change (history mined up to the
  parent only; ``cochange_neighbours``, min support 1);
- ``same-dir``: the other files of the changed files' directories, in a seeded random order;
- ``random``: every indexed file in a seeded random order.

Recall@k = held-out files among the first k / held-out files; MRR = 1 / rank of the first
held-out file (0 when none is ranked). Tables are means over tasks; ``--combine`` adds one
row per language and an overall row (mean over repositories).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from knowing_pr.config import Settings
from knowing_pr.git import GitRepo
from knowing_pr.history import cochange_neighbours
from knowing_pr.index import index_commit
from knowing_pr.model import EdgeKind, Node
from knowing_pr.pack import PackSpec, build_pack
from knowing_pr.parse import language_for_path
from knowing_pr.rank import RankQuery, load_adjacency, rank_candidates, read_history_signals
from knowing_pr.rank.seeds import ChangedFile, change_seeds
from knowing_pr.store import Store
from knowing_pr.store.history import load_history

METHODS = ("structure", "structure+history", "cochange", "same-dir", "random")
MIN_FILES, MAX_FILES = 2, 8


@dataclass(frozen=True)
class Task:
    commit: str
    parent: str
    files: tuple[str, ...]


@dataclass
class Scores:
    recall5: list[float] = dataclasses.field(default_factory=list)
    recall10: list[float] = dataclasses.field(default_factory=list)
    mrr: list[float] = dataclasses.field(default_factory=list)

    def add(self, ranking: Sequence[str], held: set[str]) -> None:
        self.recall5.append(len(held & set(ranking[:5])) / len(held))
        self.recall10.append(len(held & set(ranking[:10])) / len(held))
        first = next((i for i, path in enumerate(ranking, 1) if path in held), None)
        self.mrr.append(1.0 / first if first else 0.0)

    def means(self) -> dict[str, float]:
        n = max(len(self.mrr), 1)
        return {
            "recall5": sum(self.recall5) / n,
            "recall10": sum(self.recall10) / n,
            "mrr": sum(self.mrr) / n,
        }


def first_parent_chain(repo: GitRepo) -> list[str]:
    head = repo.head_commit()
    chain: list[str] = []
    while head is not None:
        chain.append(head)
        parents = repo.parents(head)
        head = parents[0] if parents else None
    return chain[::-1]


def eligible_task(repo: GitRepo, commit: str, settings: Settings) -> Task | None:
    parents = repo.parents(commit)
    if len(parents) != 1:
        return None
    files = sorted(
        c.new_path
        for c in repo.diff_trees(parents[0], commit)
        if c.status == "M"
        and c.new_path
        and language_for_path(c.new_path)
        and not settings.index.is_excluded(c.new_path)
    )
    if not MIN_FILES <= len(files) <= MAX_FILES:
        return None
    return Task(commit, parents[0], tuple(files))


def draw_tasks(repo: GitRepo, settings: Settings, count: int, seed: int, span: float) -> list[Task]:
    chain = first_parent_chain(repo)
    recent = chain[int(len(chain) * (1.0 - span)) :]
    found = [t for t in (eligible_task(repo, c, settings) for c in recent) if t is not None]
    rng = random.Random(seed)
    picked = rng.sample(found, min(len(found), int(count * 1.25) + 2))
    order = {sha: i for i, sha in enumerate(chain)}
    return sorted(picked, key=lambda t: order[t.commit])


def split_task(task: Task, seed: int) -> tuple[list[str], set[str]]:
    files = list(task.files)
    random.Random(f"{seed}:{task.commit}").shuffle(files)
    given = (len(files) + 1) // 2
    return sorted(files[:given]), set(files[given:])


def files_in_pack(
    store: Store, settings: Settings, given: Sequence[str], *, with_history: bool
) -> tuple[list[str], int]:
    """(files in order of their first symbol in the PR pack, the pack's tokens): the pack
    ``knowing-pr pr --files GIVEN`` builds (``pipeline.build_pr_pack``'s request), read the
    way a user reads it; structure-only drops the recency and the co-change list."""
    by_path: dict[str, list[Node]] = {}
    for node in store.nodes_in_paths(given):
        by_path.setdefault(node.path, []).append(node)
    paths = sorted(given)
    seeds = change_seeds([ChangedFile(p) for p in paths], by_path, (), settings.rank)
    query = RankQuery(mode="pr", seeds=seeds, changed_paths=tuple(paths))
    history = read_history_signals(
        store, settings, paths, with_recency=with_history, with_cochange=with_history
    )
    ranking = rank_candidates(store, load_adjacency(store), settings, query, history)
    spec = PackSpec(
        mode="pr",
        identity_inputs={"files": paths},
        inputs={"files": paths, "base": None, "head": None},
        fmt="markdown",
        commit=None,
        graph_root=store.graph_root or "",
        test_share=settings.pack.test_share,
        cochange=history.evidence,
    )
    pack = build_pack(ranking, spec, settings)
    out: list[str] = []
    seen = set(given)
    for symbol in pack.symbols:
        if symbol.node.path not in seen:
            seen.add(symbol.node.path)
            out.append(symbol.node.path)
    return out, pack.tokens_used


def cochange_ranking(store: Store, given: Sequence[str]) -> list[str]:
    state = load_history(store)
    if state is None:
        return []
    return [path for path, *_ in cochange_neighbours(state, given, 10_000, min_together=1)]


def run_repository(
    path: str, tasks: int, seed: int, span: float, history_overrides: dict[str, float] | None = None
) -> dict[str, object]:
    repo = GitRepo.open(path)
    settings = Settings()
    settings = dataclasses.replace(
        settings,
        index=dataclasses.replace(settings.index, isolate_parser=False),
        history=dataclasses.replace(settings.history, **(history_overrides or {})),
    )
    structure_only = dataclasses.replace(
        settings,
        rank=dataclasses.replace(
            settings.rank, edge_weights={**settings.rank.edge_weights, EdgeKind.CO_CHANGED_WITH: 0.0}
        ),
    )
    started = time.perf_counter()
    drawn = draw_tasks(repo, settings, tasks, seed, span)
    scores = {m: Scores() for m in METHODS}
    languages: Counter[str] = Counter()
    shares: list[float] = []
    pack_tokens: list[int] = []
    done = 0
    with tempfile.TemporaryDirectory(prefix="kpr-bench-") as tmp:
        db = Path(tmp) / "index.sqlite"
        for task in drawn:
            if done >= tasks:
                break
            index_commit(repo, settings, rev=task.parent, db_path=db)
            with Store.open(db) as store:
                indexed = {p for p, f in store.files().items() if f.status == "indexed"}
                files = [p for p in task.files if p in indexed]
                if len(files) < MIN_FILES:
                    continue
                given, held = split_task(Task(task.commit, task.parent, tuple(files)), seed)
                structure, tokens_s = files_in_pack(store, structure_only, given, with_history=False)
                history, tokens_h = files_in_pack(store, settings, given, with_history=True)
                pack_tokens.extend((tokens_s, tokens_h))
                rankings = {
                    "structure": structure,
                    "structure+history": history,
                    "cochange": cochange_ranking(store, given),
                }
                rng = random.Random(f"{seed}:{task.commit}:order")
                everything = sorted(indexed - set(given))
                rng.shuffle(everything)
                dirs = {p.rsplit("/", 1)[0] if "/" in p else "" for p in given}
                rankings["same-dir"] = [
                    p for p in everything if (p.rsplit("/", 1)[0] if "/" in p else "") in dirs
                ]
                rankings["random"] = everything
                for method, ranking in rankings.items():
                    scores[method].add(ranking, held)
                shares.append(read_history_signals(store, settings).walk_share)
                languages.update(f.language or "" for f in store.files().values() if f.status == "indexed")
                done += 1
    return {
        "repo": Path(path).name,
        "language": languages.most_common(1)[0][0] if languages else "",
        "tasks": done,
        "seed": seed,
        "wall_s": round(time.perf_counter() - started, 1),
        "mean_cochange_share": round(sum(shares) / max(len(shares), 1), 3),
        "max_pack_tokens": max(pack_tokens, default=0),
        "budget_tokens": settings.pack.budget_tokens,
        "methods": {m: {k: round(v, 4) for k, v in s.means().items()} for m, s in scores.items()},
    }


def table(rows: Sequence[tuple[str, dict[str, dict[str, float]]]]) -> str:
    head = "| | " + " | ".join(f"{m} R@5 / R@10 / MRR" for m in METHODS) + " |"
    lines = [head, "|" + "---|" * (len(METHODS) + 1)]
    for label, methods in rows:
        cells = [
            f"{methods[m]['recall5']:.3f} / {methods[m]['recall10']:.3f} / {methods[m]['mrr']:.3f}"
            for m in METHODS
        ]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def mean_of(results: Sequence[dict[str, object]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for method in METHODS:
        out[method] = {
            key: sum(r["methods"][method][key] for r in results) / len(results)  # type: ignore[index]
            for key in ("recall5", "recall10", "mrr")
        }
    return out


def combined_table(results: Sequence[dict[str, object]]) -> str:
    rows: list[tuple[str, dict[str, dict[str, float]]]] = []
    for r in results:
        label = f"{r['repo']} ({r['language']}, {r['tasks']} tasks, share {r['mean_cochange_share']})"
        rows.append((label, r["methods"]))  # type: ignore[arg-type]
    by_language: dict[str, list[dict[str, object]]] = {}
    for r in results:
        by_language.setdefault(str(r["language"]), []).append(r)
    for language, group in sorted(by_language.items()):
        rows.append((f"**{language}**", mean_of(group)))
    rows.append(("**overall** (mean of repositories)", mean_of(results)))
    return table(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", action="append", default=[])
    parser.add_argument("--tasks", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--span", type=float, default=0.4, help="draw tasks from this newest share of history"
    )
    parser.add_argument("--json", default=None, help="write the results here")
    parser.add_argument(
        "--history", action="append", default=[], metavar="FIELD=VALUE", help="override a HistoryParams field"
    )
    parser.add_argument("--combine", nargs="*", default=None, help="result files to put in one table")
    args = parser.parse_args(argv)
    if args.combine:
        results = [r for f in args.combine for r in json.loads(Path(f).read_text(encoding="utf-8"))]
        print(combined_table(results))
        return 0
    if not args.repo:
        parser.error("--repo PATH is required (or --combine FILES)")
    results = []
    for path in args.repo:
        overrides = {k: float(v) for k, v in (item.split("=", 1) for item in args.history)}
        result = run_repository(path, args.tasks, args.seed, args.span, overrides)
        results.append(result)
        print(f"{result['repo']}: {result['tasks']} tasks in {result['wall_s']} s", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(combined_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
