"""A git repository's own history → Recall@5, Recall@10 and MRR of the ways to predict the rest of
a change from part of it (file level), and the rows the leave-one-repository-out fit reads.

Usage::

    python bench/cochange.py --repo PATH --out DIR [--tasks 40] [--seed 7] [--span 0.4]
                             [--prior PRIOR.json] [--tag run] [--force]
    python bench/cochange.py --combine DIR [--tag run]      # the tables, per repository and language
    python bench/cochange_loo.py DIR                         # priors by leave-one-repository-out

One repository per run (the machine is small): ``DIR/<name>.<tag>.json`` holds the results and
``DIR/<name>.<tag>.npz`` every task's candidate rows and the training rows the store held; a
repository whose JSON exists is skipped (``--force`` runs it again), so a long benchmark resumes.
``<name>`` is the clone's directory name.

Tasks come from the repository's first-parent history: a non-merge commit that modified
2–8 source files (files of a supported language that exist before and after the commit).
A seeded random half of them (rounded up) is the change; the rest is held out. Tasks are
drawn from the last ``--span`` of the first-parent chain; the store is indexed once at the
parent of the earliest task and moved forward incrementally (``index_commit(rev=parent)``),
so every method sees only the code and the history before the task's commit — the file model
too: the index fits it on the commits before the task (``index/filefit.py``), pulled towards
the prior (``--prior``: a JSON with ``prior``, ``regularization`` and ``objective``, written by
``bench/cochange_loo.py`` from the other repositories only).

Methods (input files never count as predictions):

- ``files``: the ranked file list of ``knowing-pr pr --files GIVEN`` (``rank/files.py``);
- ``symbols``: files in order of their first symbol in that PR pack (the pack follows the list);
- ``symbols-before``: the same pack with ``files.enabled`` off: the previous release's order (the
  walk's files fused with the co-change list);
- ``cochange``: files ranked by co-change confidence with the change (``cochange_neighbours``,
  min support 1, every file with history);
- ``cochange+dir``: the same, ties (files without co-change included) broken by same directory;
- ``cochange-src``: ``cochange`` restricted to files of a supported language;
- ``same-dir``: the other files of the changed files' directories, in a seeded random order;
- ``random``: every indexed file in a seeded random order.

Recall@k = held-out files among the first k / held-out files; MRR = 1 / rank of the first
held-out file (0 when none is ranked). Tables are means over tasks; ``--combine`` adds one row
per language and an overall row (mean over repositories).
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
from typing import Any

import numpy as np

from knowing_pr.config import Settings
from knowing_pr.git import GitRepo
from knowing_pr.history import HistoryState, cochange_neighbours
from knowing_pr.index import index_commit
from knowing_pr.index.filefit import MODEL_META, ROWS_PREFIX
from knowing_pr.model import Node
from knowing_pr.pack import PackSpec, build_pack
from knowing_pr.parse import language_for_path
from knowing_pr.rank import RankQuery, load_adjacency, rank_candidates, read_history_signals
from knowing_pr.rank.files import rank_files, with_file_weights
from knowing_pr.rank.seeds import ChangedFile, change_seeds
from knowing_pr.store import Store
from knowing_pr.store.history import load_history

METHODS = (
    "files",
    "symbols",
    "symbols-before",
    "cochange",
    "cochange+dir",
    "cochange-src",
    "same-dir",
    "random",
)
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


def pack_order(store: Store, settings: Settings, given: Sequence[str]) -> tuple[list[str], int]:
    """(files in order of their first symbol in the PR pack, the pack's tokens): the pack
    ``knowing-pr pr --files GIVEN`` builds (``pipeline.build_pr_pack``'s request), read the way
    a user reads it."""
    by_path: dict[str, list[Node]] = {}
    for node in store.nodes_in_paths(given):
        by_path.setdefault(node.path, []).append(node)
    paths = sorted(given)
    settings = with_file_weights(store, settings)
    seeds = change_seeds([ChangedFile(p) for p in paths], by_path, (), settings.rank)
    query = RankQuery(mode="pr", seeds=seeds, changed_paths=tuple(paths))
    history = read_history_signals(store, settings, paths, with_recency=True, with_cochange=True)
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


def cochange_rankings(
    history: HistoryState | None, given: Sequence[str], shuffled: Sequence[str]
) -> dict[str, list[str]]:
    """The baselines: co-change confidence; the same with a same-directory tie-break (the
    directory's other files after the co-changed ones, in ``shuffled``'s order); source files only."""
    rows = cochange_neighbours(history, given, 10_000, min_together=1) if history is not None else []
    plain = [path for path, *_ in rows]
    dirs = {_directory(p) for p in given}
    tie_broken = sorted(rows, key=lambda r: (-r[3], -r[1], _directory(r[0]) not in dirs, r[0]))
    with_dir = [path for path, *_ in tie_broken]
    listed = set(with_dir)
    with_dir += [p for p in shuffled if _directory(p) in dirs and p not in listed]
    source_only = [p for p in plain if language_for_path(p)]
    return {"cochange": plain, "cochange+dir": with_dir, "cochange-src": source_only}


def _directory(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def bench_settings(prior_file: str | None) -> Settings:
    settings = Settings()
    files = settings.files
    if prior_file:
        chosen = json.loads(Path(prior_file).read_text(encoding="utf-8"))
        files = dataclasses.replace(
            files,
            prior={str(k): float(v) for k, v in chosen["prior"].items()},
            regularization=float(chosen["regularization"]),
            objective=str(chosen["objective"]),
        )
    return dataclasses.replace(
        settings, index=dataclasses.replace(settings.index, isolate_parser=False), files=files
    )


def training_rows(store: Store) -> dict[str, bytes]:
    """sha → the stored rows of every training task the store holds now, oldest task first."""
    rows = store.conn.execute("SELECT name, tag, data FROM blobs WHERE name LIKE ?", (ROWS_PREFIX + "%",))
    ordered = sorted(rows, key=lambda row: (int(str(row[1]).rpartition(":")[2] or 0), str(row[0])))
    return {str(name)[len(ROWS_PREFIX) :]: bytes(data) for name, _, data in ordered}


def run_repository(
    path: str, tasks: int, seed: int, span: float, prior_file: str | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(results, arrays) of one repository."""
    from knowing_pr.index.filefit import _decode  # the stored rows' layout

    repo = GitRepo.open(path)
    settings = bench_settings(prior_file)
    before = dataclasses.replace(settings, files=dataclasses.replace(settings.files, enabled=False))
    started = time.perf_counter()
    drawn = draw_tasks(repo, settings, tasks, seed, span)
    scores = {m: Scores() for m in METHODS}
    languages: Counter[str] = Counter()
    arrays: dict[str, Any] = {}
    details: list[dict[str, Any]] = []
    seen_rows: set[str] = set()
    timings: dict[str, float] = {"index": 0.0, "files": 0.0, "packs": 0.0}
    pack_tokens: list[int] = []
    list_sizes: list[int] = []
    with tempfile.TemporaryDirectory(prefix="kpr-bench-") as tmp:
        db = Path(tmp) / "index.sqlite"
        for task in drawn:
            if len(details) >= tasks:
                break
            t0 = time.perf_counter()
            index_commit(repo, settings, rev=task.parent, db_path=db)
            timings["index"] += time.perf_counter() - t0
            with Store.open(db) as store:
                indexed = {p for p, f in store.files().items() if f.status == "indexed"}
                files = [p for p in task.files if p in indexed]
                if len(files) < MIN_FILES:
                    continue
                given, held = split_task(Task(task.commit, task.parent, tuple(files)), seed)
                t0 = time.perf_counter()
                pinned = with_file_weights(store, settings)
                state = load_history(store)
                ranked = rank_files(store, load_adjacency(store), pinned, given)
                timings["files"] += time.perf_counter() - t0
                t0 = time.perf_counter()
                symbols, tokens = pack_order(store, settings, given)
                symbols_before, tokens_before = pack_order(store, before, given)
                timings["packs"] += time.perf_counter() - t0
                pack_tokens.extend((tokens, tokens_before))
                list_sizes.append(len(ranked.files))
                rng = random.Random(f"{seed}:{task.commit}:order")
                everything = sorted(indexed - set(given))
                rng.shuffle(everything)
                dirs = {_directory(p) for p in given}
                rankings = {
                    "files": [p for p, _ in ranked.order],
                    "symbols": symbols,
                    "symbols-before": symbols_before,
                    **cochange_rankings(state, given, everything),
                    "same-dir": [p for p in everything if _directory(p) in dirs],
                    "random": everything,
                }
                for method, ranking in rankings.items():
                    scores[method].add(ranking, held)
                number = len(details)
                arrays[f"task{number}_values"] = ranked.rows.values.astype(np.float32)
                arrays[f"task{number}_held"] = np.array([p in held for p in ranked.rows.paths], dtype=bool)
                stored = training_rows(store)
                for sha, data in stored.items():
                    if sha not in seen_rows:
                        seen_rows.add(sha)
                        rows = _decode(data)
                        arrays[f"train_{sha}_values"] = rows.values.astype(np.float32)
                        arrays[f"train_{sha}_held"] = rows.held
                model = json.loads(store.get_meta(MODEL_META) or "{}")
                details.append(
                    {
                        "commit": task.commit,
                        "given": given,
                        "held": sorted(held),
                        "candidates": list(ranked.rows.paths),
                        "training": list(stored),
                        "weights": model.get("weights", {}),
                        "fitted_tasks": model.get("tasks", 0),
                        "ranks": {m: _ranks(r, held) for m, r in rankings.items() if m != "random"},
                    }
                )
                languages.update(f.language or "" for f in store.files().values() if f.status == "indexed")
    results = {
        "repo": Path(path).name,
        "language": languages.most_common(1)[0][0] if languages else "",
        "tasks": len(details),
        "seed": seed,
        "span": span,
        "prior_file": Path(prior_file).name if prior_file else None,
        "wall_s": round(time.perf_counter() - started, 1),
        "timings_s": {k: round(v, 1) for k, v in timings.items()},
        "max_pack_tokens": max(pack_tokens, default=0),
        "budget_tokens": settings.pack.budget_tokens,
        "min_list": min(list_sizes, default=0),
        "methods": {m: {k: round(v, 4) for k, v in s.means().items()} for m, s in scores.items()},
        "details": details,
    }
    return results, arrays


def _ranks(ranking: Sequence[str], held: set[str]) -> list[int]:
    """1-based ranks of the held-out files (0: not ranked)."""
    position = {p: i for i, p in enumerate(ranking, 1)}
    return [position.get(p, 0) for p in sorted(held)]


# -- tables --------------------------------------------------------------------------------------


def table(rows: Sequence[tuple[str, dict[str, dict[str, float]]]], methods: Sequence[str]) -> str:
    head = "| | " + " | ".join(f"{m} R@5 / R@10 / MRR" for m in methods) + " |"
    lines = [head, "|" + "---|" * (len(methods) + 1)]
    for label, values in rows:
        cells = [
            f"{values[m]['recall5']:.3f} / {values[m]['recall10']:.3f} / {values[m]['mrr']:.3f}"
            if m in values
            else "–"
            for m in methods
        ]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def mean_of(results: Sequence[dict[str, Any]], methods: Sequence[str]) -> dict[str, dict[str, float]]:
    return {
        m: {
            key: sum(r["methods"][m][key] for r in results) / len(results)
            for key in ("recall5", "recall10", "mrr")
        }
        for m in methods
        if all(m in r["methods"] for r in results)
    }


def combined_table(results: Sequence[dict[str, Any]], methods: Sequence[str] = METHODS) -> str:
    rows: list[tuple[str, dict[str, dict[str, float]]]] = []
    for r in sorted(results, key=lambda r: (r["language"], r["repo"])):
        rows.append((f"{r['repo']} ({r['language']}, {r['tasks']} tasks)", r["methods"]))
    by_language: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_language.setdefault(str(r["language"]), []).append(r)
    for language, group in sorted(by_language.items()):
        rows.append((f"**{language}** ({len(group)})", mean_of(group, methods)))
    rows.append((f"**overall** (mean of {len(results)} repositories)", mean_of(results, methods)))
    return table(rows, methods)


def load_results(directory: Path, tag: str) -> list[dict[str, Any]]:
    return [json.loads(file.read_text(encoding="utf-8")) for file in sorted(directory.glob(f"*.{tag}.json"))]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", action="append", default=[])
    parser.add_argument("--out", default=None, help="directory for <repo>[.TAG].json and .npz")
    parser.add_argument(
        "--tag", default="run", help="the result files are <repo>.TAG.json and <repo>.TAG.npz"
    )
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--span", type=float, default=0.4, help="draw tasks from this newest share of history"
    )
    parser.add_argument(
        "--prior", default=None, help="JSON with the file model's prior (bench/cochange_loo.py)"
    )
    parser.add_argument("--force", action="store_true", help="run a repository whose results exist")
    parser.add_argument("--combine", default=None, help="a --out directory: print its tables")
    args = parser.parse_args(argv)
    if args.combine:
        print(combined_table(load_results(Path(args.combine), args.tag)))
        return 0
    if not args.repo or not args.out:
        parser.error("--repo PATH and --out DIR are required (or --combine DIR)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for path in args.repo:
        name = Path(path).name
        stem = f"{name}.{args.tag}"
        target = out / f"{stem}.json"
        if target.exists() and not args.force:
            print(f"{name}: {target} exists, skipped", file=sys.stderr)
            continue
        results, arrays = run_repository(path, args.tasks, args.seed, args.span, args.prior)
        np.savez_compressed(out / f"{stem}.npz", **arrays)
        target.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
        print(f"{name}: {results['tasks']} tasks in {results['wall_s']} s", file=sys.stderr)
        print(combined_table([results]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
