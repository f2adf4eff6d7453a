"""Large repositories → a full index of each as a fresh process: wall, CPU, peak memory (of the
largest process, and of all of them together by proportional set size, sampled), the time
of every stage, whether it completed, and ``git log --no-merges --name-status -M`` over the same
history in the same run (the floor the history mine is held to), as a markdown table. The
history stage is shown whole and, beside it, its mine alone (``history_mine`` of the run report:
the walk, git's log read and the counts; the rest of the stage writes what was mined). A full
index of many files mines ahead, in a child process beside resolve and store
(``index/historyahead.py``): the mine's time is then the child's, and the stage's own includes
the wait for it (``history_wait``, shown beside the mine). A smaller one walks the history and
starts ``git log`` before resolve and store, and reads it in the history stage: the time of that
start (``history_start``) is added to the stage and to its mine, so both are the index's own time
on the history wherever it ran; only git's own work runs beside resolve and store.

Each repository is a work tree (a clone) given by path; it is only read: the store is written to
a scratch directory. Runs one repository at a time (a full index uses every core it is given).

Usage::

    nice -n 10 python bench/big_repos.py /path/to/sympy /path/to/astropy [--rev REV] [--runs 3] [--json out.json]

``--runs N`` indexes each repository N times (a new store each time, the ``git log`` floor timed
before each): every time and the peak are then the median of the N runs, which steadies the
ratio of the short histories (their floor is a few tenths of a second).

``--code DIR`` (a source tree of knowing-pr, e.g. an older commit's ``git archive``) indexes each
repository with that tree too, in turn with the installed one in every run (one ``git log`` floor
per run for both), so two versions compare on one machine under one load; a tree from before
``history_mine`` shows 0 there.

``--rev`` indexes that revision instead of HEAD (a shorter history on a shared machine); the
``git log`` floor is then taken up to the same revision.

``--history-only`` times only the history step (a mine from scratch with the default
parameters, in a fresh process, the cycle collector paused as in an index run) against the same
``git log`` floor (``--runs N``: medians of N mines and N floors); each ``--code DIR`` (a
source tree of knowing-pr, e.g. an older commit's ``git archive``) is timed as well, in the same
run, so two versions of the mining compare on one machine under one load::

    nice -n 10 python bench/big_repos.py --history-only --code /path/to/old-tree /path/to/sympy
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

#: the stages of the run report, in the order an index runs them
STAGES = ("parse", "resolve", "store", "history", "adjacency", "fit")
#: the part of the history stage that is the mine (the walk, git's log read, the counts); the rest
#: of the stage writes what it mined (its rows, a kept copy, co-change edges, commit subjects)
MINE = "history_mine"
#: a mine run ahead in a child process (``index/historyahead.py``): the mine's own time is the
#: child's, beside resolve and store, and the history stage waited this long for it and read it
WAIT = "history_wait"
#: the history's start before resolve and store (``index/run.py``): a child started, or in process
#: the walk done and git started (below the child's threshold); the parent's time on the history
#: is this and the history stage together, and so are the stage and the mine shown here
START = "history_start"


def wait_child(proc: subprocess.Popen[bytes]) -> tuple[int, float, int]:
    """(exit status, CPU s of the child and the processes it waited for, peak RSS KiB of the
    largest of them)."""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def git_log_floor(repo: Path, rev: str) -> tuple[float, int, str]:
    """(wall s, commits, note) of ``git log --no-merges --name-status -M`` from ``rev``, output
    discarded.

    A partial mirror may lack a blob the rename detection reads, and git then stops. Such a log
    runs again in a scratch repository that borrows the clone's objects
    (``objects/info/alternates``) and stands each missing blob in for the empty blob (a
    ``refs/replace/`` ref, which git honours and libgit2 does not): git then compares the empty
    blob, which costs it less than the real one would, so the floor is if anything lower. The
    clone itself is not written; the note says how many blobs were stood in."""
    commit = _git(repo, "rev-parse", "--verify", f"{rev}^{{commit}}")
    wall, done = _timed_log(["-C", str(repo)], commit)
    if done.returncode == 0:
        return wall, _commits(done.stdout), ""
    stand_ins: list[str] = []
    with tempfile.TemporaryDirectory(prefix="knowing-pr-floor-") as scratch:
        git_dir = _borrowing_repository(repo, Path(scratch))
        while (missing := _missing_object(done.stderr)) is not None and len(stand_ins) < _MAX_STAND_INS:
            if missing in stand_ins:  # not a blob git could take the empty one for (a tree, a commit)
                break
            stand_ins.append(missing)
            _stand_in_empty(git_dir, missing)
            wall, done = _timed_log(["--git-dir", str(git_dir)], commit)
            if done.returncode == 0:
                return (
                    wall,
                    _commits(done.stdout),
                    f"{len(stand_ins)} missing blob{'s' if len(stand_ins) > 1 else ''} read as empty",
                )
    return 0.0, 0, "git log failed"


def _timed_log(where: list[str], commit: str) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    start = time.perf_counter()
    done = subprocess.run(
        ["git", *where, "log", "--no-merges", "--name-status", "-M", "--format=%H", commit],
        capture_output=True,
        check=False,
    )
    return time.perf_counter() - start, done


def _commits(log: bytes) -> int:
    return sum(1 for line in log.splitlines() if len(line) == 40 and b"\t" not in line)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


#: a clone missing more blobs than this is not timed (the floor would no longer be git's)
_MAX_STAND_INS = 20


def _borrowing_repository(repo: Path, scratch: Path) -> Path:
    """A bare repository in ``scratch`` that reads ``repo``'s objects (and has no refs of its own)."""
    common = Path(_git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir"))
    git_dir = scratch / "floor.git"
    subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], check=True)
    (git_dir / "objects" / "info" / "alternates").write_text(f"{common / 'objects'}\n")
    return git_dir


def _missing_object(stderr: bytes) -> str | None:
    """The id git could not read, from its error (``fatal: unable to read <id>``)."""
    for line in stderr.decode("utf-8", "replace").splitlines():
        words = line.split()
        if "unable to read" in line and words and all(c in "0123456789abcdef" for c in words[-1]):
            return words[-1]
    return None


def _stand_in_empty(git_dir: Path, missing: str) -> None:
    empty = (
        subprocess.run(
            ["git", "--git-dir", str(git_dir), "hash-object", "-w", "--stdin"],
            input=b"",
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    subprocess.run(
        ["git", "--git-dir", str(git_dir), "update-ref", f"refs/replace/{missing}", empty], check=True
    )


def index_once(repo: Path, rev: str | None, scratch: Path, code: Path | None = None) -> dict[str, Any]:
    """One full index of ``repo`` into a new store, as ``knowing-pr index --full --json`` (with the
    knowing-pr source tree ``code``; None: the installed one)."""
    db = scratch / f"{repo.name}.sqlite"
    command = [sys.executable, "-m", "knowing_pr", "index", "--repo", str(repo), "--db", str(db)]
    command += ["--full", "--json", "--quiet", *(["--rev", rev] if rev else [])]
    env = {**os.environ, "PYTHONPATH": str(code)} if code is not None else None
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=code)
    assert proc.stdout is not None and proc.stderr is not None
    sampler = TreeMemory(proc.pid)
    sampler.start()
    out, err = proc.stdout.read(), proc.stderr.read()
    status, cpu, peak_kib = wait_child(proc)
    wall = time.perf_counter() - start
    sampler.stop()
    report = json.loads(out) if status == 0 else {}
    return {
        "exit": status,
        "error": err.decode("utf-8", "replace").strip().splitlines()[-1:] if status else [],
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_mb": peak_kib / 1024,
        "tree_peak_mb": sampler.peak_kib / 1024,
        "report": report,
    }


class TreeMemory(threading.Thread):
    """The largest memory of a process and all its descendants together (parse workers, the
    history mine's child, git), sampled every ``interval`` seconds from ``/proc`` (0 where there
    is none): each process's proportional set size, so pages two processes share (a pack file
    both map, the libraries) count once in all, not once in each. The peak above (``ru_maxrss``)
    is of the largest process alone, its shared pages whole."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval, self.peak_kib = pid, interval, 0
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            self.peak_kib = max(self.peak_kib, _tree_pss_kib(self.pid))
            self._done.wait(self.interval)

    def stop(self) -> None:
        self._done.set()
        self.join()


def _tree_pss_kib(pid: int) -> int:
    """Proportional KiB of ``pid`` and its descendants now (a process gone meanwhile counts 0)."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            for line in Path(f"/proc/{current}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
            for task in Path(f"/proc/{current}/task").iterdir():
                stack += [int(child) for child in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return total


def measure(
    repo: Path, rev: str | None, scratch: Path, runs: int = 1, codes: list[Path | None] | None = None
) -> list[dict[str, Any]]:
    """One repository's row per source tree of ``codes`` (None: the installed knowing-pr): ``runs``
    times the ``git log`` floor and then a full index into a new store with each tree, the first
    tree of a run rotating;
    every time and the peak are the median of the runs (a run that fails makes the row's exit
    status)."""
    trees = codes or [None]
    target = rev or "HEAD"
    floors: list[float] = []
    by_tree: list[list[dict[str, Any]]] = [[] for _ in trees]
    for run in range(runs):
        log_wall, commits, log_note = git_log_floor(repo, target)
        floors.append(log_wall)
        turn = list(zip(trees, by_tree, strict=True))
        for tree, indexes in turn[run % len(turn) :] + turn[: run % len(turn)]:  # who goes first rotates
            for old in scratch.glob(f"{repo.name}.sqlite*"):  # a new store each time
                old.unlink()
            indexes.append(index_once(repo, rev, scratch, tree))
    return [
        {**_row(repo, target, indexes, floors, commits, log_note), "code": tree.name if tree else "installed"}
        for tree, indexes in zip(trees, by_tree, strict=True)
    ]


def _row(
    repo: Path, target: str, indexes: list[dict[str, Any]], floors: list[float], commits: int, log_note: str
) -> dict[str, Any]:
    """The median row of one tree's index runs of ``repo`` (the runs that failed are left out of
    the medians; the ratios are of the unrounded medians)."""
    failed = [r for r in indexes if r["exit"] != 0]
    run = failed[0] if failed else indexes[0]
    report = run["report"]
    failures = report.get("analysis_failures", {})
    done = [r for r in indexes if r["exit"] == 0] or indexes
    medians = {
        k: statistics.median(r["report"].get("timings_ms", {}).get(k, 0.0) for r in done) / 1000
        for k in (*STAGES, MINE, WAIT, START)
    }
    # the history's start counts in its stage, and in its mine where that ran in process (it is
    # no stage of its own: ``stages_s`` sums to the run's stages)
    start = medians.pop(START)
    medians["history"] += start
    if not medians[WAIT]:
        medians[MINE] += start
    floor = statistics.median(floors)
    return {
        "repo": repo.name,
        "rev": subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--short=12", target], capture_output=True, text=True
        ).stdout.strip(),
        "commits": commits,
        "files_parsed": report.get("files_parsed", 0),
        "exit": run["exit"],
        "error": run["error"],
        "crashed": run["exit"] != 0,
        "degraded_files": len(failures),
        "degraded_references": sum(failures.values()),
        "wall_s": round(statistics.median(r["wall_s"] for r in done), 1),
        "cpu_s": round(statistics.median(r["cpu_s"] for r in done), 1),
        "peak_mb": round(statistics.median(r["peak_mb"] for r in done)),
        "tree_peak_mb": round(statistics.median(r["tree_peak_mb"] for r in done)),
        "stages_s": {k: round(v, 2) for k, v in medians.items()},
        "git_log_s": round(floor, 2),
        # 0 for a tree from before the mine was timed apart
        "mine_ratio": round(medians[MINE] / floor, 2) if floor else 0.0,
        "history_ratio": round(medians["history"] / floor, 2) if floor else 0.0,
        "git_log_note": log_note,
        "runs": len(indexes),
    }


#: a history mine from scratch in a fresh process: argv repo, revision → JSON seconds and commits
_MINE_SNIPPET = """
import gc, json, sys, time
gc.disable()  # as an index run mines (index/commit.py pauses the cycle collector for the run)
import knowing_pr
from knowing_pr.config import HistoryParams
from knowing_pr.git import GitRepo
from knowing_pr.history import mine_history
repo = GitRepo.open(sys.argv[1])
start = time.perf_counter()
state = mine_history(repo, sys.argv[2], HistoryParams())
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "mined": state.mined_commits, "module": knowing_pr.__file__}))
"""


def time_mine(repo: Path, rev: str, code: Path) -> dict[str, Any]:
    """(seconds, commits mined) of one mine of ``repo`` with the knowing-pr source tree ``code``."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run(
        [sys.executable, "-c", _MINE_SNIPPET, str(repo), rev],
        capture_output=True,
        text=True,
        env=env,
        cwd=code,  # ``python -c`` puts the working directory first on the import path
        check=False,
    )
    if done.returncode != 0:
        return {"seconds": 0.0, "mined": 0, "error": done.stderr.strip().splitlines()[-1:]}
    result = dict(json.loads(done.stdout))
    if not Path(result["module"]).resolve().is_relative_to(code):
        return {"seconds": 0.0, "mined": 0, "error": [f"imported {result['module']}, not the tree {code}"]}
    return result


def measure_history(repo: Path, rev: str | None, codes: list[Path], runs: int = 1) -> list[dict[str, Any]]:
    """One row per source tree of ``codes``: the median of ``runs`` mines of ``repo`` in fresh
    processes against the median of the ``git log`` floors timed before each run (the trees take
    turns, the first one rotating from run to run; a failed mine is left out of the median)."""
    target = rev or "HEAD"
    floors: list[float] = []
    mines: list[list[dict[str, Any]]] = [[] for _ in codes]
    commits, log_note = 0, ""
    for run in range(runs):
        log_wall, commits, log_note = git_log_floor(repo, target)
        floors.append(log_wall)
        for turn in range(len(codes)):
            which = (run + turn) % len(codes)
            mines[which].append(time_mine(repo, target, codes[which]))
    floor = statistics.median(floors)
    rows: list[dict[str, Any]] = []
    for code, done in zip(codes, mines, strict=True):
        good = [m for m in done if not m.get("error")]
        seconds = statistics.median(m["seconds"] for m in good) if good else 0.0
        rows.append(
            {
                "repo": repo.name,
                "code": code.name,
                "commits": commits,
                "mined": good[0]["mined"] if good else 0,
                "history_s": round(seconds, 2),
                "git_log_s": round(floor, 2),
                "ratio": round(seconds / floor, 2) if floor and good else 0.0,
                "git_log_note": log_note,
                "error": next((m["error"] for m in done if m.get("error")), []),
                "runs": len(good),
            }
        )
    return rows


def history_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| repository | code | commits (git log) | mined | history s | git log s | history ÷ git log |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        note = f" ({r['git_log_note']})" if r["git_log_note"] else ""
        failed = f" failed: {' '.join(r['error'])}" if r["error"] else ""
        lines.append(
            f"| {r['repo']} | {r['code']} | {r['commits']} | {r['mined']} | {r['history_s']}{failed} | "
            f"{r['git_log_s']}{note} | {r['ratio']:.2f}× |"
        )
    return "\n".join(lines)


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| repository | rev | files | commits | completed | degraded files | wall s | CPU s | peak MB | all processes MB | "
        + " | ".join(f"{s} s" for s in STAGES)
        + " | mine s (ahead: wait s) | git log s | mine ÷ git log | history ÷ git log |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        floor = r["git_log_s"]
        mine = r["stages_s"].get(MINE, 0.0)
        wait = r["stages_s"].get(WAIT, 0.0)
        mine_text = f"{mine} (ahead: {wait})" if wait else str(mine)
        done = "no: " + " ".join(r["error"]) if r["crashed"] else "yes"
        name = r["repo"] if r.get("code", "installed") == "installed" else f"{r['repo']} ({r['code']})"
        lines.append(
            f"| {name} | {r['rev']} | {r['files_parsed']} | {r['commits']} | {done} | "
            f"{r['degraded_files']} | {r['wall_s']} | {r['cpu_s']} | {r['peak_mb']} | {r['tree_peak_mb']} | "
            + " | ".join(str(r["stages_s"][s]) for s in STAGES)
            + f" | {mine_text} | {floor}{' (' + r['git_log_note'] + ')' if r['git_log_note'] else ''}"
            + f" | {r['mine_ratio']:.2f}× | {r['history_ratio']:.2f}× |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+", type=Path, help="work trees of the repositories to index")
    parser.add_argument("--rev", default=None, help="index this revision instead of HEAD")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows as JSON here")
    parser.add_argument("--runs", type=int, default=1, help="index each repository this many times: medians")
    parser.add_argument("--history-only", action="store_true", help="time only the history step")
    parser.add_argument(
        "--code",
        type=Path,
        action="append",
        default=[],
        help="another knowing-pr source tree, timed in the same run",
    )
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.repos if not (p / ".git").exists()]
    if missing:
        parser.error(f"not a git work tree: {', '.join(missing)}")
    if args.history_only:
        return history_main(args.repos, args.rev, args.code, args.json, max(args.runs, 1))
    problem = tree_problem([c.resolve() for c in args.code])
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    codes: list[Path | None] = [None, *(c.resolve() for c in args.code)] if args.code else [None]
    scratch = Path(tempfile.mkdtemp(prefix="knowing-pr-big-repos-"))
    rows = []
    try:
        for repo in args.repos:
            rows.extend(measure(repo.resolve(), args.rev, scratch, max(args.runs, 1), codes))
            print(f"{repo.name}: done", file=sys.stderr)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, {git_version}"
    )
    if args.runs > 1:
        print(f"(each time and peak: the median of {args.runs} runs)")
    print(table(rows))
    crashed = sum(r["crashed"] for r in rows)
    print(f"\n{len({r['repo'] for r in rows})} repositories, {crashed} of {len(rows)} rows crashed")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, sort_keys=True) + "\n")
    return 1 if crashed else 0


def tree_problem(codes: list[Path]) -> str:
    """Why a ``--code`` tree cannot be timed ("" when each can): it must import its own
    ``knowing_pr`` (a directory without one would import the installed package under the tree's
    name). Each is byte-compiled here, so its first timed run does not pay for that."""
    for code in codes:
        found = subprocess.run(
            [sys.executable, "-c", "import knowing_pr; print(knowing_pr.__file__)"],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(code)},
            cwd=code,
            check=False,
        ).stdout.strip()
        if not found or not Path(found).resolve().is_relative_to(code):
            return f"not a knowing-pr source tree (imports {found or 'nothing'}): {code}"
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(code / "knowing_pr")], check=False)
    return ""


def history_main(
    repos: list[Path], rev: str | None, codes: list[Path], json_path: Path | None, runs: int = 1
) -> int:
    here = Path(__file__).resolve().parent.parent
    problem = tree_problem([c.resolve() for c in codes])
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    rows = []
    for repo in repos:
        rows.extend(measure_history(repo.resolve(), rev, [here, *(c.resolve() for c in codes)], runs))
        print(f"{repo.name}: done", file=sys.stderr)
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, {git_version}"
    )
    if runs > 1:
        print(f"(each mine and floor: the median of {runs} runs)")
    print(history_table(rows))
    if json_path:
        json_path.write_text(json.dumps(rows, indent=2, sort_keys=True) + "\n")
    return 1 if any(r["error"] for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
