"""A repository's own history → how often a suggested reviewer is someone who changed the same
files soon after (issue 31), for knowing-pr's suggestion, CODEOWNERS alone and the most frequent
author of the files, in the same run.

Usage:
    python bench/reviewers.py REPO_DIR [REPO_DIR ...] [--tasks 150] [--json OUT] [--config YML]

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
- ``knowing-pr``: ``pipeline.reviewers.change_reviewers`` with the default ``ReviewerParams``:
  blame at the base of the changed symbols (base definitions parsed as ``pr`` parses them), the
  800 newest commits before the change as the index keeps them (paths of commits over
  ``history.max_files_per_commit`` files dropped), CODEOWNERS of the base; no callers (the bench
  builds no index);
- ``codeowners``: the owners of the changed files at the base (most files owned first), only on
  repositories with a CODEOWNERS file; a handle matches a person whose GitHub noreply login, the
  local part of whose address, or whose name without spaces is the handle (case-insensitive), a
  team matches nobody (its members are not in git);
- ``frequent``: the authors of the most commits that changed the change's files before it (all
  history), ties to the most recent; the change's own authors and bots left out.

The table also gives the time ``change_reviewers`` took per task (blame, authors, scoring; the
parse of the base definitions, which ``pr`` does anyway, not counted). Heavy: run as ``flock /tmp/bench.lock nice -n 10 python bench/reviewers.py …``.
"""

from __future__ import annotations

import argparse
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
from knowing_pr.pipeline.reviewers import base_files, change_reviewers

DAY_S = 86_400
WINDOW_S = 90 * DAY_S
MIN_BEFORE = 200
TOP = 3
_PR_MERGE = re.compile(r"^Merge pull request #\d+")
_PR_SQUASH = re.compile(r"\(#\d+\)\s*$")
METHODS = ("knowing-pr", "codeowners", "frequent")


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


def run_repository(path: str, tasks_wanted: int, *, max_commits: int, settings: Settings) -> dict[str, Any]:
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
        ours = change_reviewers(
            repo,
            settings.reviewers,
            base=task.base,
            head=task.head,
            diffs=diffs,
            base_defs=base_defs,
            history=history,
            not_blamed=settings.index.is_excluded,
        )
        spent_ms = (time.monotonic() - suggesting) * 1000
        owners = base_files(repo, task.base).owners
        row = {
            "ms": round(spent_ms, 1),
            "sha": task.sha,
            "pr": task.pr,
            "truth": len(truth),
            "knowing-pr": hit([r.key for r in ours], truth),
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
    args = parser.parse_args(argv)
    results = []
    for path in args.repos:
        settings = load_settings(args.config) if args.config else Settings()
        result = run_repository(path, args.tasks, max_commits=args.max_commits, settings=settings)
        print(
            f"{result['repository']}: {len(result['tasks'])} tasks in {result['seconds']} s", file=sys.stderr
        )
        results.append(result)
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
