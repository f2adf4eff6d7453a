"""fastapi and Django → how fast ``knowing-pr pr`` answers as a fresh process, beside ``python -c pass``
and code-review-graph's ``detect-changes`` in the same run; and how fast a warm ``knowing-pr mcp``
answers a pull request.

Usage::

    python bench/pr_start.py --fastapi PATH [--fastapi-rev REV] [--work DIR] [--runs 21] [--mcp-runs 50]
                             [--before REV]

``--fastapi`` is a clone or a bare mirror of github.com/fastapi/fastapi, pinned with
``--fastapi-rev`` (default: the newest first-parent commit that changed ``fastapi/``, so the
change is code, not release notes). Django is the sdist of 5.1.4, fetched with
``pip download --no-deps --no-binary :all: django==5.1.4``, unpacked and committed into a
temporary git repository, with a second commit that edits ``django/utils/text.py`` (the change
the packs are for). On fastapi the change is the pinned commit (``--base HEAD~1 --head HEAD``); its files and
line counts are printed.

The script makes two virtual environments under ``--work`` (default: a temporary directory):
one with this checkout installed (not editable, as a user gets it; reinstalled on every run)
and one with
code-review-graph from PyPI (``pip install code-review-graph``); both indexes are built before
timing (``knowing-pr index``, ``code-review-graph build``). Then, for ``--runs`` rounds, in
turn: ``python -c pass`` and ``knowing-pr pr --base HEAD~1 --head HEAD`` with the bench
interpreter, and ``code-review-graph detect-changes --base HEAD~1`` with its own. Each figure is
the median (and p90) of the wall time and of the CPU time (user + system, from ``wait4``) of
the whole process; the CPU time is what a busy machine disturbs least. It counts the command's
process and the children it waited for: since ``e821575`` the console script leaves its git
reader (``knowing_pr.git.served``) for the system to reap, so the reader's CPU time is no longer
in it (compare wall times across that commit). ``--before REV`` also
installs that revision of knowing-pr (``git archive``) into a third environment and times its
``pr`` in the same rounds, on a store of its own that it indexed (``--db``). The current
revision's store is indexed in full before timing, as a first index builds it.

MCP: ``knowing-pr mcp --repo <Django>`` is started and driven by the official SDK's client over
stdio; after one warm-up call, ``--mcp-runs`` ``pack_pr`` calls (the same base/head change, and
random 1–3-file ``files`` changes) are timed from the client; p50 and p95 are printed, with
the server process's CPU time per call (psutil, from the test extra).
"""

from __future__ import annotations

import argparse
import io
import os
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DJANGO = "django==5.1.4"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_AUTHOR_DATE": "1700000000 +0000",
    "GIT_COMMITTER_DATE": "1700000000 +0000",
}


def run(*command: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env={**os.environ, **GIT_ENV, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, command))} failed:\n{result.stderr[-2000:]}")
    return result.stdout


# -- the repositories ----------------------------------------------------------------------------


def fastapi_clone(source: str, rev: str | None, work: Path) -> Path:
    """A clone at ``rev``, default the newest commit that changed fastapi's own Python code."""
    target = work / "fastapi"
    if not target.exists():
        run("git", "clone", "-q", "--shared", source, target)
    if rev is None:
        rev = run(
            "git", "-C", target, "log", "-1", "--first-parent", "--format=%H", "origin/HEAD", "--", "fastapi/"
        )
    run("git", "-C", target, "checkout", "-q", "--detach", rev.strip())
    return target


def django_repository(work: Path) -> Path:
    target = work / "django"
    if target.exists():
        return target
    download = work / "download"
    run(
        sys.executable,
        "-m",
        "pip",
        "download",
        "-q",
        "--no-deps",
        "--no-binary",
        ":all:",
        DJANGO,
        "-d",
        download,
    )
    [archive] = download.glob("Django-*.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(work, filter="data")
    (work / archive.name.removesuffix(".tar.gz")).rename(target)
    run("git", "init", "-q", target)
    run("git", "-C", target, "add", "-A")
    run("git", "-C", target, "commit", "-q", "-m", "Django 5.1.4 sdist")
    text = target / "django" / "utils" / "text.py"
    source = text.read_text(encoding="utf-8")
    text.write_text(source.replace("def capfirst(x):", "def capfirst(x):\n    # bench: a one-line change", 1))
    run("git", "-C", target, "commit", "-q", "-am", "bench: edit capfirst")
    return target


# -- the environments ----------------------------------------------------------------------------


def environment(path: Path, *packages: str) -> Path:
    """A virtual environment with ``packages`` installed (made once per ``--work``)."""
    python = path / "bin" / "python"
    if not python.exists():
        venv.create(path, with_pip=True)
        run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *packages)
    return python


# -- timing --------------------------------------------------------------------------------------


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """(wall ms, CPU ms) of one process, its output discarded."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        error = process.stderr.read().decode(errors="replace") if process.stderr else ""
        raise SystemExit(f"{' '.join(command)} exited {process.returncode}: {error[-1500:]}")
    if process.stderr:
        process.stderr.close()
    return wall, (usage.ru_utime + usage.ru_stime) * 1000


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def compare(
    name: str, repo: Path, ours: Path, theirs: Path, runs: int, before: tuple[str, Path] | None
) -> None:
    knowing = Path(ours).parent / "knowing-pr"
    crg = Path(theirs).parent / "code-review-graph"
    commands: dict[str, list[str]] = {
        "python -c pass": [str(ours), "-c", "pass"],
        "knowing-pr pr --base HEAD~1 --head HEAD": [
            str(knowing),
            "pr",
            "--repo",
            str(repo),
            "--base",
            "HEAD~1",
            "--head",
            "HEAD",
        ],
        "code-review-graph detect-changes --base HEAD~1": [
            str(crg),
            "detect-changes",
            "--repo",
            str(repo),
            "--base",
            "HEAD~1",
        ],
    }
    if before is not None:
        rev, python = before
        then = Path(python).parent / "knowing-pr"
        # its own store: a store's schema may be newer than that revision reads
        store = Path(python).parent.parent / f"{name}.sqlite"
        run(then, "index", "--repo", repo, "--db", store, "--quiet")
        commands[f"knowing-pr pr (at {rev})"] = [
            str(then),
            *commands["knowing-pr pr --base HEAD~1 --head HEAD"][1:],
            "--db",
            str(store),
        ]
    for command in commands.values():  # warm the page cache and both indexes' files
        timed(command, repo)
    walls: dict[str, list[float]] = {k: [] for k in commands}
    cpus: dict[str, list[float]] = {k: [] for k in commands}
    for _ in range(runs):
        for key, command in commands.items():
            wall, cpu = timed(command, repo)
            walls[key].append(wall)
            cpus[key].append(cpu)
    print(f"\n{name} ({runs} rounds)\n")
    print("| command | wall p50 ms | wall p90 ms | CPU p50 ms | CPU p90 ms |")
    print("|---|---|---|---|---|")
    for key in commands:
        print(
            f"| `{key}` | {statistics.median(walls[key]):.0f} | {percentile(walls[key], 0.9):.0f} "
            f"| {statistics.median(cpus[key]):.0f} | {percentile(cpus[key], 0.9):.0f} |"
        )
    ours_key = "knowing-pr pr --base HEAD~1 --head HEAD"
    ours_wall = statistics.median(walls[ours_key])
    theirs_wall = statistics.median(walls["code-review-graph detect-changes --base HEAD~1"])
    bare = statistics.median(walls["python -c pass"])
    print(
        f"\nknowing-pr / code-review-graph: {ours_wall / theirs_wall:.2f}; knowing-pr / python -c pass: "
        f"{ours_wall / bare:.1f} (wall p50)"
    )
    if before is not None:
        then = f"knowing-pr pr (at {before[0]})"
        print(
            f"knowing-pr now / at {before[0]}: wall {ours_wall / statistics.median(walls[then]):.2f}, "
            f"CPU {statistics.median(cpus[ours_key]) / statistics.median(cpus[then]):.2f}"
        )


# -- MCP -----------------------------------------------------------------------------------------


def mcp_latency(repo: Path, ours: Path, runs: int) -> None:
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    paths = [
        p
        for p in run("git", "-C", repo, "ls-files", "django/").splitlines()
        if p.endswith(".py") and "/tests/" not in p and "/migrations/" not in p
    ]
    rng = random.Random(1)
    server = StdioServerParameters(
        command=str(Path(ours).parent / "knowing-pr"), args=["mcp", "--repo", str(repo)]
    )

    cpu_ms: dict[str, float] = {}

    def server_cpu_s() -> float:
        """CPU seconds of the server process so far (psutil, from the test extra)."""
        import psutil

        for child in psutil.Process().children(recursive=True):
            if "mcp" in child.cmdline():
                times = child.cpu_times()
                return float(times.user + times.system)
        return float("nan")

    async def drive() -> dict[str, list[float]]:
        times: dict[str, list[float]] = {"base/head": [], "files": []}
        with open(os.devnull, "w") as quiet:
            async with (
                stdio_client(server, errlog=quiet) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await session.call_tool("pack_pr", {"base": "HEAD~1", "head": "HEAD"})  # warm-up
                spent = dict.fromkeys(times, 0.0)
                for _ in range(runs):
                    for key in times:
                        before = server_cpu_s()
                        arguments = (
                            {"base": "HEAD~1", "head": "HEAD"}
                            if key == "base/head"
                            else {"files": rng.sample(paths, rng.randint(1, 3))}
                        )
                        start = time.perf_counter()
                        result = await session.call_tool("pack_pr", arguments)
                        times[key].append((time.perf_counter() - start) * 1000)
                        spent[key] += server_cpu_s() - before
                        if result.is_error:
                            raise SystemExit(f"pack_pr failed: {result.content}")
                cpu_ms.update({key: 1000 * value / runs for key, value in spent.items()})
        return times

    times = anyio.run(drive)
    print(f"\nMCP `pack_pr` on Django, warm server, {runs} calls each\n")
    print("| change | p50 ms | p95 ms | server CPU per call, mean ms |")
    print("|---|---|---|---|")
    for key, values in times.items():
        print(
            f"| {key} | {statistics.median(values):.1f} | {percentile(values, 0.95):.1f} | {cpu_ms[key]:.1f} |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fastapi", required=True, help="a clone or bare mirror of fastapi")
    parser.add_argument("--fastapi-rev", default=None)
    parser.add_argument("--work", default=None, help="where the repositories and environments go (kept)")
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--mcp-runs", type=int, default=50)
    parser.add_argument("--before", default=None, metavar="REV", help="also time this revision of knowing-pr")
    args = parser.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="knowing-pr-start-"))
    work.mkdir(parents=True, exist_ok=True)
    ours = environment(work / "venv-knowing-pr", str(ROOT))
    run(
        ours,
        "-m",
        "pip",
        "install",
        "-q",
        "--disable-pip-version-check",
        "--no-deps",
        "--force-reinstall",
        ROOT,
    )
    theirs = environment(work / "venv-code-review-graph", "code-review-graph")
    before = None
    if args.before:
        source = work / f"knowing-pr-{args.before}"
        if not source.exists():
            source.mkdir(parents=True)
            archive = subprocess.run(
                ["git", "-C", ROOT, "archive", args.before], capture_output=True, check=True
            )
            with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
                tar.extractall(source, filter="data")
        before = (args.before, environment(work / f"venv-knowing-pr-{args.before}", str(source)))
    dirty = (
        "+uncommitted" if run("git", "-C", ROOT, "status", "--porcelain", "--", "knowing_pr").strip() else ""
    )
    print(
        f"knowing-pr at {run('git', '-C', ROOT, 'rev-parse', '--short', 'HEAD').strip()}{dirty}; "
        f"code-review-graph {run(theirs, '-m', 'pip', 'show', 'code-review-graph').split()[3]}; "
        f"{os.cpu_count()} CPUs, load average at start {os.getloadavg()[0]:.1f}"
    )
    repos = {
        "fastapi": fastapi_clone(args.fastapi, args.fastapi_rev, work),
        "Django": django_repository(work),
    }
    for name, repo in repos.items():
        change = run("git", "-C", repo, "show", "--stat", "--format=%h %s", "HEAD").strip().splitlines()
        print(f"\n{name}: the change is {change[0]}; {change[-1].strip()}")
        # a full index, as a first one: a store kept from an older schema lacks what it adds
        run(Path(ours).parent / "knowing-pr", "index", "--repo", repo, "--full", "--quiet")
        run(Path(theirs).parent / "code-review-graph", "build", "--repo", repo, "-q")
        compare(name, repo, ours, theirs, args.runs, before)
    mcp_latency(repos["Django"], ours, args.mcp_runs)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
