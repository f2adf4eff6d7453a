"""Coverage figure of the reliability test list: line and branch coverage of the hook, store
and renderer modules (and the whole package), with the reliability suite counted separately
→ one markdown table (or ``--json``).

Usage::

    python bench/reliability/coverage.py [--json]

Two measured runs of the test suite under coverage.py (``branch = True``; subprocesses that
start a normal interpreter are measured too, through coverage's ``patch = subprocess``):

* **unit**: ``tests/`` without ``tests/reliability/``;
* **reliability**: ``tests/reliability/`` alone (RELIABILITY.md §2);

and their union (**all**). Not measured: code that runs in an interpreter started with
``-S`` (the installed hook scripts start Python without ``site``, so coverage cannot hook
in; ``tests/test_hooks.py`` also drives ``knowing_pr.hooks`` in process) and code after a
``fork`` that ends in ``os._exit`` (the forked parse of small batches).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GROUPS = {
    "hooks": ("knowing_pr/hooks/",),
    "store": ("knowing_pr/store/",),
    "render": ("knowing_pr/render/",),
    "whole package": ("knowing_pr/",),
}
RCFILE = """[run]
branch = True
parallel = True
source = knowing_pr
patch = subprocess
data_file = {data}
"""


def measured_run(name: str, tests: list[str], work: Path) -> tuple[Path, dict[str, Any]]:
    """Run pytest under coverage; returns the combined data file and the pytest outcome."""
    data = work / name / ".coverage"
    data.parent.mkdir(parents=True)
    rc = work / name / "coveragerc"
    rc.write_text(RCFILE.format(data=data), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("COV_CORE")}
    env["COVERAGE_RCFILE"] = str(rc)
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "coverage",
            "run",
            f"--rcfile={rc}",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            *tests,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]
    failures = [line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    subprocess.run(
        [sys.executable, "-m", "coverage", "combine", f"--rcfile={rc}", "-q"], cwd=ROOT, env=env, check=True
    )
    return data, {
        "exit": done.returncode,
        "summary": summary,
        "failures": failures,
        "seconds": round(time.monotonic() - started),
    }


def file_totals(data: Path, rc: Path, work: Path) -> dict[str, dict[str, int]]:
    """Per file: statements, covered lines, branches, covered branches (coverage's JSON report)."""
    out = work / f"{data.parent.name}.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "coverage",
            "json",
            f"--rcfile={rc}",
            f"--data-file={data}",
            "-o",
            str(out),
            "-q",
        ],
        cwd=ROOT,
        check=True,
    )
    report = json.loads(out.read_text(encoding="utf-8"))
    return {
        path: {
            "statements": f["summary"]["num_statements"],
            "covered_lines": f["summary"]["covered_lines"],
            "branches": f["summary"]["num_branches"],
            "covered_branches": f["summary"]["covered_branches"],
        }
        for path, f in report["files"].items()
    }


def group_figures(totals: dict[str, dict[str, int]]) -> dict[str, dict[str, float]]:
    figures: dict[str, dict[str, float]] = {}
    for group, prefixes in GROUPS.items():
        rows = [t for path, t in totals.items() if path.replace(os.sep, "/").startswith(prefixes)]
        statements = sum(r["statements"] for r in rows)
        branches = sum(r["branches"] for r in rows)
        figures[group] = {
            "line_pct": round(100 * sum(r["covered_lines"] for r in rows) / statements, 1)
            if statements
            else 0.0,
            "branch_pct": round(100 * sum(r["covered_branches"] for r in rows) / branches, 1)
            if branches
            else 0.0,
            "statements": statements,
            "branches": branches,
        }
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    unit_tests = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_*.py"))
    with tempfile.TemporaryDirectory(prefix="knowing-pr-coverage-") as tmp:
        work = Path(tmp)
        unit_data, unit_run = measured_run("unit", unit_tests, work)
        rel_data, rel_run = measured_run("reliability", ["tests/reliability"], work)
        union = work / "all" / ".coverage"
        union.parent.mkdir()
        rc = work / "all" / "coveragerc"
        rc.write_text(RCFILE.format(data=union), encoding="utf-8")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "coverage",
                "combine",
                f"--rcfile={rc}",
                "--keep",
                "-q",
                str(unit_data),
                str(rel_data),
            ],
            cwd=ROOT,
            check=True,
        )
        results: dict[str, Any] = {
            "runs": {"unit": unit_run, "reliability": rel_run},
            "unit": group_figures(file_totals(unit_data, work / "unit" / "coveragerc", work)),
            "reliability": group_figures(file_totals(rel_data, work / "reliability" / "coveragerc", work)),
            "all": group_figures(file_totals(union, rc, work)),
        }
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for name, run in results["runs"].items():
            print(f"{name} run: {run['summary']} ({run['seconds']} s, exit {run['exit']})")
            for line in run["failures"]:
                print(f"  {line}")
        print(
            "\n| modules | unit tests: line / branch | reliability suite: line / branch | all: line / branch |"
        )
        print("|---|---|---|---|")
        for group in GROUPS:
            cells = [
                f"{results[run][group]['line_pct']}% / {results[run][group]['branch_pct']}%"
                for run in ("unit", "reliability", "all")
            ]
            size = results["all"][group]
            print(
                f"| {group} ({size['statements']:,} statements, {size['branches']:,} branches) | "
                + " | ".join(cells)
                + " |"
            )
    return 0 if all(run["exit"] == 0 for run in results["runs"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
