"""A repository with a change → where a fresh ``knowing-pr pr`` spends its time: the interpreter,
the imports (by package, and the share of them that is our own dataclasses being created), the
stages of the run, and the interpreter's exit.

Usage::

    python bench/pr_profile.py --repo PATH [--base HEAD~1] [--head HEAD] [--runs 7] [--db STORE]

Run it with the interpreter knowing-pr is installed in (``knowing-pr index`` the repository
first: an up-to-date store is what is timed). Each figure is the median over ``--runs`` fresh
processes, each started as ``python -c`` with a small driver that runs the console script's
``knowing_pr.cli.run`` (so the git reader is forked as it is for a user: ``knowing_pr.git.served``)
and times, with ``time.perf_counter``:

- ``imports``: from the start to the end of the command's imports (the command line's modules,
  the git reader's fork, ``knowing_pr.pipeline.pr`` and the renderers), split by top-level
  package with ``-X importtime`` (self times summed per package, which over-count a little: the
  flag has its own cost; pygit2 is listed when this process loads it, not the reader);
- ``dataclasses``: the part of the imports spent in ``dataclasses``' class processing (the
  decorator generates and compiles each class's methods);
- the run's stages: the functions of ``pipeline/pr.py`` the driver wraps (cumulative, so a stage
  that calls another counts it too);
- the cycle collector: its passes anywhere in the process, counted and timed with ``gc.callbacks``;
- ``run``: the whole command after the imports; ``exit``: from the command's return to the
  process's end (measured from outside, as the wall time of the process minus the rest).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

DRIVER = r"""
import json, sys, time, functools, importlib, dataclasses, gc
start = time.perf_counter()
spent = {"dataclasses": 0.0, "dataclass_count": 0, "collector": 0.0, "collector_passes": 0}
pass_began = [0.0]
def timed_pass(phase, info):
    # the cycle collector's passes, wherever they land (imports, the run, its end)
    if phase == "start":
        pass_began[0] = time.perf_counter()
    else:
        spent["collector"] += time.perf_counter() - pass_began[0]
        spent["collector_passes"] += 1
gc.callbacks.append(timed_pass)
process_class = dataclasses._process_class
def timed_process_class(*args, **kwargs):
    began = time.perf_counter()
    try:
        return process_class(*args, **kwargs)
    finally:
        spent["dataclasses"] += time.perf_counter() - began
        spent["dataclass_count"] += 1
stages = {}
def wrap(module, name):
    found = importlib.import_module(module)
    original = getattr(found, name)
    @functools.wraps(original)
    def timed(*args, **kwargs):
        began = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            stages[name] = stages.get(name, 0.0) + time.perf_counter() - began
    setattr(found, name, timed)
dataclasses._process_class = timed_process_class
import knowing_pr.cli as cli
preload = cli._preload
imported = None
def timed_preload(command):
    # the command's imports, where the console script makes them: after the git reader is forked
    global imported
    preload(command)
    import knowing_pr.render.markdown, knowing_pr.render.structured
    dataclasses._process_class = process_class
    for name in STAGES:
        wrap("knowing_pr.pipeline.pr", name)
    imported = time.perf_counter()
cli._preload = timed_preload
end_process = cli._end_process
def report_then_end(code):
    # the command is done: its figures, then the process ends as the console script ends it
    done = time.perf_counter()
    sys.stderr.write("PROFILE " + json.dumps({
        "imports": imported - start, "dataclasses": spent["dataclasses"],
        "dataclass_count": spent["dataclass_count"], "run": done - imported,
        "collector": spent["collector"], "collector_passes": spent["collector_passes"],
        "started_to_done": done - start, **{"stage:" + k: v for k, v in stages.items()}}) + "\n")
    sys.stdout = sys.__stdout__
    end_process(code)
cli._end_process = report_then_end
sys.argv = ["knowing-pr", *ARGS]
import io, contextlib
with contextlib.redirect_stdout(io.StringIO()):
    code = cli.run()
raise SystemExit(code)
"""

STAGES = (
    "index_commit",
    "start_base_definitions",
    "read_history_signals",
    "load_adjacency",
    "prepare_ranking",
    "change_facts",
    "rank_candidates",
    "reviewer_summary",
    "build_pack",
    "manifest_of",
)
GROUPS = ("knowing_pr", "numpy", "pygit2", "tree_sitter", "tree_sitter_language_pack", "sqlite3")


def one_run(repo: Path, args: list[str]) -> dict[str, float]:
    driver = DRIVER.replace("STAGES", repr(list(STAGES))).replace("ARGS", repr(args))
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", driver], cwd=repo, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - began
    line = next((x for x in done.stderr.splitlines() if x.startswith("PROFILE ")), None)
    if done.returncode != 0 or line is None:
        raise SystemExit(f"knowing-pr pr failed:\n{done.stderr[-2000:]}")
    figures: dict[str, float] = json.loads(line[len("PROFILE ") :])
    figures["wall"] = wall
    figures["exit"] = wall - figures["started_to_done"]
    return figures


def import_groups(repo: Path) -> dict[str, float]:
    """Self times of ``-X importtime`` summed per top-level package (seconds)."""
    done = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-c",
            "import knowing_pr.pipeline.pr, knowing_pr.render.markdown",
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    groups: dict[str, float] = {}
    for line in done.stderr.splitlines():
        found = re.match(r"import time:\s+(\d+) \|\s+\d+ \| +(\S+)", line)
        if found:
            top = found.group(2).split(".")[0]
            key = top if top in GROUPS else "standard library and other"
            groups[key] = groups.get(key, 0.0) + int(found.group(1)) / 1e6
    return groups


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--base", default="HEAD~1")
    parser.add_argument("--head", default="HEAD")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--db", default=None, help="the store (default: the repository's own)")
    options = parser.parse_args()
    args = ["pr", "--base", options.base, "--head", options.head]
    if options.db:
        args += ["--db", options.db]
    runs = [one_run(options.repo, args) for _ in range(options.runs)]
    groups = [import_groups(options.repo) for _ in range(options.runs)]
    print(f"`knowing-pr {' '.join(args)}` in {options.repo.name}, {options.runs} fresh processes, medians\n")
    print("| part | ms |")
    print("|---|---|")

    def median(key: str) -> float:
        return 1000 * statistics.median(r.get(key, 0.0) for r in runs)

    print(f"| whole process (wall) | {median('wall'):.0f} |")
    print(f"| interpreter start and exit | {median('wall') - median('started_to_done'):.0f} |")
    print(f"| imports | {median('imports'):.0f} |")
    count = statistics.median(r["dataclass_count"] for r in runs)
    print(f"| of which creating dataclasses ({count:.0f} classes) | {median('dataclasses'):.0f} |")
    print(f"| run | {median('run'):.0f} |")
    passes = statistics.median(r["collector_passes"] for r in runs)
    print(
        f"| the cycle collector's passes, anywhere in the process ({passes:.0f}) | {median('collector'):.1f} |"
    )
    for stage in STAGES:
        print(f"| run: `{stage}` | {median('stage:' + stage):.1f} |")
    print("\nImport self times by package (`-X importtime`, medians, ms):\n")
    print("| package | ms |")
    print("|---|---|")
    keys = sorted(
        {k for g in groups for k in g}, key=lambda k: -statistics.median(g.get(k, 0.0) for g in groups)
    )
    for key in keys:
        print(f"| {key} | {1000 * statistics.median(g.get(key, 0.0) for g in groups):.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
