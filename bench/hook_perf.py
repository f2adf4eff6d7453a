"""A repository (generated, or a clone of ``--repo``) → what the git hook costs, as a markdown table.

Measures, in a scratch clone (the repository given is never written):

* the hook's foreground wall time run on its own (median of ``--reps-hook``), when the store
  already reflects HEAD and when it lags (the hook then hands off to a background worker);
* for 1-file and 2-file commits (median of ``--reps``): the wall time ``git commit`` gains from
  the hook (difference and ratio), and the time from the commit's start until the store
  reflects the new HEAD;
* a rebase of ``--rebase-commits`` commits with and without the hook: added wall time, the
  catch-up time after the rebase returns, and how many index runs it took;
* with ``--pre-commit``, the hook installed through the pre-commit tool instead, with the
  entry ``.pre-commit-hooks.yaml`` ships: 1-file ``git commit`` in the same run without any
  hook, under pre-commit with a hook that does nothing (``true``: pre-commit's own cost), and
  under pre-commit with ours (what ours adds on top of pre-commit, to set beside what the plain
  hook adds on top of git); then the same rebase once more (with the rebase test's entry);
* with ``--pre-commit-env``, the first and second ``git commit`` with the shipped hook as a
  pre-commit user gets it (``repo:`` this checkout, ``language: python``): the first builds
  pre-commit's environment for it (a pip install of knowing-pr and its dependencies).

Usage::

    python bench/hook_perf.py                      # generated: 2,000 files, 300 commits
    python bench/hook_perf.py --repo ../some-clone # any repository (cloned to a temp dir first)
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from knowing_pr.hooks import (
    HOOK_NAMES,
    SYNC_ENV,
    WAITER_PID_NAME,
    install_hooks,
    read_indexed_commit,
    store_path,
    uninstall_hooks,
)

IDENTITY = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def git_env() -> dict[str, str]:
    # PYTHONDONTWRITEBYTECODE would make every hook recompile its module: an installed
    # package has its .pyc files, so measure with them
    dropped = {SYNC_ENV, "PYTHONDONTWRITEBYTECODE"}
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k not in dropped}
    env.update(IDENTITY, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, LC_ALL="C")
    return env


def git(repo: Path, *args: str, hooks: bool = True, stdin: str | None = None) -> str:
    prefix = [] if hooks else ["-c", f"core.hooksPath={os.devnull}"]
    result = subprocess.run(
        ["git", *prefix, *args], cwd=repo, env=git_env(), input=stdin, capture_output=True, text=True
    )
    if result.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


# -- the repository --------------------------------------------------------------------------------


def module_text(package: int, module: int, version: int, packages: int, modules: int) -> str:
    callee = f"p{(package + 1) % packages}.m{(module + 7) % modules}"
    return (
        f"from p{(package + 1) % packages} import m{(module + 7) % modules}\n\n\n"
        f"def f_{package}_{module}(x):\n    return {callee.split('.')[1]}.f_{(package + 1) % packages}_"
        f"{(module + 7) % modules}(x) + {version}\n\n\n"
        f"class C{package}_{module}:\n    def run(self, x):\n        return f_{package}_{module}(x)\n"
    )


def fast_import_stream(files: int, history: int, rebase_commits: int, seed: int) -> str:
    """main: one commit with every file, then ``history`` small commits; storm: ``rebase_commits``
    commits branched before main's last commit (so a rebase replays all of them)."""
    rng = random.Random(seed)
    modules = 50
    packages = max(1, files // modules)
    paths = [(p, m) for p in range(packages) for m in range(modules)]
    out: list[str] = []
    mark = 0
    clock = 1_700_000_000

    def commit(branch: str, message: str, changes: list[tuple[str, str]], parent: int | None) -> int:
        nonlocal mark, clock
        mark += 1
        clock += 60
        out.append(f"commit refs/heads/{branch}\nmark :{mark}\n")
        out.append(f"committer Bench <bench@example.com> {clock} +0000\n")
        data = message.encode()
        out.append(f"data {len(data)}\n{message}\n")
        if parent is not None:
            out.append(f"from :{parent}\n")
        for path, text in changes:
            blob = text.encode()
            out.append(f"M 100644 inline {path}\ndata {len(blob)}\n{text}\n")
        return mark

    first = [(f"p{p}/__init__.py", "") for p in range(packages)]
    first += [(f"p{p}/m{m}.py", module_text(p, m, 0, packages, modules)) for p, m in paths]
    tip = commit("main", "initial", first, None)
    for n in range(history):
        picked = rng.sample(paths, rng.randint(1, 3))
        tip = commit(
            "main",
            f"edit {n}",
            [(f"p{p}/m{m}.py", module_text(p, m, n + 1, packages, modules)) for p, m in picked],
            tip,
        )
    fork = tip
    for n in range(rebase_commits):
        picked = rng.sample(paths, rng.randint(1, 5))
        fork = commit(
            "storm",
            f"storm {n}",
            [(f"p{p}/m{m}.py", module_text(p, m, 10_000 + n, packages, modules)) for p, m in picked],
            fork,
        )
    commit("main", "base moves", [("README.md", "moved\n")], tip)
    return "".join(out)


def generated_repo(root: Path, files: int, history: int, rebase_commits: int) -> Path:
    repo = root / "generated"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=git_env())
    git(repo, "fast-import", "--quiet", stdin=fast_import_stream(files, history, rebase_commits, seed=7))
    git(repo, "checkout", "-q", "-f", "main")
    return repo


def cloned_repo(root: Path, source: Path, rebase_commits: int) -> Path:
    """Clone ``source`` and add a ``storm`` branch of ``rebase_commits`` commits to rebase."""
    repo = root / "clone"
    subprocess.run(["git", "clone", "-q", str(source), str(repo)], check=True, env=git_env())
    git(repo, "checkout", "-q", "-B", "main")
    git(repo, "checkout", "-q", "-b", "storm", "HEAD~1")
    for n in range(rebase_commits):
        (repo / "knowing-pr-bench.txt").write_text(f"{n}\n")
        git(repo, "add", "knowing-pr-bench.txt", hooks=False)
        git(repo, "commit", "-q", "-m", f"storm {n}", hooks=False)
    git(repo, "checkout", "-q", "main")
    return repo


# -- measurements ----------------------------------------------------------------------------------


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def indexed(db: Path) -> str | None:
    try:
        return read_indexed_commit(db)
    except sqlite3.DatabaseError:
        return None


def wait_fresh(repo: Path, db: Path, timeout_s: float = 600.0) -> float:
    """Seconds until the store reflects HEAD."""
    start = time.perf_counter()
    target = head(repo)
    while indexed(db) != target:
        if time.perf_counter() - start > timeout_s:
            raise SystemExit("the store did not catch up in time")
        time.sleep(0.005)
    return time.perf_counter() - start


def wait_idle(db: Path) -> None:
    import fcntl

    lock = db.parent / "index.lock"
    if lock.exists():
        with open(lock) as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # blocks until no worker holds it


def index_now(repo: Path) -> None:
    subprocess.run([sys.executable, "-m", "knowing_pr", "index", "--repo", str(repo), "--quiet"], check=True)


def index_runs(db: Path) -> int:
    log = db.parent / "hook.log"
    return sum(" indexed " in line for line in log.read_text().splitlines()) if log.exists() else 0


def touch(repo: Path, paths: list[str], n: int) -> None:
    for path in paths:
        with open(repo / path, "a") as handle:
            handle.write(f"\n\ndef bench_{n}():\n    return {n}\n")


def child_cpu_s() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_commit(repo: Path, message: str, *, hooks: bool) -> tuple[float, float]:
    """(wall s, CPU s) of one ``git commit``; a detached worker's CPU is not counted."""
    cpu = child_cpu_s()
    start = time.perf_counter()
    git(repo, "commit", "-q", "-a", "-m", message, hooks=hooks)
    return time.perf_counter() - start, child_cpu_s() - cpu


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_script(hook: Path, repo: Path) -> tuple[float, float]:
    """(wall s, CPU s of the script and everything it waited for); a detached worker is not
    waited for, so its CPU is not counted."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([str(hook)], cwd=repo, env=git_env(), check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def hook_foreground(repo: Path, db: Path, reps: int) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) of the post-commit script run alone: store fresh; store stale (hand-off to
    a worker); mid-rebase with the lock held by a worker not yet announced (Python starts);
    mid-rebase with a waiter announced by its pid file (the path nearly every pick takes)."""
    hook = repo / ".git" / "hooks" / "post-commit"
    times: dict[str, list[tuple[float, float]]] = {"fresh": [], "stale": [], "sequence": [], "waiter": []}
    for n in range(reps):
        wait_idle(db)
        index_now(repo)
        times["fresh"].append(run_script(hook, repo))
        touch(repo, [tracked_py(repo, n)], 900_000 + n)
        git(repo, "commit", "-q", "-a", "-m", f"stale {n}", hooks=False)
        times["stale"].append(run_script(hook, repo))
        wait_fresh(repo, db)
    wait_idle(db)
    import fcntl

    sequence_dir = repo / ".git" / "rebase-merge"
    sequence_dir.mkdir()
    with open(db.parent / "index.lock", "a") as lock:  # this process stands for the waiter
        fcntl.flock(lock, fcntl.LOCK_EX)
        times["sequence"] = [run_script(hook, repo) for _ in range(reps)]
        pid_file = repo / ".git" / "knowing-pr" / WAITER_PID_NAME
        pid_file.write_text(f"{os.getpid()}\n")
        times["waiter"] = [run_script(hook, repo) for _ in range(reps)]
        pid_file.unlink()
    sequence_dir.rmdir()
    return times


def tracked_py(repo: Path, n: int) -> str:
    paths = [p for p in git(repo, "ls-files").splitlines() if p.endswith(".py")] or ["knowing-pr-bench.txt"]
    return paths[(n * 7919) % len(paths)]


def commit_costs(repo: Path, db: Path, files: int, reps: int) -> dict[str, float]:
    without: list[tuple[float, float]] = []
    with_hook: list[tuple[float, float]] = []
    latency: list[float] = []
    for n in range(reps):
        paths = [tracked_py(repo, n * files + k) for k in range(files)]
        touch(repo, paths, 100 * n)
        without.append(timed_commit(repo, f"no hook {n}", hooks=False))
        index_now(repo)  # start the hooked commit from a fresh store
        touch(repo, paths, 100 * n + 1)
        start = time.perf_counter()
        with_hook.append(timed_commit(repo, f"hook {n}", hooks=True))
        wait_fresh(repo, db)
        latency.append(time.perf_counter() - start)
        wait_idle(db)
    return {
        "without": statistics.median(wall for wall, _ in without),
        "with": statistics.median(wall for wall, _ in with_hook),
        "cpu_without": statistics.median(cpu for _, cpu in without),
        "cpu_with": statistics.median(cpu for _, cpu in with_hook),
        "latency": statistics.median(latency),
    }


def rebase_costs(repo: Path, db: Path, storm_tip: str) -> dict[str, float]:
    """``storm_tip``: the branch's tip before any rebase (each measurement starts from it)."""
    count = int(git(repo, "rev-list", "--count", f"main..{storm_tip}").strip())
    git(repo, "checkout", "-q", "-B", "storm", storm_tip, hooks=False)
    start = time.perf_counter()
    git(repo, "rebase", "-q", "main", hooks=False)
    without = time.perf_counter() - start

    git(repo, "checkout", "-q", "-B", "storm", storm_tip, hooks=False)
    index_now(repo)
    runs_before = index_runs(db)
    start = time.perf_counter()
    git(repo, "rebase", "-q", "main", hooks=True)
    with_hook = time.perf_counter() - start
    catch_up = wait_fresh(repo, db)
    wait_idle(db)
    return {
        "commits": count,
        "without": without,
        "with": with_hook,
        "catch_up": catch_up,
        "runs": index_runs(db) - runs_before,
    }


def switch_to_pre_commit(repo: Path, root: Path) -> None:
    """Our scripts out, pre-commit's in (its config kept out of git's view)."""
    uninstall_hooks(str(repo))
    (repo / ".pre-commit-config.yaml").write_text(pre_commit_config(sys.executable))
    with (repo / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write("/.pre-commit-config.yaml\n")
    os.environ["PRE_COMMIT_HOME"] = str(root / "pre-commit-home")
    stages = [arg for name in HOOK_NAMES for arg in ("--hook-type", name)]
    done = subprocess.run(
        ["pre-commit", "install", *stages], cwd=repo, env=git_env(), capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"pre-commit install failed: {done.stderr or done.stdout}")


def shipped_pre_commit_entry(python: str) -> str:
    """``.pre-commit-hooks.yaml``'s entry, with ``knowing-pr`` as this interpreter's module (the
    console script of this checkout may not be on PATH)."""
    text = (Path(__file__).resolve().parents[1] / ".pre-commit-hooks.yaml").read_text()
    folded = text.split("entry: >-\n", 1)[1].split("\n  stages:", 1)[0]
    entry = " ".join(line.strip() for line in folded.splitlines())
    return entry.replace("knowing-pr hook run", f"{python} -m knowing_pr hook run")


def pre_commit_local_config(entry: str) -> str:
    """A ``.pre-commit-config.yaml`` of one local hook at the four post-* stages running ``entry``."""
    quoted = entry.replace("'", "''")
    return (
        "repos:\n  - repo: local\n    hooks:\n      - id: knowing-pr-index\n        name: knowing-pr index\n"
        f"        entry: '{quoted}'\n        language: system\n"
        f"        stages: [{', '.join(HOOK_NAMES)}]\n        always_run: true\n        pass_filenames: false\n"
    )


def pre_commit_commit_costs(repo: Path, db: Path, reps: int) -> dict[str, float]:
    """Medians of 1-file ``git commit`` walls, interleaved in one run: no hook; pre-commit with a
    hook doing nothing; pre-commit with the shipped entry (the store caught up between)."""
    config = repo / ".pre-commit-config.yaml"
    ours = pre_commit_local_config(shipped_pre_commit_entry(sys.executable))
    noop = pre_commit_local_config("true")
    walls: dict[str, list[float]] = {"without": [], "noop": [], "ours": []}
    for n in range(reps):
        path = tracked_py(repo, n)
        for variant in ("without", "noop", "ours"):
            config.write_text(ours if variant == "ours" else noop)
            index_now(repo)
            touch(repo, [path], 200_000 + 10 * n + len(walls[variant]))
            wall, _ = timed_commit(repo, f"pre-commit {variant} {n}", hooks=variant != "without")
            walls[variant].append(wall)
            wait_idle(db)
            if variant == "ours":
                wait_fresh(repo, db)
                wait_idle(db)
    config.write_text(pre_commit_config(sys.executable))
    return {k: statistics.median(v) for k, v in walls.items()}


def pre_commit_config(python: str) -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "reliability"))
    from reliability_support import pre_commit_config as config  # the config docs/hooks.md shows

    return str(config(python))


def pre_commit_first_commits(repo: Path, root: Path) -> tuple[float, float]:
    """(first, second) ``git commit`` wall with the shipped hook as pre-commit users get it: the
    first builds pre-commit's environment for it."""
    source = Path(__file__).resolve().parents[1]
    rev = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=source, capture_output=True, text=True
    ).stdout.strip()
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {source}\n    rev: {rev}\n    hooks:\n      - id: knowing-pr-index\n"
    )
    walls = []
    for n in range(2):
        touch(repo, [tracked_py(repo, n)], 300_000 + n)
        walls.append(timed_commit(repo, f"pre-commit env {n}", hooks=True)[0])
    return walls[0], walls[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, help="a repository to clone and measure (default: generated)")
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--history", type=int, default=300)
    parser.add_argument("--rebase-commits", type=int, default=200)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--reps-hook", type=int, default=10)
    parser.add_argument(
        "--pre-commit", action="store_true", help="also commits and the rebase under pre-commit"
    )
    parser.add_argument(
        "--pre-commit-env",
        action="store_true",
        help="also the first commit as a pre-commit user (builds its env)",
    )
    parser.add_argument("--skip-rebase", action="store_true", help="no rebase measurements (a quicker run)")
    args = parser.parse_args(argv)
    if (args.pre_commit or args.pre_commit_env) and shutil.which("pre-commit") is None:
        parser.error("--pre-commit needs the pre-commit tool on PATH")

    root = Path(tempfile.mkdtemp(prefix="knowing-pr-hook-bench-"))
    try:
        if args.repo:
            repo = cloned_repo(root, args.repo.resolve(), args.rebase_commits)
        else:
            repo = generated_repo(root, args.files, args.history, args.rebase_commits)
        db = Path(store_path(git(repo, "rev-parse", "--absolute-git-dir").strip()))
        tracked = len(git(repo, "ls-files").splitlines())
        start = time.perf_counter()
        index_now(repo)
        cold = time.perf_counter() - start
        install_hooks(str(repo))
        assert all((repo / ".git" / "hooks" / name).exists() for name in HOOK_NAMES)

        hooks_alone = hook_foreground(repo, db, args.reps_hook)
        one = commit_costs(repo, db, 1, args.reps)
        two = commit_costs(repo, db, 2, args.reps)
        storm_tip = git(repo, "rev-parse", "storm").strip()
        storm = None if args.skip_rebase else rebase_costs(repo, db, storm_tip)
        storm_pre_commit = None
        pre_commit_costs = None
        first_commits = None
        if args.pre_commit or args.pre_commit_env:
            switch_to_pre_commit(repo, root)
        if args.pre_commit:
            pre_commit_costs = pre_commit_commit_costs(repo, db, args.reps)
            if not args.skip_rebase:
                storm_pre_commit = rebase_costs(repo, db, storm_tip)
        if args.pre_commit_env:
            first_commits = pre_commit_first_commits(repo, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)

    print(
        f"repository: {'clone of ' + args.repo.name if args.repo else 'generated'}, {tracked} files; "
        f"cold index {cold:.1f} s"
    )
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"{subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.strip()}, "
        f"SQLite {sqlite3.sqlite_version}\n"
    )

    def row(label: str, without: str, with_hook: str, added: str = "–", ratio: str = "–") -> None:
        print(f"| {label} | {without} | {with_hook} | {added} | {ratio} |")

    def ms(seconds: float) -> str:
        return f"{seconds * 1000:.0f} ms"

    print("| measurement | without hook | with hook | added | ratio |")
    print("|---|---|---|---|---|")
    for key, label in (
        ("fresh", "hook alone, store at HEAD"),
        ("stale", "hook alone, store behind: hand-off to a worker"),
        ("sequence", "hook alone, mid-rebase, lock held, no waiter announced yet"),
        ("waiter", "hook alone, mid-rebase, waiter announced (per picked commit)"),
    ):
        walls = [wall for wall, _ in hooks_alone[key]]
        cpus = [cpu for _, cpu in hooks_alone[key]]
        spread = (
            f"p50 {ms(statistics.median(walls))}, p95 {ms(percentile(walls, 0.95))} wall; "
            f"{ms(statistics.median(cpus))} CPU"
        )
        row(f"{label} (n={len(walls)})", "–", spread)
    for label, cost in (("1-file", one), ("2-file", two)):
        added = cost["with"] - cost["without"]
        ratio = f"{cost['with'] / cost['without']:.2f}×"
        row(
            f"`git commit`, {label} (median of {args.reps})",
            ms(cost["without"]),
            ms(cost["with"]),
            f"{added * 1000:+.0f} ms",
            ratio,
        )
        added_cpu = cost["cpu_with"] - cost["cpu_without"]
        row(
            f"`git commit`, {label}: CPU (git + hook foreground)",
            ms(cost["cpu_without"]),
            ms(cost["cpu_with"]),
            f"{added_cpu * 1000:+.0f} ms",
            f"{cost['cpu_with'] / cost['cpu_without']:.2f}×",
        )
        row(f"commit start → store at the new HEAD, {label}", "–", ms(cost["latency"]))
    if pre_commit_costs is not None:
        pc_cost = pre_commit_costs
        row(
            f"`git commit`, 1-file, pre-commit with a hook doing nothing (median of {args.reps})",
            ms(pc_cost["without"]),
            ms(pc_cost["noop"]),
            f"{(pc_cost['noop'] - pc_cost['without']) * 1000:+.0f} ms",
            f"{pc_cost['noop'] / pc_cost['without']:.2f}×",
        )
        row(
            "`git commit`, 1-file, pre-commit with ours (without = pre-commit doing nothing)",
            ms(pc_cost["noop"]),
            ms(pc_cost["ours"]),
            f"{(pc_cost['ours'] - pc_cost['noop']) * 1000:+.0f} ms",
            f"{pc_cost['ours'] / pc_cost['noop']:.2f}×",
        )
    if first_commits is not None:
        row(
            "`git commit` as a pre-commit user: first (builds its env) / second",
            "–",
            f"{first_commits[0]:.1f} s / {first_commits[1] * 1000:.0f} ms",
        )
    if storm is None:
        return 0
    added = storm["with"] - storm["without"]
    per_commit = f"{added:+.2f} s ({added / storm['commits'] * 1000:+.0f} ms per commit)"
    ratio = f"{storm['with'] / storm['without']:.2f}×"
    row(
        f"`git rebase` of {storm['commits']:.0f} commits",
        f"{storm['without']:.2f} s",
        f"{storm['with']:.2f} s",
        per_commit,
        ratio,
    )
    row(
        "rebase: catch-up after it returned; index runs",
        "–",
        f"{storm['catch_up']:.2f} s; {storm['runs']:.0f} run(s)",
    )
    if storm_pre_commit is not None:
        pc = storm_pre_commit
        added = pc["with"] - pc["without"]
        row(
            f"`git rebase` of {pc['commits']:.0f} commits, hook through pre-commit",
            f"{pc['without']:.2f} s",
            f"{pc['with']:.2f} s",
            f"{added:+.2f} s ({added / pc['commits'] * 1000:+.0f} ms per commit)",
            f"{pc['with'] / pc['without']:.2f}×",
        )
        row(
            "pre-commit rebase: catch-up after it returned; index runs",
            "–",
            f"{pc['catch_up']:.2f} s; {pc['runs']:.0f} run(s)",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
