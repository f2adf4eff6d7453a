"""A repository's own history → how often a suggested reviewer is someone who changed the same
files soon after (issue 31), for knowing-pr's suggestion, CODEOWNERS alone and the most frequent
author of the files, in the same run.

Usage:
    python bench/reviewers.py REPO_DIR [REPO_DIR ...] [--tasks 150] [--json OUT] [--config YML]
        [--grid half_life_days=30,90,180,365,720,1440 weight_lines=0,1 weight_file=0.25,0.5,1]

Tasks: commits of the first-parent line of HEAD, evenly spaced among those at least 90 days older
than the newest commit and with at least 200 commits before them. A commit that merged a pull
request ("Merge pull request #N", its change = the merge base → the second parent, as GitHub
shows it) or landed one ("… (#N)" squashed or rebased, its change = its first parent → it) is a
PR task; any other commit a plain task (its change against its first parent). The change's own
authors are the authors of its commits (base..head).

Truth: the people who are not the change's own authors nor bots and authored a commit (not a
merge) that changed one of the change's files within 90 days after it landed. A task without
anyone there is skipped (no suggestion can be right): the tables count the tasks kept.
A method is right on a task when one of its first three names is in the truth.

Methods:
- ``knowing-pr``: what ``pr`` suggests with the default ``ReviewerParams``
  (``pipeline.reviewers.reviewer_evidence`` then ``score_evidence``): blame at the base of the changed symbols (base definitions parsed as ``pr`` parses them), the
  800 newest commits before the change as the index keeps them (paths of commits over
  ``history.max_files_per_commit`` files dropped), CODEOWNERS of the base; no callers (the bench
  builds no index);
- ``codeowners``: the owners of the changed files at the base (most files owned first), only on
  repositories with a CODEOWNERS file; a handle matches a person whose GitHub noreply login, the
  local part of whose address, or whose name without spaces is the handle (case-insensitive), a
  team matches nobody (its members are not in git);
- ``frequent``: the authors of the most commits that changed the change's files before it (all
  history), ties to the most recent; the change's own authors and bots left out.

Settings are chosen by leave-one-repository-out, never on what they are scored on: each task's
evidence (blame, commits, authors, CODEOWNERS: ``pipeline.reviewers.reviewer_evidence``) is
gathered once with the default gathering limits and scored again under every setting of the
grid (the product of ``--grid``'s values of the scoring fields ``SCORING_FIELDS``; default
``DEFAULT_GRID``). For each repository held out, the setting with the most hits pooled over the
other repositories' tasks (ties: the earlier in grid order) is scored on the held-out one; the
pooled LOO figure sums those. The setting chosen on all the repositories is the one to make the
default. Every setting's pooled figure is printed too (in-sample: for reading, not choosing).

The table also gives the time the suggestion took per task (blame, authors, one scoring; the
parse of the base definitions, which ``pr`` does anyway, not counted). Heavy: run as ``flock <lockfile> nice -n 10 python bench/reviewers.py …``.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from knowing_pr.config import Settings, load_settings
from knowing_pr.git import CommitInfo, GitRepo
from knowing_pr.history import landing_order
from knowing_pr.history.codeowners import CodeOwners
from knowing_pr.history.reviewers import github_login, is_bot, person_key
from knowing_pr.pipeline.basedefs import start_base_definitions
from knowing_pr.pipeline.reviewers import base_files, reviewer_evidence, score_evidence

DAY_S = 86_400
WINDOW_S = 90 * DAY_S
MIN_BEFORE = 200
TOP = 3
_PR_MERGE = re.compile(r"^Merge pull request #\d+")
_PR_SQUASH = re.compile(r"\(#\d+\)\s*$")
METHODS = ("knowing-pr", "codeowners", "frequent")
#: the ``ReviewerParams`` fields that only score the evidence (a grid may vary these alone)
SCORING_FIELDS = ("half_life_days", "weight_lines", "weight_file", "weight_caller", "weight_owner")
DEFAULT_GRID = (
    "half_life_days=30,90,180,365,720,1440",
    "weight_lines=0,1",
    "weight_file=0.25,0.5,1",
)
_SHORT = {
    "half_life_days": "hl",
    "weight_lines": "lines",
    "weight_file": "file",
    "weight_caller": "caller",
    "weight_owner": "owner",
}
Setting = dict[str, Any]


def parse_grid(specs: Sequence[str]) -> list[Setting]:
    """``NAME=V1,V2,…`` per scoring field → every combination, in order (the last field fastest)."""
    axes: list[tuple[str, list[float]]] = []
    for spec in specs:
        name, _, values = spec.partition("=")
        if name not in SCORING_FIELDS:
            raise SystemExit(f"--grid: {name!r} is not one of {', '.join(SCORING_FIELDS)}")
        try:
            axes.append((name, [float(v) for v in values.split(",") if v.strip()]))
        except ValueError:
            raise SystemExit(f"--grid: {spec!r} needs numbers, as in half_life_days=90,720") from None
        if not axes[-1][1]:
            raise SystemExit(f"--grid: {spec!r} gives no value")
    return [
        dict(zip([n for n, _ in axes], combo, strict=True))
        for combo in itertools.product(*(v for _, v in axes))
    ]


def label(setting: Setting) -> str:
    return " ".join(f"{_SHORT[k]}={v:g}" for k, v in setting.items())


def choose(results: Sequence[dict[str, Any]], held_out: str | None, width: int) -> tuple[int, int, int]:
    """The grid index with the most hits over the tasks of every repository but ``held_out``
    (ties: the earlier), with its hits and the tasks counted."""
    rows = [t for r in results if r["repository"] != held_out for t in r["tasks"]]
    hits = [sum(t["grid"][i] for t in rows) for i in range(width)]
    best = max(range(width), key=lambda i: (hits[i], -i))
    return best, hits[best], len(rows)


def leave_one_out(results: Sequence[dict[str, Any]], width: int) -> list[dict[str, Any]]:
    """Per repository held out: the setting chosen on the others, and its hits on the held-out one."""
    out = []
    for result in results:
        index, train_hits, train_tasks = choose(results, result["repository"], width)
        rows = result["tasks"]
        out.append(
            {
                "repository": result["repository"],
                "chosen": index,
                "train": (train_hits, train_tasks),
                "held_out": (sum(t["grid"][index] for t in rows), len(rows)),
            }
        )
    return out


@dataclass
class Task:
    sha: str
    base: str
    head: str
    time: int
    pr: bool
    own: set[str] = field(default_factory=set)


@dataclass
class Person:
    key: str
    name: str
    bot: bool


def people_of(
    repo: pygit2.Repository, shas: Sequence[str], mailmap: pygit2.Mailmap | None
) -> dict[str, Person]:
    out: dict[str, Person] = {}
    for sha in shas:
        commit = repo[sha]
        name, email = commit.author.name, commit.author.email
        if mailmap is not None:
            name, email = mailmap.resolve(name, email)
        out[sha] = Person(person_key(name, email), name, is_bot(name, email))
    return out


def pick_tasks(
    raw: pygit2.Repository, head: str, count: int, newest: int, order: dict[str, int]
) -> list[Task]:
    chain: list[pygit2.Commit] = []
    commit = raw[head]
    while commit.parents:
        chain.append(commit)
        commit = commit.parents[0]
    eligible = [
        c for c in chain if c.commit_time <= newest - WINDOW_S and order.get(str(c.id), 0) >= MIN_BEFORE
    ]
    if not eligible:
        return []
    step = max(len(eligible) / count, 1.0)
    chosen = [eligible[int(i * step)] for i in range(min(count, len(eligible)))]
    tasks = []
    for c in chosen:
        subject = c.message.split("\n", 1)[0]
        if len(c.parents) > 1:
            base_oid = raw.merge_base(c.parents[0].id, c.parents[1].id)
            if base_oid is None:
                continue
            tasks.append(
                Task(
                    str(c.id),
                    str(base_oid),
                    str(c.parents[1].id),
                    c.commit_time,
                    bool(_PR_MERGE.match(subject)),
                )
            )
        else:
            tasks.append(
                Task(
                    str(c.id),
                    str(c.parents[0].id),
                    str(c.id),
                    c.commit_time,
                    bool(_PR_SQUASH.search(subject)),
                )
            )
    return tasks


def own_commits(raw: pygit2.Repository, base: str, head: str, limit: int = 500) -> list[str]:
    walker = raw.walk(raw[head].id, pygit2.enums.SortMode.TOPOLOGICAL)
    walker.hide(raw[base].id)
    out = []
    for commit in walker:
        out.append(str(commit.id))
        if len(out) >= limit:
            break
    return out


def handle_matches(handle: str, truth: dict[str, Person]) -> bool:
    wanted = handle.lower().removeprefix("@")
    if "/" in wanted:
        return False  # a team: its members are not in git
    for key, person in truth.items():
        local = key.split("@", 1)[0]
        if wanted in (key, local, github_login(key) or "", "".join(person.name.split()).lower()):
            return True
    return False


def hit(suggested: Sequence[str], truth: dict[str, Person]) -> bool:
    return any(
        key in truth or (key.startswith("@") and handle_matches(key, truth)) for key in suggested[:TOP]
    )


def run_repository(
    path: str, tasks_wanted: int, *, max_commits: int, settings: Settings, grid: Sequence[Setting] = ()
) -> dict[str, Any]:
    started = time.monotonic()
    repo = GitRepo.open(path)
    raw = pygit2.Repository(repo.git_dir)
    head = repo.head_commit()
    assert head is not None
    walked = repo.history_commits(head, max_commits=max_commits)
    commits: list[CommitInfo] = landing_order(walked, head)
    position = {c.sha: i for i, c in enumerate(commits)}
    found = base_files(repo, head)
    mailmap = pygit2.Mailmap.from_buffer(found.mailmap.decode("utf-8", "replace")) if found.mailmap else None
    people = people_of(raw, [c.sha for c in commits], mailmap)
    newest = max(c.time for c in commits)
    history_max = settings.history.max_files_per_commit
    tasks = pick_tasks(raw, head, tasks_wanted, newest, position)
    rows: list[dict[str, Any]] = []
    for task in tasks:
        own = set(own_commits(raw, task.base, task.head))
        own_keys = {people[s].key for s in own if s in people}
        diffs = repo.diff_hunks(task.base, task.head)
        changed = {p for d in diffs for p in (d.new_path or d.old_path,) if p}
        if not changed:
            continue
        landed = position.get(task.sha, len(commits))
        later = [
            c
            for c in commits[landed + 1 :]
            if task.time < c.time <= task.time + WINDOW_S and not c.is_merge and c.sha in people
        ]
        truth = {
            people[c.sha].key: people[c.sha]
            for c in later
            if not people[c.sha].bot
            and people[c.sha].key not in own_keys
            and any(n in changed for _, _, n in c.changes)
        }
        if not truth:
            continue
        before = [c for c in commits[:landed] if c.sha not in own and not c.is_merge]
        history = [
            (
                c.sha,
                c.time,
                tuple(sorted({n for _, _, n in c.changes if n})) if len(c.changes) <= history_max else (),
            )
            for c in reversed(before[-settings.reviewers.max_history_commits :])
        ]
        base_defs = start_base_definitions(repo, settings, task.base, diffs)()
        suggesting = time.monotonic()
        evidence = reviewer_evidence(
            repo,
            settings.reviewers,
            base=task.base,
            head=task.head,
            diffs=diffs,
            base_defs=base_defs,
            history=history,
            not_blamed=settings.index.is_excluded,
        )
        ours = score_evidence(evidence, settings.reviewers)
        spent_ms = (time.monotonic() - suggesting) * 1000
        rescored = [
            score_evidence(evidence, dataclasses.replace(settings.reviewers, **setting)) for setting in grid
        ]
        owners = base_files(repo, task.base).owners
        row = {
            "ms": round(spent_ms, 1),
            "sha": task.sha,
            "pr": task.pr,
            "truth": len(truth),
            "knowing-pr": hit([r.key for r in ours], truth),
            "grid": [hit([r.key for r in found], truth) for found in rescored],
            "frequent": hit(frequent_authors(before, people, changed, own_keys), truth),
        }
        if owners is not None:
            row["codeowners"] = hit(owner_handles(owners, changed, own_keys), truth)
        rows.append(row)
    return {
        "repository": Path(path).name,
        "commits": len(commits),
        "tasks": rows,
        "seconds": round(time.monotonic() - started, 1),
    }


def frequent_authors(
    before: Sequence[CommitInfo], people: dict[str, Person], changed: set[str], own: set[str]
) -> list[str]:
    counts: Counter[str] = Counter()
    last: dict[str, int] = {}
    for c in before:
        person = people.get(c.sha)
        if person is None or person.bot or person.key in own:
            continue
        if any(n in changed for _, _, n in c.changes):
            counts[person.key] += 1
            last[person.key] = max(last.get(person.key, 0), c.time)
    return sorted(counts, key=lambda k: (-counts[k], -last[k], k))[:TOP]


def owner_handles(owners: CodeOwners, changed: set[str], own: set[str]) -> list[str]:
    counts: Counter[str] = Counter()
    for path in sorted(changed):
        for owner in owners.owners_of(path):
            if owner.lower() not in own:
                counts[owner.lower()] += 1
    return sorted(counts, key=lambda k: (-counts[k], k))[:TOP]


def table(results: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| repository | tasks (PR) | knowing-pr | CODEOWNERS alone | most frequent author | suggestion ms p50 / max | s |",
        "|---|---|---|---|---|---|---|",
    ]
    pooled: dict[str, list[bool]] = {m: [] for m in METHODS}
    for result in results:
        rows = result["tasks"]
        cells = []
        for method in METHODS:
            values = [bool(r[method]) for r in rows if method in r]
            pooled[method].extend(values)
            cells.append(_rate(values))
        prs = sum(r["pr"] for r in rows)
        spent = sorted(r["ms"] for r in rows) or [0.0]
        timing = f"{spent[len(spent) // 2]:.0f} / {spent[-1]:.0f}"
        lines.append(
            f"| {result['repository']} | {len(rows)} ({prs}) | {' | '.join(cells)} | {timing} | {result['seconds']} |"
        )
    total = sum(len(r["tasks"]) for r in results)
    prs = sum(t["pr"] for r in results for t in r["tasks"])
    lines.append(f"| pooled | {total} ({prs}) | {' | '.join(_rate(pooled[m]) for m in METHODS)} | | |")
    return "\n".join(lines)


def grid_tables(results: Sequence[dict[str, Any]], grid: Sequence[Setting]) -> str:
    """Leave-one-repository-out per held-out repository (with the default and the baselines of
    the same tasks), then every setting's pooled figure."""
    lines = [
        "| held out | chosen on the others | on the others | held out: chosen | default | CODEOWNERS alone | most frequent author |",
        "|---|---|---|---|---|---|---|",
    ]
    folds = leave_one_out(results, len(grid))
    for fold, result in zip(folds, results, strict=True):
        rows = result["tasks"]
        train_hits, train_tasks = fold["train"]
        held_hits, held_tasks = fold["held_out"]
        lines.append(
            f"| {fold['repository']} | {label(grid[fold['chosen']])} | {_fraction(train_hits, train_tasks)} "
            f"| {_fraction(held_hits, held_tasks)} | {_rate([bool(r['knowing-pr']) for r in rows])} "
            f"| {_rate([bool(r['codeowners']) for r in rows if 'codeowners' in r])} "
            f"| {_rate([bool(r['frequent']) for r in rows])} |"
        )
    every = [t for r in results for t in r["tasks"]]
    loo_hits = sum(f["held_out"][0] for f in folds)
    lines.append(
        f"| pooled | | | {_fraction(loo_hits, len(every))} | {_rate([bool(t['knowing-pr']) for t in every])} "
        f"| {_rate([bool(t['codeowners']) for t in every if 'codeowners' in t])} "
        f"| {_rate([bool(t['frequent']) for t in every])} |"
    )
    index, hits, tasks = choose(results, None, len(grid))
    lines += [
        "",
        f"Chosen on all {len(results)} repositories: {label(grid[index])} ({_fraction(hits, tasks)}).",
        "",
        "| setting | pooled (in-sample) | " + " | ".join(r["repository"] for r in results) + " |",
        "|---|---|" + "---|" * len(results),
    ]
    for i, setting in enumerate(grid):
        per_repo = [_rate([bool(t["grid"][i]) for t in r["tasks"]]) for r in results]
        lines.append(
            f"| {label(setting)} | {_rate([bool(t['grid'][i]) for t in every])} | {' | '.join(per_repo)} |"
        )
    return "\n".join(lines)


def _fraction(hits: int, tasks: int) -> str:
    return f"{hits / tasks:.3f} ({hits}/{tasks})" if tasks else "n/a"


def _rate(values: Sequence[bool]) -> str:
    if not values:
        return "n/a"
    return f"{sum(values) / len(values):.3f} ({sum(values)}/{len(values)})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("repos", nargs="+")
    parser.add_argument("--tasks", type=int, default=150)
    parser.add_argument("--max-commits", type=int, default=50_000)
    parser.add_argument("--json", default=None)
    parser.add_argument("--config", default=None, help="a .knowing-pr.yml whose settings the suggestion uses")
    parser.add_argument(
        "--grid",
        nargs="*",
        default=list(DEFAULT_GRID),
        help="NAME=V1,V2 per scoring field; the settings scored besides the default (none: no grid)",
    )
    args = parser.parse_args(argv)
    grid = parse_grid(args.grid)
    results = []
    for path in args.repos:
        settings = load_settings(args.config) if args.config else Settings()
        result = run_repository(path, args.tasks, max_commits=args.max_commits, settings=settings, grid=grid)
        print(
            f"{result['repository']}: {len(result['tasks'])} tasks in {result['seconds']} s", file=sys.stderr
        )
        results.append(result)
    print(table(results))
    if grid:
        print()
        print(grid_tables(results, grid))
    if args.json:
        payload = {"grid": [label(s) for s in grid], "repositories": results}
        Path(args.json).write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
