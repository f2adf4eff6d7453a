"""F1/F2 long run: kill ``knowing-pr index`` at random points and at the write transaction's
boundaries, then check the store against the consistency oracle → one markdown table.

Usage::

    python bench/reliability/crash.py [--files 150] [--kills 200] [--interrupts 50] [--seed 1]

Per mode (full = a cold ``index --full`` into an empty store, incremental = C1 → C2 with
edits, renames, deletions and additions): ``--kills`` SIGKILLs after a delay drawn uniformly
over the measured duration, plus a kill when the ``.writing`` marker appears (inside the
transaction) and when it disappears (just after COMMIT), 5 times each; then ``--interrupts``
SIGINTs and SIGTERMs of the incremental run. After every kill: the store opens and passes
the oracle (quick_check + integrity_check, FTS5 integrity-check, no dangling edge, the
logical dump equals a clean full index at the previous or the new commit) and the next run
reaches HEAD and passes the oracle too.
"""

from __future__ import annotations

import argparse
import platform
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path[:0] = [str(HERE.parents[2]), str(HERE.parents[2] / "tests" / "reliability")]

from crash_support import build_history, kill_during, measure_index_seconds, reset_store  # noqa: E402
from reliability_support import Oracle, sidecar_files  # noqa: E402

from knowing_pr.config import Settings  # noqa: E402
from knowing_pr.git import GitRepo  # noqa: E402
from knowing_pr.index import index_commit  # noqa: E402


def integrity_check(db: Path) -> str:
    if not db.exists():
        return "ok"
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=150)
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--interrupts", type=int, default=50)
    parser.add_argument("--boundary-repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="knowing-pr-crash-") as tmp:
        root = Path(tmp)
        repo = root / "repo"
        c1, c2 = build_history(repo, args.files)
        oracle = Oracle(repo, root / "clean")
        template = root / "c1.sqlite"
        index_commit(GitRepo.open(str(repo)), Settings(), rev=c1, db_path=template)
        db = root / "index.sqlite"
        full_s = measure_index_seconds(repo, db, ("--full",))
        inc_s = measure_index_seconds(repo, db, template=template)
        rows = []
        plans: list[tuple[str, Path | None, tuple[str | None, ...], list[dict[str, object]]]] = []
        for mode, tpl, allowed, duration in (
            ("full", None, (None, c2), full_s),
            ("incremental", template, (c1, c2), inc_s),
        ):
            runs: list[dict[str, object]] = [
                {"delay_s": rng.uniform(0, duration), "sig": signal.SIGKILL} for _ in range(args.kills)
            ]
            for at in ("marker-appears", "marker-gone"):
                runs += [{"at": at, "sig": signal.SIGKILL}] * args.boundary_repeats
            plans.append((mode, tpl, allowed, runs))
        for sig in (signal.SIGINT, signal.SIGTERM):
            runs = [{"delay_s": rng.uniform(0.2, inc_s), "sig": sig} for _ in range(args.interrupts)]
            plans.append((f"incremental {signal.Signals(sig).name}", template, (c1, c2), runs))
        for label, tpl, allowed, runs in plans:
            killed = inconsistent = integrity_failures = not_caught_up = leftovers = tracebacks = 0
            started = time.monotonic()
            for run in runs:
                reset_store(tpl, db)
                extra = ("--full",) if label == "full" else ()
                outcome = kill_during(
                    repo, db, args=extra, sig=int(run["sig"]), delay_s=run.get("delay_s"), at=run.get("at")
                )  # type: ignore[arg-type]
                killed += not outcome.finished_first
                tracebacks += "Traceback" in outcome.stderr
                if run["sig"] != signal.SIGKILL and not outcome.finished_first:
                    leftovers += bool(sidecar_files(db))
                inconsistent += bool(oracle.problems(db, allowed))
                integrity_failures += integrity_check(db) != "ok"
                index_commit(GitRepo.open(str(repo)), Settings(), db_path=db)
                not_caught_up += bool(oracle.problems(db, (c2,)))
            rows.append(
                (
                    label,
                    len(runs),
                    killed,
                    inconsistent,
                    integrity_failures,
                    not_caught_up,
                    leftovers,
                    tracebacks,
                    time.monotonic() - started,
                )
            )
    git = subprocess.run(["git", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    print(
        f"machine: {platform.platform()}, {platform.processor() or platform.machine()}; {git}; "
        f"Python {platform.python_version()}; SQLite {sqlite3.sqlite_version}"
    )
    print(
        f"repository: {args.files} files (C1) → C2; full index {full_s:.2f} s,"
        f" incremental {inc_s:.2f} s (CLI wall)\n"
    )
    print(
        "| run | runs | killed before the end | inconsistent stores | integrity_check failures |"
        " next run not at HEAD | marker/lock left (signals) | tracebacks | wall s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(x) if not isinstance(x, float) else f"{x:.0f}" for x in row) + " |")
    bad = sum(r[3] + r[4] + r[5] + r[6] + r[7] for r in rows)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
