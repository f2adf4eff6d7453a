"""Index speed, memory and size on a real repository (full index + incremental updates).

Usage:
    python bench/index_perf.py --django-sdist Django-5.1.4.tar.gz   # sdist → temporary repo
    python bench/index_perf.py --repo PATH [--rev REV]               # any git repository (copied)
    python bench/index_perf.py ... --runs 3 --json
    python bench/index_perf.py --django-sdist Django-5.1.4.tar.gz --baseline CHECKOUT --runs 3

``--baseline CHECKOUT``: a checkout of another version of knowing-pr (e.g. ``git worktree add
../base HEAD~1``, or ``git archive HEAD~1 | tar -x -C ../base``). Only full indexes are
timed, alternating between that code and this checkout (``PYTHONPATH``), ``--runs`` times each;
the report gives both medians and the ratio this/baseline of wall and CPU seconds (one run of
the bench, so both versions share the machine's load).

Source for Django: ``pip download --no-deps --no-binary :all: django==5.1.4``.

Reports, per repository: files indexed, files/s, nodes, edges, full-index wall time and the
CPU seconds of the indexing process (user + sys, children included: the parse workers),
peak RSS of the indexing process and of its largest worker, store size, and the in-process
incremental update time for a 1-file and a 10-file commit (median of --runs). The full
index runs as a fresh process (``python -m knowing_pr index --full``) so start-up counts.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import pygit2

HERE = Path(__file__).resolve().parent
SIGNATURE = pygit2.Signature("bench", "bench@example.com", 1_700_000_000, 0)


def repo_from_sdist(sdist: Path, work: Path) -> Path:
    """Unpack an sdist and commit its files into a fresh repository (one commit)."""
    target = work / "repo"
    with tarfile.open(sdist) as tar:
        tar.extractall(work / "unpacked", filter="data")
    (root,) = list((work / "unpacked").iterdir())
    shutil.move(str(root), target)
    repo = pygit2.init_repository(str(target), initial_head="main")
    repo.index.add_all()
    repo.index.write()
    tree = repo.index.write_tree()
    repo.create_commit("HEAD", SIGNATURE, SIGNATURE, "import sdist", tree, [])
    return target


def repo_copy(source: Path, rev: str | None, work: Path) -> Path:
    target = work / "repo"
    # no checkout: the indexer reads git objects only, and mirrors may lack large blobs
    subprocess.run(
        ["git", "clone", "--quiet", "--no-checkout", "--no-hardlinks", str(source), str(target)], check=True
    )
    if rev:
        subprocess.run(["git", "-C", str(target), "update-ref", "--no-deref", "HEAD", rev], check=True)
    return target


def full_index(repo: Path, db: Path) -> dict[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # `time -v`-like peak RSS: ask the child to report its own and its workers' maxima
    # (VmHWM, not ru_maxrss: Linux keeps ru_maxrss across execve, so a child forked from this
    # bench process, grown by an earlier repository's in-process runs, would report that peak)
    code = (
        "import json, resource, sys\n"
        "from knowing_pr.cli import main\n"
        "rc = main(['index', '--repo', sys.argv[1], '--full', '--quiet', '--json'])\n"
        "hwm = [int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')]\n"
        "print(json.dumps({'self_rss_kb': hwm[0] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,"
        " 'children_rss_kb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(repo)],
        capture_output=True,
        text=True,
        env={**os.environ, "KNOWING_PR_DB": str(db)},
        cwd=db.parent,  # not this checkout: ``python -c`` puts the working directory first on sys.path
    )
    if done.returncode != 0:
        raise SystemExit(f"the full index failed ({done.returncode}):\n{done.stderr[-3000:]}")
    out = done.stdout
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = out.strip().splitlines()
    rss = json.loads(lines[-1])
    report = json.loads("\n".join(lines[:-1]))
    return {
        "wall_s": wall,
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "peak_rss_mb": rss["self_rss_kb"] / 1024,
        "worker_peak_rss_mb": rss["children_rss_kb"] / 1024,
        "files_parsed": report["files_parsed"],
        "timings_ms": report["timings_ms"],
    }


def store_counts(db: Path) -> dict[str, int]:
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        return {
            "nodes": conn.execute("SELECT count(*) FROM nodes").fetchone()[0],
            "edges": conn.execute("SELECT count(*) FROM edges").fetchone()[0],
            "files": conn.execute("SELECT count(*) FROM files WHERE status = 'indexed'").fetchone()[0],
        }
    finally:
        conn.close()


def edit_and_commit(repo_path: Path, count: int, round_no: int) -> None:
    """Append a small function to ``count`` indexed source files and commit (objects only:
    no work tree is needed)."""
    repo = pygit2.Repository(str(repo_path))
    head = repo[repo.head.target]
    index = pygit2.Index()
    index.read_tree(head.tree)
    paths = sorted(e.path for e in index if e.path.endswith((".py", ".go", ".ts", ".js", ".java", ".rs")))
    step = max(len(paths) // max(count, 1), 1)
    for path in paths[::step][:count]:
        entry = index[path]
        suffix = path.rsplit(".", 1)[-1]
        addition = {
            "py": f"\n\ndef bench_added_{round_no}():\n    return {round_no}\n",
            "go": f"\n\nfunc benchAdded{round_no}() int {{\n\treturn {round_no}\n}}\n",
        }.get(suffix, f"\n// bench {round_no}\n")
        data = repo[entry.id].data + addition.encode()
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), entry.mode))
    tree = index.write_tree(repo)
    sig = pygit2.Signature("bench", "bench@example.com", 1_700_000_000 + round_no * 60, 0)
    repo.create_commit("HEAD", sig, sig, f"bench edit {round_no}", tree, [head.id])


def incremental_ms(repo: Path, db: Path, count: int, runs: int, offset: int) -> tuple[float, float, float]:
    """Median wall ms, CPU ms and the median of the indexer's own 'total' timing."""
    sys.path.insert(0, str(HERE.parent))
    from knowing_pr.config import Settings
    from knowing_pr.git import GitRepo
    from knowing_pr.index import index_commit

    walls, cpus, totals = [], [], []
    git_repo = GitRepo.open(str(repo))
    settings = Settings()
    for i in range(runs):
        edit_and_commit(repo, count, offset + i)
        c0 = time.process_time()
        t0 = time.perf_counter()
        report = index_commit(git_repo, settings, db_path=db)
        walls.append((time.perf_counter() - t0) * 1000)
        cpus.append((time.process_time() - c0) * 1000)
        totals.append(report.timings_ms.get("total", 0.0))
        assert report.mode == "incremental", report.mode
    return statistics.median(walls), statistics.median(cpus), statistics.median(totals)


def run(repo: Path, name: str, runs: int) -> dict[str, object]:
    db = repo.parent / "index.sqlite"
    full = full_index(repo, db)
    counts = store_counts(db)
    size_mb = sum(p.stat().st_size for p in db.parent.glob("index.sqlite*")) / 1e6
    one = incremental_ms(repo, db, 1, runs, 1000)
    ten = incremental_ms(repo, db, 10, runs, 2000)
    return {
        "repository": name,
        "files": counts["files"],
        "nodes": counts["nodes"],
        "edges": counts["edges"],
        "full_wall_s": round(full["wall_s"], 2),
        "full_cpu_s": round(full["cpu_s"], 2),
        "files_per_s": round(counts["files"] / full["wall_s"], 1),
        "peak_rss_mb": round(full["peak_rss_mb"], 1),
        "worker_peak_rss_mb": round(full["worker_peak_rss_mb"], 1),
        "store_mb": round(size_mb, 1),
        "inc_1_file_ms": round(one[0], 1),
        "inc_1_file_cpu_ms": round(one[1], 1),
        "inc_10_files_ms": round(ten[0], 1),
        "inc_10_files_cpu_ms": round(ten[1], 1),
        "phases_ms": full["timings_ms"],
    }


def full_index_with(code: Path, repo: Path, db: Path) -> dict[str, float]:
    """``full_index`` with the knowing-pr found first on ``PYTHONPATH`` set to ``code``."""
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(code)
    try:
        return full_index(repo, db)
    finally:
        if previous is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = previous


def compare(args: argparse.Namespace) -> int:
    """Full indexes alternating between ``--baseline`` and this checkout: medians and ratios."""
    versions = {"baseline": args.baseline.resolve(), "this": HERE.parent}
    rows = []
    with tempfile.TemporaryDirectory(prefix="knowing-pr-bench-") as tmp:
        work = Path(tmp)
        sources: list[tuple[str, Path]] = []
        if args.django_sdist:
            (work / "django").mkdir()
            sources.append((args.django_sdist.name, repo_from_sdist(args.django_sdist, work / "django")))
        for i, source in enumerate(args.repo):
            (work / f"repo{i}").mkdir()
            sources.append((source.name, repo_copy(source, args.rev, work / f"repo{i}")))
        for label, repo in sources:
            runs: dict[str, list[dict[str, float]]] = {name: [] for name in versions}
            for run_no in range(args.runs):
                for name, code in versions.items():
                    db = work / f"{name}-{run_no}.sqlite"
                    result = full_index_with(code, repo, db)
                    runs[name].append(result)
                    print(
                        f"{label} {name} run {run_no + 1}: {result['wall_s']:.2f} s wall, "
                        f"{result['cpu_s']:.2f} s CPU",
                        file=sys.stderr,
                        flush=True,
                    )
                    for stale in work.glob(f"{name}-{run_no}.sqlite*"):
                        stale.unlink()
            medians = {
                name: {k: statistics.median(r[k] for r in found) for k in ("wall_s", "cpu_s")}
                for name, found in runs.items()
            }
            rows.append(
                {
                    "repository": label,
                    **{f"{name}_{k}": round(v, 2) for name, m in medians.items() for k, v in m.items()},
                    "ratio_wall": round(medians["this"]["wall_s"] / medians["baseline"]["wall_s"], 3),
                    "ratio_cpu": round(medians["this"]["cpu_s"] / medians["baseline"]["cpu_s"], 3),
                }
            )
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    cols = list(rows[0]) if rows else []
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for row in rows:
        print("| " + " | ".join(str(row[c]) for c in cols) + " |")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--django-sdist", type=Path)
    parser.add_argument("--repo", type=Path, action="append", default=[])
    parser.add_argument("--rev", default=None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--baseline", type=Path, default=None, help="another knowing-pr checkout to compare")
    args = parser.parse_args()
    if args.baseline is not None:
        return compare(args)
    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="knowing-pr-bench-") as tmp:
        work = Path(tmp)
        if args.django_sdist:
            d = work / "django"
            d.mkdir()
            results.append(run(repo_from_sdist(args.django_sdist, d), args.django_sdist.name, args.runs))
            print(json.dumps(results[-1]), file=sys.stderr, flush=True)
        for i, source in enumerate(args.repo):
            d = work / f"repo{i}"
            d.mkdir()
            label = source.parent.name if source.name in ("repo", ".git") else source.name
            results.append(run(repo_copy(source, args.rev, d), label, args.runs))
            print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    cols = [
        "repository",
        "files",
        "nodes",
        "edges",
        "full_wall_s",
        "full_cpu_s",
        "files_per_s",
        "peak_rss_mb",
        "worker_peak_rss_mb",
        "store_mb",
        "inc_1_file_ms",
        "inc_1_file_cpu_ms",
        "inc_10_files_ms",
        "inc_10_files_cpu_ms",
    ]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in results:
        print("| " + " | ".join(str(r[c]) for c in cols) + " |")
    for r in results:
        print(f"\n{r['repository']} phases (ms): {r['phases_ms']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
