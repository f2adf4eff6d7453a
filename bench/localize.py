"""Issue reports → the files their fix changed: file-level Acc@1/@3/@5/@10 and MRR of
``knowing-pr task``'s ranked file list against plain BM25 over whole files, in the same run.

Usage::

    python bench/localize.py --tasks <tasks.jsonl> --clone jinja=<clone> ... \\
        --stores <stores dir> [--reports <reports.jsonl>] [--json out.json]

The tasks come from ``bench/get_localize_data.py`` (one JSON line a task: repo, anchor, sha,
text, files); with ``--reports`` (``bench/get_issue_reports.py``) only the tasks whose fix closed
an issue are scored, on the issue's title and description instead of the commit message, one task
a report (the development set issue 28 asks for). Each repository is indexed once at its
anchor commit (kept in ``--stores``). For every task the channels of the file list are computed once (``task.files.file_channels`` on
the real analysis and symbol ranking, as ``task`` does) and fused under every combination of
``GRID``; each repository is scored with the combination that is best (mean MRR, then Acc@1)
on the *other* repositories' tasks: leave one repository out, no repository scored with
settings chosen on its own tasks. ``task (all)`` is the combination best on all of them (the
shipped defaults; in-sample). ``no commits (LOO)``: the same protocol over the combinations
without the past-commits channel (``files_weight_commits`` 0); ``commits by text (LOO)``: over
those whose commits channel asks the subjects for the whole text, not the title
(``files_commits_title`` off); ``no title (LOO)``: over those without the title channel
(``files_weight_title`` 0): the ablations. Before scoring,
each task's fix commit is checked to be absent from its store's mined commits (no leakage).

Acc@k: the share of tasks with a file of their answer among the first k; MRR: the mean of
1 / the rank of the first. ``bm25`` is plain BM25 over whole files (``store.filewords``, path
and text words alike) for every word of the text, stop words left out: no parts, no fusion,
no demotion.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from get_localize_data import HELD_OUT

from knowing_pr.config import Settings, TaskParams
from knowing_pr.git import GitRepo
from knowing_pr.graph import is_test_path
from knowing_pr.index import index_commit
from knowing_pr.pipeline.task import symbol_paths, task_query
from knowing_pr.rank import load_adjacency, rank_candidates, read_history_signals
from knowing_pr.rank.task_files import CHANNELS, FileChannels, is_vendored, rank_task_files
from knowing_pr.store import Store
from knowing_pr.store.filewords import search_file_words
from knowing_pr.store.opening import open_store
from knowing_pr.task import analyse_task
from knowing_pr.task.files import file_channels
from knowing_pr.task.parts import file_query, text_words

KS = (1, 3, 5, 10)
#: the settings searched (each a TaskParams field → values)
GRID: dict[str, tuple[Any, ...]] = {
    "files_weight_names": (0.0, 0.5),
    "files_weight_named": (1.0, 2.0),
    "files_weight_symbols": (0.25, 0.5, 1.0),
    "files_weight_seeds": (0.0, 0.5),
    "files_weight_defs": (0.0, 0.5, 1.0, 2.0),
    # the graph channels rerank the lexical top, never add a file no word reaches (issue 28): no 0
    "files_graph_depth": (50,),
    "files_demote_tests_always": (True,),
    "files_rrf_k": (3,),
    "files_path_weight": (3.0,),
    "files_place_factor": (0.05,),
    "files_history_prior": (0.0, 0.5, 1.0, 2.0),
    "files_weight_commits": (0.0, 1.0, 2.0),
    "files_commits_title": (False, True),
    "files_weight_title": (0.0, 0.5, 1.0, 2.0),
}
#: the settings each task's channels depend on (computed once per value)
CHANNEL_KEYS = ("files_path_weight", "files_commits_title")
#: the ablation rows: the same protocol over the combinations that pass
ABLATIONS: dict[str, Callable[[TaskParams], bool]] = {
    "no commits (LOO)": lambda p: p.files_weight_commits == 0,
    "commits by text (LOO)": lambda p: not p.files_commits_title,
    "no title (LOO)": lambda p: p.files_weight_title == 0,
}


@dataclasses.dataclass
class Case:
    repo: str
    text: str
    answer: frozenset[str]
    bm25: list[str]
    #: (path weight, commits by title) → the task's channels
    channels: dict[tuple[Any, ...], FileChannels]
    #: vendored or generated files among the channels' (always demoted unless named)
    demoted: frozenset[str]
    #: test files among the channels'
    tests: frozenset[str]
    about_tests: bool


def scores(ranking: Sequence[str], answer: frozenset[str]) -> tuple[float, ...]:
    first = next((i for i, path in enumerate(ranking, 1) if path in answer), None)
    hits = tuple(float(first is not None and first <= k) for k in KS)
    return (*hits, 1.0 / first if first else 0.0)


def summary(rows: Sequence[tuple[float, ...]]) -> dict[str, float]:
    names = [*(f"acc@{k}" for k in KS), "mrr"]
    return {
        name: round(statistics.fmean(r[i] for r in rows), 3) if rows else 0.0 for i, name in enumerate(names)
    }


def load_tasks(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def with_reports(tasks: Sequence[dict[str, Any]], reports: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One task for each issue report of a task's fix (a fix that closed two issues is two
    tasks with one answer), its text the report (title, blank line, description) instead of
    the commit message; tasks with no report are left out."""
    by_sha: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for report in reports:
        by_sha[(report["repo"], report["sha"])].append(report)
    out: list[dict[str, Any]] = []
    for task in tasks:
        for report in by_sha.get((task["repo"], task["sha"]), []):
            out.append({**task, "text": f"{report['title']}\n\n{report['body']}".strip()})
    return out


def open_index(name: str, clone: Path, anchor: str, stores: Path, settings: Settings) -> Store:
    db = stores / f"{name}-{anchor[:12]}.sqlite"
    if not db.exists():
        t0 = time.perf_counter()
        index_commit(GitRepo.open(clone), settings, rev=anchor, db_path=db)
        print(f"{name}: indexed at {anchor[:12]} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    store, _ = open_store(db)
    return store


@dataclasses.dataclass(frozen=True)
class RepositoryTasks:
    """One repository's tasks at one anchor, with its store (open while the caller reads it)."""

    name: str
    tasks: list[dict[str, Any]]
    store: Store
    adjacency: Any
    history: Any
    indexed: set[str]


def repository_tasks(
    tasks: Sequence[dict[str, Any]], clones: dict[str, Path], stores: Path, settings: Settings
) -> Iterator[RepositoryTasks]:
    """The tasks grouped by repository and anchor, each group with its store indexed at the anchor
    (closed when the caller moves on to the next group); a fix found in its store's history (the
    answer leaked into what the task is asked of) stops the bench."""
    held = sorted({t["repo"] for t in tasks if t["repo"].lower() in HELD_OUT})
    if held:  # kept for held-out evaluation: never scored in a bench that chooses settings
        raise SystemExit(f"held-out repositories in the tasks: {', '.join(held)}")
    by_repo: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for task in tasks:
        by_repo[(task["repo"], task["anchor"])].append(task)
    for (name, anchor), group in by_repo.items():
        store = open_index(name, clones[name], anchor, stores, settings)
        try:
            adjacency = load_adjacency(store)
            history = read_history_signals(store, settings)
            indexed = {p for p, row in store.files().items() if row.status == "indexed"}
            mined = {str(r[0]) for r in store.conn.execute("SELECT sha FROM hist_commits")}
            print(f"{name}: {len(mined)} past commits in the store", file=sys.stderr)
            for task in group:  # the answer must not be in the history the task is asked of
                if task["sha"] in mined:
                    raise SystemExit(f"{name}: the fix {task['sha'][:12]} is in the store's history (leak)")
            yield RepositoryTasks(name, group, store, adjacency, history, indexed)
        finally:
            store.close()


def build_cases(tasks: Sequence[dict[str, Any]], clones: dict[str, Path], stores: Path) -> list[Case]:
    settings = Settings()
    cases: list[Case] = []
    for repository in repository_tasks(tasks, clones, stores, settings):
        name, group, store = repository.name, repository.tasks, repository.store
        adjacency, history, indexed = repository.adjacency, repository.history, repository.indexed
        generated = {r[0] for r in store.conn.execute("SELECT path FROM file_sketches WHERE generated = 1")}
        for task in group:
            answer = frozenset(task["files"]) & indexed
            if not answer:
                continue
            text = task["text"]
            plain = [
                p
                for p, _ in search_file_words(
                    store.conn, file_query(text_words(text)), limit=100, path_weight=1.0
                )
            ]
            analysis = analyse_task(store, settings, text)
            ranking = rank_candidates(store, adjacency, settings, task_query(analysis, settings), history)
            paths = symbol_paths(ranking)
            channels = {
                values: file_channels(
                    store,
                    analysis,
                    paths,
                    # every channel computed (a weight of 0 leaves its list empty in ``task``)
                    dataclasses.replace(
                        settings.task,
                        files_weight_title=1.0,
                        files_weight_commits=1.0,
                        **dict(zip(CHANNEL_KEYS, values, strict=True)),
                    ),
                )
                for values in itertools.product(*(GRID[k] for k in CHANNEL_KEYS))
            }
            every = {p for c in channels.values() for ch in CHANNELS for p in c.of(ch)}
            demoted = frozenset(
                p for p in every if p in generated or is_vendored(p, settings.task.vendored_segments)
            )
            tests = frozenset(p for p in every if is_test_path(p))
            cases.append(Case(name, text, answer, plain, channels, demoted, tests, analysis.about_tests))
    return cases


def task_order(case: Case, params: TaskParams) -> list[str]:
    tests_kept = case.about_tests and not params.files_demote_tests_always

    def demote(path: str) -> bool:
        return path in case.demoted or (not tests_kept and path in case.tests)

    key = tuple(getattr(params, k) for k in CHANNEL_KEYS)
    files = rank_task_files(case.channels[key], params, demote, limit=max(KS))
    return [f.path for f in files]


def combinations() -> list[TaskParams]:
    keys = list(GRID)
    return [
        TaskParams(**dict(zip(keys, values, strict=True))) for values in itertools.product(*GRID.values())
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tasks", type=Path, required=True)
    parser.add_argument("--clone", action="append", default=[], metavar="NAME=PATH", required=True)
    parser.add_argument("--stores", type=Path, required=True)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--reports", type=Path, help="issue reports (bench/get_issue_reports.py): score those tasks on them"
    )
    args = parser.parse_args(argv)
    clones = {n: Path(p) for n, _, p in (c.partition("=") for c in args.clone)}
    tasks = [t for t in load_tasks(args.tasks) if t["repo"] in clones]
    if args.reports is not None:
        tasks = with_reports(tasks, load_tasks(args.reports))
    args.stores.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    cases = build_cases(tasks, clones, args.stores)
    print(f"{len(cases)} tasks ready in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    repos = sorted({c.repo for c in cases})
    grid = combinations()
    # per combination, per task: the scores (computed once, read by every fold)
    table = [[scores(task_order(case, params), case.answer) for case in cases] for params in grid]

    def objective(index: int, keep: set[str]) -> tuple[float, float]:
        rows = [r for r, case in zip(table[index], cases, strict=True) if case.repo in keep]
        if not rows:  # a fold with nothing to learn from (one repository): every choice ties
            return (0.0, 0.0)
        return (statistics.fmean(r[4] for r in rows), statistics.fmean(r[0] for r in rows))

    chosen: dict[str, int] = {}
    ablated: dict[str, dict[str, int]] = {name: {} for name in ABLATIONS}
    for repo in repos:
        others = set(repos) - {repo}
        chosen[repo] = max(range(len(grid)), key=lambda i: (objective(i, others), -i))
        for name, keep in ABLATIONS.items():
            subset = [i for i, p in enumerate(grid) if keep(p)]
            ablated[name][repo] = max(subset, key=lambda i: (objective(i, others), -i))
    best_all = max(range(len(grid)), key=lambda i: (objective(i, set(repos)), -i))
    default_index = next(
        (i for i, p in enumerate(grid) if all(getattr(p, k) == getattr(TaskParams(), k) for k in GRID)), None
    )

    report: dict[str, Any] = {
        "tasks": len(cases),
        "repos": {},
        "chosen": {},
        "grid": {k: list(v) for k, v in GRID.items()},
    }
    pooled: dict[str, list[tuple[float, ...]]] = defaultdict(list)
    for repo in repos:
        mine = [i for i, c in enumerate(cases) if c.repo == repo]
        rows = {
            "bm25": [scores(cases[i].bm25, cases[i].answer) for i in mine],
            "task (LOO)": [table[chosen[repo]][i] for i in mine],
            "task (all)": [table[best_all][i] for i in mine],
            **{name: [table[ablated[name][repo]][i] for i in mine] for name in ABLATIONS},
        }
        if default_index is not None:
            rows["task (shipped)"] = [table[default_index][i] for i in mine]
        for name, values in rows.items():
            pooled[name].extend(values)
        report["repos"][repo] = {"tasks": len(mine), **{n: summary(v) for n, v in rows.items()}}
        report["chosen"][repo] = {k: getattr(grid[chosen[repo]], k) for k in GRID}
    report["chosen"]["all"] = {k: getattr(grid[best_all], k) for k in GRID}
    report["pooled"] = {n: summary(v) for n, v in pooled.items()}
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    print("| repository | tasks | ranking | Acc@1 | Acc@3 | Acc@5 | Acc@10 | MRR |")
    print("|---|---|---|---|---|---|---|---|")
    for repo, entry in [*report["repos"].items(), ("**pooled**", {"tasks": len(cases), **report["pooled"]})]:
        for name in ("bm25", "task (LOO)", *ABLATIONS, "task (all)", "task (shipped)"):
            if name not in entry:
                continue
            m = entry[name]
            print(
                f"| {repo} | {entry['tasks']} | {name} | {m['acc@1']:.3f} | {m['acc@3']:.3f} | {m['acc@5']:.3f}"
                f" | {m['acc@10']:.3f} | {m['mrr']:.3f} |"
            )
    print(json.dumps(report["chosen"], indent=1), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
