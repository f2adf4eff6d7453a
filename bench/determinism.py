"""A repository → whether full indexes of one commit give one store: the graph root, the edges
and the nodes (every column) of ``--runs`` fresh full indexes, compared.

Usage::

    python bench/determinism.py --repo PATH [--repo PATH ...] [--runs 3] [--python PYTHON]

Each run is ``python -m knowing_pr index --full`` as a fresh process (its parse workers each start
with their own hash seed, as a user's do) into a new store in a temporary directory; nothing is
written to the repository. ``--python`` picks the interpreter (and so the knowing-pr installed in
it, run without ``PYTHONPATH``; default: this one with this checkout on ``PYTHONPATH``). Prints,
per repository, each run's graph root and the edges and nodes that are not in every run; exits 1
when any repository's runs differ.

Packs (``--packs``)::

    python bench/determinism.py --packs --repo PATH [--repo PATH ...] [--commits 8] [--seed 0]
        [--baseline SRC] [--old 100] [--moves 3]

For each repository: ``--commits`` first-parent commits spread over the last ``--span`` ones,
each packed (``pr --base C^ --head C --format json``) in a fresh store; then one store with a
random past (seeded by ``--seed``: before each pack, the store is moved to a random other commit
by another pack, an ``index --rev``, or an ``index --full --rev``) packs them again in a random
order, and every PackRoot is compared with the fresh store's (the answer: 0 differences).
Then the cost of moving a store between the commit ``--old`` first-parent commits back and HEAD,
``--moves`` times each way (the first move, then the median of the later ones: a store that
comes back to a commit), with this checkout and, given ``--baseline SRC`` (a source tree of an
earlier commit, e.g. ``git archive 99a3a56 | tar -x -C SRC``), with that one, in the same run.
``--code SRC`` makes the compared packs with another source tree (``--moves 0``: no move cost).
Exits 1 when any PackRoot differs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODES = (
    "SELECT id, path, name, qualified_name, kind, language, start_line, end_line, signature, doc,"
    " content_hash FROM nodes"
)
EDGES = (
    "SELECT s.id, t.id, e.kind, e.confidence, e.rule FROM edges e"
    " JOIN nodes s ON s.rowid = e.source JOIN nodes t ON t.rowid = e.target"
)


Rows = set[tuple[object, ...]]


def index_once(python: str, repo: Path, db: Path) -> tuple[str, Rows, Rows]:
    """(graph root, edges, nodes) of one fresh full index of ``repo``'s HEAD."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if python == sys.executable:
        env["PYTHONPATH"] = str(ROOT)
    subprocess.run(
        [python, "-m", "knowing_pr", "index", "--repo", str(repo), "--full", "--quiet", "--db", str(db)],
        check=True,
        env=env,
        cwd=db.parent,  # ``-m`` looks in the working directory first: not in a checkout's
    )
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        root = conn.execute("SELECT value FROM meta WHERE key = 'graph_root'").fetchone()[0]
        edges = set(conn.execute(EDGES))
        nodes = set(conn.execute(NODES))
    return str(root), edges, nodes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", action="append", required=True, type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--packs", action="store_true", help="PackRoots: fresh stores against a random past")
    parser.add_argument("--commits", type=int, default=8)
    parser.add_argument("--span", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", type=Path, default=None, help="source tree of an earlier commit")
    parser.add_argument("--old", type=int, default=100, help="first-parent commits back for the move")
    parser.add_argument("--moves", type=int, default=3)
    parser.add_argument("--code", type=Path, default=ROOT, help="source tree that makes the packs compared")
    args = parser.parse_args()
    if args.packs:
        return packs_main(args)
    differing = 0
    for repo in args.repo:
        with tempfile.TemporaryDirectory(prefix="knowing-pr-determinism-") as work:
            results = []
            for run in range(args.runs):
                print(f"{repo.name}: full index {run + 1} of {args.runs}", file=sys.stderr)
                results.append(index_once(args.python, repo.resolve(), Path(work) / f"run{run}.sqlite"))
        roots = [root for root, _, _ in results]
        uncommon = _not_in_every([edges for _, edges, _ in results])
        odd_nodes = _not_in_every([nodes for _, _, nodes in results])
        same = len(set(roots)) == 1 and not uncommon and not odd_nodes
        differing += not same
        print(f"\n{repo.name}: {'the same store' if same else 'stores differ'} in {args.runs} full indexes")
        for run, (root, edges, nodes) in enumerate(results, 1):
            print(f"  run {run}: graph root {root[:16]}…, {len(nodes)} nodes, {len(edges)} edges")
        if odd_nodes:
            print(f"  {len(odd_nodes)} node rows not in every run, e.g. {odd_nodes[0][:5]}")
        if uncommon:
            print(f"  {len(uncommon)} edges not in every run, e.g.:")
            for source, target, kind, confidence, rule in uncommon[:5]:
                print(f"    {source} → {target} (kind {kind}, confidence {confidence}, rule {rule})")
    return 1 if differing else 0


def _not_in_every(runs: list[Rows]) -> list[tuple[object, ...]]:
    common = set.intersection(*runs)
    return sorted({row for rows in runs for row in rows} - common, key=str)


# -- packs: fresh stores against a store with a random past --------------------------------------


def _knowing_pr(src: Path, repo: Path, db: Path, *args: str) -> str:
    """``python -m knowing_pr ARGS --repo REPO --db DB`` with ``src`` on ``PYTHONPATH``: stdout."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-m", "knowing_pr", *args, "--repo", str(repo), "--db", str(db)],
        env=env,
        cwd=db.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"knowing-pr {' '.join(args)} failed: {done.stderr.strip()[-400:]}")
    return done.stdout


def _first_parent(repo: Path, span: int) -> list[str]:
    """The last ``span`` first-parent non-merge commits that have a parent, newest first."""
    out = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--first-parent", "--no-merges", f"--max-count={span}", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [sha for sha in out if _has_parent(repo, sha)]


def _has_parent(repo: Path, sha: str) -> bool:
    done = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "-q", "--verify", sha + "^"], capture_output=True
    )
    return done.returncode == 0


def _pack_root(src: Path, repo: Path, db: Path, sha: str) -> str:
    out = _knowing_pr(src, repo, db, "pr", "--base", sha + "^", "--head", sha, "--format", "json")
    return str(json.loads(out)["pack_root"])


def _random_past(src: Path, repo: Path, db: Path, pool: list[str], rng: random.Random) -> str:
    """Move the store to a random commit of ``pool`` one of three ways; what was done."""
    sha = rng.choice(pool)
    how = rng.choice(("pr", "index", "index --full"))
    if how == "pr":
        _pack_root(src, repo, db, sha)
    else:
        _knowing_pr(src, repo, db, "index", "--rev", sha, "--quiet", *(["--full"] if "full" in how else []))
    return f"{how} {sha[:8]}"


def _compare_packs(src: Path, repo: Path, commits: int, span: int, seed: int) -> tuple[int, int]:
    """(packs compared, differences) for one repository, packed by the code in ``src``."""
    pool = _first_parent(repo, span)
    step = max(len(pool) // commits, 1)
    picks = pool[::step][:commits]
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="knowing-pr-packs-") as work:
        fresh = {}
        for n, sha in enumerate(picks):
            fresh[sha] = _pack_root(src, repo, Path(work) / f"fresh{n}.sqlite", sha)
        shared = Path(work) / "past.sqlite"
        differences = 0
        for sha in rng.sample(picks, len(picks)):
            past = [_random_past(src, repo, shared, pool, rng) for _ in range(rng.randint(1, 2))]
            root = _pack_root(src, repo, shared, sha)
            same = root == fresh[sha]
            differences += not same
            print(f"  {sha[:8]} after {', '.join(past)}: {'same' if same else 'DIFFERENT'} {root[:12]}")
    return len(picks), differences


def _move_cost(src: Path, repo: Path, old: str, moves: int) -> dict[str, list[float]]:
    """Wall seconds and files parsed (not taken as kept) of each move to ``old`` and back to
    HEAD, in one store indexed at HEAD first."""
    costs: dict[str, list[float]] = {f"{to} {what}": [] for to in ("old", "HEAD") for what in ("s", "parsed")}
    with tempfile.TemporaryDirectory(prefix="knowing-pr-move-") as work:
        db = Path(work) / "index.sqlite"
        _knowing_pr(src, repo, db, "index", "--quiet")
        for _ in range(moves):
            for to, rev in (("old", old), ("HEAD", "HEAD")):
                t0 = time.perf_counter()
                report = json.loads(_knowing_pr(src, repo, db, "index", "--rev", rev, "--json"))
                costs[f"{to} s"].append(time.perf_counter() - t0)
                parsed = report.get("files_parsed", 0) - report.get("parses_kept", 0)
                costs[f"{to} parsed"].append(float(parsed))
    return costs


def _first_and_again(values: list[float], fmt: str) -> str:
    """The first move's figure, then the median of the later ones."""
    again = f" / {statistics.median(values[1:]):{fmt}}" if len(values) > 1 else ""
    return f"{values[0]:{fmt}}{again}"


def packs_main(args: argparse.Namespace) -> int:
    compared = differing = 0
    moves: list[tuple[str, str, dict[str, list[float]]]] = []
    for repo in args.repo:
        repo = repo.resolve()
        print(f"{repo.name}: {args.commits} packs, fresh stores against a store with a random past")
        n, d = _compare_packs(args.code.resolve(), repo, args.commits, args.span, args.seed)
        compared, differing = compared + n, differing + d
        chain = _first_parent(repo, args.old + 1)
        old = chain[-1]
        for label, src in (("this checkout", ROOT), ("baseline", args.baseline)):
            if src is not None and args.moves > 0:
                moves.append((repo.name, label, _move_cost(src.resolve(), repo, old, args.moves)))
    print(
        f"\n{compared} packs: {differing} PackRoots differ between a fresh store and a store with a random past"
    )
    if moves:
        print(
            f"\nmoving a store indexed at HEAD to HEAD~{args.old} (first parent) and back, {args.moves} times:"
            " the first move / the median of the later ones"
        )
        print("| repository | code | to old (s) | files parsed | back to HEAD (s) | files parsed |")
        print("|---|---|---:|---:|---:|---:|")
        for name, label, c in moves:
            print(
                f"| {name} | {label} | {_first_and_again(c['old s'], '.2f')} | "
                f"{_first_and_again(c['old parsed'], '.0f')} | {_first_and_again(c['HEAD s'], '.2f')} | "
                f"{_first_and_again(c['HEAD parsed'], '.0f')} |"
            )
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
