"""Load figures L3 and L4 of the reliability test list: generated repositories → one markdown
table (or ``--json``).

Usage::

    python bench/reliability/load.py [--files 100000] [--commits 20] [--pr-repo-files 6000]
                                     [--only l3|l4] [--seed 1] [--json]

L3 (monorepo). ``--files`` small modules in Python, JavaScript, Go and Java that import and
call each other are written straight into the git object database with pygit2 (blobs,
trees, one commit; no work tree) and packed with ``git repack``. Then:

* a cold index as a fresh process (``python -m knowing_pr index --repo R --full --quiet
  --json``): wall time, CPU seconds of the process and its children
  (``RUSAGE_CHILDREN``), files/s, peak RSS of the indexer and of its parse workers, store
  size (MB and bytes per indexed file);
* ``--commits`` commits that each edit one file (made with pygit2 on top of HEAD, objects
  only), each indexed in process with ``knowing_pr.index.index_commit``: p50/p95 wall ms.

L4 (a large PR). A generated repository of ``--pr-repo-files`` files at base B, and a head H
that modifies 1,400 files, renames 500 with an edit and deletes 100 (2,000 files). The store
is indexed at B first (a restored cache). Then:

* ``knowing-pr pr --base B --head H`` as a fresh process: wall time (it brings the store to
  H first) and peak RSS, the rendered markdown's size against the token budget, and a
  second run with the store already at H;
* the rename pairs the diff finds (expected 500);
* the same change through the Action: ``knowing_pr.action.run_action`` in a fresh process,
  its environment set as on a runner, PyGithub pointed through ``GITHUB_API_URL`` at the
  stand-in GitHub server of ``tests/fake_github.py``: wall time, API calls from the server's
  request log, comment bytes against 65,536 and job-summary bytes against 1 MiB.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2
from pygit2.enums import FileMode

HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fake_github import FakeGitHub  # noqa: E402

from knowing_pr.config import Settings  # noqa: E402
from knowing_pr.git import GitRepo  # noqa: E402
from knowing_pr.index import index_commit  # noqa: E402

EPOCH_S = 1_700_000_000


# -- the generated repository ----------------------------------------------------------------------


@dataclass(frozen=True)
class Module:
    """One generated source file: its language, package and module numbers and dependencies."""

    language: str
    package: int
    number: int
    deps: tuple[tuple[int, int], ...]  # (package, module) of the same language
    extras: int  # helper functions beyond the fixed skeleton, for a spread of file sizes

    @property
    def path(self) -> str:
        return module_path(self.language, self.package, self.number)


def module_path(language: str, package: int, number: int) -> str:
    service = package // 25
    if language == "py":
        return f"app/svc_{service}/pkg_{package}/mod_{number}.py"
    if language == "js":
        return f"web/svc_{service}/pkg_{package}/mod_{number}.js"
    if language == "go":
        return f"go/svc_{service}/pkg_{package}/mod_{number}.go"
    return f"java/src/main/java/com/example/svc_{service}/pkg_{package}/Mod{number}.java"


def plan_modules(total: int, rng: random.Random, *, per_package: int = 40) -> list[Module]:
    """``total`` modules split 40/25/20/15 % over Python/JS/Go/Java, each importing 1-3 earlier
    modules of its own package or of one of the 20 packages before it (no cycles)."""
    shares = (("py", 0.40), ("js", 0.25), ("go", 0.20), ("java", 0.15))
    counts = {lang: int(total * share) for lang, share in shares}
    counts["py"] += total - sum(counts.values())
    modules = []
    for language, count in counts.items():
        for index in range(count):
            package, number = divmod(index, per_package)
            earlier = index
            deps = set()
            for _ in range(rng.randint(1, 3) if earlier else 0):
                target = rng.randrange(max(0, earlier - 20 * per_package), earlier)
                deps.add(divmod(target, per_package))
            extras = min(rng.randrange(8), rng.randrange(8))  # mostly small, a few larger
            modules.append(Module(language, package, number, tuple(sorted(deps)), extras))
    return modules


def module_source(module: Module, version: int = 0) -> str:
    render = {"py": python_source, "js": javascript_source, "go": go_source, "java": java_source}
    text = render[module.language](module, version)
    helpers = "".join(helper_source(module, k) for k in range(module.extras))
    if module.language == "java":
        return text.rstrip().removesuffix("}") + helpers + "}\n"
    return text + helpers


def helper_source(m: Module, k: int) -> str:
    """One more small function that calls the module's main one."""
    p, n = m.package, m.number
    if m.language == "py":
        return (
            f"\n\ndef helper_{p}_{n}_{k}(values: list[int]) -> list[int]:\n"
            f'    """Helper {k}: process every value above {k}."""\n'
            f"    return [process_{p}_{n}(v) for v in values if v > {k}]\n"
        )
    if m.language == "js":
        return (
            f"\n// Helper {k}: process every value above {k}.\n"
            f"export function helper_{p}_{n}_{k}(values) {{\n"
            f"  return values.filter((v) => v > {k}).map((v) => process_{p}_{n}(v));\n}}\n"
        )
    if m.language == "go":
        return (
            f"\n// Helper{n}x{k} processes every value above {k}.\n"
            f"func Helper{n}x{k}(values []int) []int {{\n\tout := []int{{}}\n"
            f"\tfor _, v := range values {{\n\t\tif v > {k} {{\n\t\t\tout = append(out, Process{n}(v))\n\t\t}}\n\t}}\n"
            f"\treturn out\n}}\n"
        )
    return (
        f"\n    /** Helper {k}: process the value when it is above {k}. */\n"
        f"    public static int helper{k}(int value) {{\n"
        f"        return value > {k} ? process(value) : 0;\n    }}\n"
    )


def python_source(m: Module, version: int) -> str:
    p, n = m.package, m.number
    imports = [
        f"from app.svc_{dp // 25}.pkg_{dp}.mod_{dn} import Widget_{dp}_{dn}, process_{dp}_{dn}"
        for dp, dn in m.deps
    ]
    calls = " + ".join(f"process_{dp}_{dn}(value)" for dp, dn in m.deps) or "value"
    helper = f"Widget_{m.deps[0][0]}_{m.deps[0][1]}(size)" if m.deps else "None"
    return "\n".join(
        [
            f'"""Module {n} of package {p}: widgets and their processing (v{version})."""',
            "",
            "from __future__ import annotations",
            "",
            *imports,
            "",
            f"LIMIT_{p}_{n} = {(p * 7 + n) % 97 + version}",
            "",
            "",
            f"class Widget_{p}_{n}:",
            f'    """A widget of package {p}."""',
            "",
            "    def __init__(self, size: int) -> None:",
            "        self.size = size",
            f"        self.helper = {helper}",
            "",
            "    def compute(self, value: int) -> int:",
            f"        return {calls} + self.size",
            "",
            "    def describe(self) -> str:",
            f'        return f"widget {p}/{n} of size {{self.size}}"',
            "",
            "",
            f"def process_{p}_{n}(value: int) -> int:",
            f'    """Clamp, then compute through a widget of package {p}."""',
            f"    if value > LIMIT_{p}_{n}:",
            f"        value = LIMIT_{p}_{n}",
            f"    return Widget_{p}_{n}(value).compute(value)",
            "",
            "",
            f"def summarize_{p}_{n}(values: list[int]) -> int:",
            "    total = 0",
            "    for value in values:",
            f"        total += process_{p}_{n}(value)",
            "    return total",
            "",
        ]
    )


def javascript_source(m: Module, version: int) -> str:
    p, n = m.package, m.number

    def rel(dp: int, dn: int) -> str:
        if dp == p:
            return f"./mod_{dn}.js"
        return f"../../svc_{dp // 25}/pkg_{dp}/mod_{dn}.js"

    imports = [f"import {{ Widget_{dp}_{dn}, process_{dp}_{dn} }} from '{rel(dp, dn)}';" for dp, dn in m.deps]
    calls = " + ".join(f"process_{dp}_{dn}(value)" for dp, dn in m.deps) or "value"
    helper = f"new Widget_{m.deps[0][0]}_{m.deps[0][1]}(size)" if m.deps else "null"
    return "\n".join(
        [
            f"// Module {n} of package {p}: widgets and their processing (v{version}).",
            *imports,
            "",
            f"export const LIMIT_{p}_{n} = {(p * 7 + n) % 97 + version};",
            "",
            f"export class Widget_{p}_{n} {{",
            "  constructor(size) {",
            "    this.size = size;",
            f"    this.helper = {helper};",
            "  }",
            "",
            "  compute(value) {",
            f"    return {calls} + this.size;",
            "  }",
            "",
            "  describe() {",
            f"    return `widget {p}/{n} of size ${{this.size}}`;",
            "  }",
            "}",
            "",
            f"export function process_{p}_{n}(value) {{",
            f"  const clamped = Math.min(value, LIMIT_{p}_{n});",
            f"  return new Widget_{p}_{n}(clamped).compute(clamped);",
            "}",
            "",
            f"export function summarize_{p}_{n}(values) {{",
            f"  return values.reduce((total, value) => total + process_{p}_{n}(value), 0);",
            "}",
            "",
        ]
    )


def go_source(m: Module, version: int) -> str:
    p, n = m.package, m.number
    other = sorted({dp for dp, _ in m.deps if dp != p})
    imports = [f'\t"example.com/mono/go/svc_{dp // 25}/pkg_{dp}"' for dp in other]

    def call(dp: int, dn: int) -> str:
        return f"Process{dn}(value)" if dp == p else f"pkg_{dp}.Process{dn}(value)"

    calls = " + ".join(call(dp, dn) for dp, dn in m.deps) or "value"
    return "\n".join(
        [
            f"// Package pkg_{p}: widgets and their processing (module {n}, v{version}).",
            f"package pkg_{p}",
            "",
            "import (",
            '\t"fmt"',
            *imports,
            ")",
            "",
            f"const Limit{n} = {(p * 7 + n) % 97 + version}",
            "",
            f"// Widget{n} is a widget of package {p}.",
            f"type Widget{n} struct {{",
            "\tSize int",
            "}",
            "",
            f"// NewWidget{n} makes a widget.",
            f"func NewWidget{n}(size int) *Widget{n} {{",
            f"\treturn &Widget{n}{{Size: size}}",
            "}",
            "",
            f"// Compute runs the widget of module {n}.",
            f"func (w *Widget{n}) Compute(value int) int {{",
            f"\treturn {calls} + w.Size",
            "}",
            "",
            f"// Describe names the widget of module {n}.",
            f"func (w *Widget{n}) Describe() string {{",
            f'\treturn fmt.Sprintf("widget {p}/{n} of size %d", w.Size)',
            "}",
            "",
            f"// Process{n} clamps, then computes.",
            f"func Process{n}(value int) int {{",
            f"\tif value > Limit{n} {{",
            f"\t\tvalue = Limit{n}",
            "\t}",
            f"\treturn NewWidget{n}(value).Compute(value)",
            "}",
            "",
        ]
    )


def java_source(m: Module, version: int) -> str:
    p, n = m.package, m.number
    taken = {n} | {dn for dp, dn in m.deps if dp == p}
    imports, callees = [], []
    for dp, dn in m.deps:
        qualified = f"com.example.svc_{dp // 25}.pkg_{dp}.Mod{dn}"
        if dp != p and dn not in taken:
            taken.add(dn)
            imports.append(f"import {qualified};")
        callees.append(f"Mod{dn}" if dp == p or f"import {qualified};" in imports else qualified)
    calls = " + ".join(f"{callee}.process(value)" for callee in callees) or "value"
    return "\n".join(
        [
            f"package com.example.svc_{p // 25}.pkg_{p};",
            "",
            *imports,
            "",
            f"/** Module {n} of package {p}: a widget and its processing (v{version}). */",
            f"public class Mod{n} {{",
            f"    public static final int LIMIT = {(p * 7 + n) % 97 + version};",
            "    private final int size;",
            "",
            f"    public Mod{n}(int size) {{",
            "        this.size = size;",
            "    }",
            "",
            "    public int compute(int value) {",
            f"        return {calls} + size;",
            "    }",
            "",
            "    public String describe() {",
            f'        return "widget {p}/{n} of size " + size;',
            "    }",
            "",
            "    public static int process(int value) {",
            "        int clamped = Math.min(value, LIMIT);",
            f"        return new Mod{n}(clamped).compute(clamped);",
            "    }",
            "}",
            "",
        ]
    )


def support_files() -> dict[str, str]:
    return {
        "go.mod": "module example.com/mono\n\ngo 1.22\n",
        "package.json": '{"name": "mono-web", "private": true, "type": "module"}\n',
        "README.md": "# mono\n\nA generated monorepo for load tests.\n",
    }


def write_repository(path: Path, sources: dict[str, str]) -> tuple[pygit2.Repository, str]:
    """Blobs, one tree, one commit on ``main`` (no work tree), then ``git repack -a -d``."""
    repo = pygit2.init_repository(str(path), initial_head="main")
    index = pygit2.Index()
    for file_path, text in sources.items():
        index.add(pygit2.IndexEntry(file_path, repo.create_blob(text.encode()), FileMode.BLOB))
    tree = index.write_tree(repo)
    signature = pygit2.Signature("bench", "bench@example.com", EPOCH_S, 0)
    commit = repo.create_commit("refs/heads/main", signature, signature, "generated", tree, [])
    subprocess.run(["git", "-C", str(path), "repack", "-a", "-d", "-q"], check=True)
    return pygit2.Repository(str(path)), str(commit)


def commit_changes(
    repo: pygit2.Repository,
    parent: str,
    *,
    ref: str,
    message: str,
    time_s: int,
    write: dict[str, str],
    remove: tuple[str, ...] = (),
) -> str:
    """A commit on ``ref`` whose tree is ``parent``'s with ``write`` added or replaced and
    ``remove`` removed (objects only)."""
    index = pygit2.Index()
    index.read_tree(repo[parent].peel(pygit2.Tree))
    for file_path in remove:
        index.remove(file_path)
    for file_path, text in write.items():
        index.add(pygit2.IndexEntry(file_path, repo.create_blob(text.encode()), FileMode.BLOB))
    tree = index.write_tree(repo)
    signature = pygit2.Signature("bench", "bench@example.com", time_s, 0)
    return str(repo.create_commit(ref, signature, signature, message, tree, [pygit2.Oid(hex=parent)]))


# -- measuring ---------------------------------------------------------------------------------


def run_measured(args: list[str], env: dict[str, str], *, cwd: Path | None = None) -> dict[str, Any]:
    """Run ``args`` (a Python program printing its result as the last-but-one stdout line is
    not assumed); returns wall s, CPU s of the child and its children, and stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(args[:4])} … exited {result.returncode}:\n{result.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, "stdout": result.stdout, "stderr": result.stderr}


# The peak RSS of this process since its exec: Linux keeps ``ru_maxrss`` across execve, so a
# child forked from this (large) bench process would report the bench's own peak; VmHWM of
# /proc/self/status starts afresh with the new program.
PEAK_RSS_KB = (
    "def peak_rss_kb():\n"
    "    try:\n"
    "        for line in open('/proc/self/status'):\n"
    "            if line.startswith('VmHWM:'):\n"
    "                return int(line.split()[1])\n"
    "    except OSError:\n"
    "        pass\n"
    "    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
)

RSS_WRAPPER = (
    "import json, resource, sys\n" + PEAK_RSS_KB + "from knowing_pr.cli import main\n"
    "rc = main(sys.argv[1:])\n"
    "sys.stdout.flush()\n"
    "print('\\n' + json.dumps({'rc': rc, 'self_kb': peak_rss_kb(),"
    " 'children_kb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))\n"
)


def cli_with_rss(cli_args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """``knowing-pr <cli_args>`` in a fresh interpreter that reports its own peak RSS and its
    children's (the parse workers) after ``main`` returns."""
    measured = run_measured([sys.executable, "-c", RSS_WRAPPER, *cli_args], env)
    body, _, tail = measured["stdout"].rstrip().rpartition("\n")
    rss = json.loads(tail)
    if rss["rc"] != 0:
        raise SystemExit(
            f"knowing-pr {' '.join(cli_args)} returned {rss['rc']}: {measured['stderr'][-2000:]}"
        )
    return {
        **measured,
        "stdout": body,
        "peak_rss_mb": rss["self_kb"] / 1024,
        "worker_peak_rss_mb": rss["children_kb"] / 1024,
    }


def base_env(db: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["KNOWING_PR_DB"] = str(db)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def store_bytes(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.is_file())


def store_counts(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {
            "indexed_files": conn.execute("SELECT count(*) FROM files WHERE status = 'indexed'").fetchone()[
                0
            ],
            "nodes": conn.execute("SELECT count(*) FROM nodes").fetchone()[0],
            "edges": conn.execute("SELECT count(*) FROM edges").fetchone()[0],
        }
    finally:
        conn.close()


def copy_store(source: Path, target: Path) -> None:
    """A consistent copy through SQLite's backup API (never plain file I/O on a store)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    rank = q * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def edited_source(module: Module, round_no: int) -> str:
    """The module at a new version plus one added function: a real body edit and a new symbol."""
    text = module_source(module, version=round_no)
    comment = "#" if module.language == "py" else "//"
    if module.language == "py":
        added = f"\n\ndef added_{module.package}_{module.number}_{round_no}(value: int) -> int:\n    return value * {round_no}\n"
    elif module.language == "go":
        added = f"\n// Added{round_no} is new.\nfunc Added{module.number}x{round_no}(value int) int {{\n\treturn value * {round_no}\n}}\n"
    elif module.language == "js":
        added = f"\nexport function added_{module.package}_{module.number}_{round_no}(value) {{\n  return value * {round_no};\n}}\n"
    else:
        text = text.rstrip().removesuffix("}")
        added = f"\n    public static int added{round_no}(int value) {{\n        return value * {round_no};\n    }}\n}}\n"
    return text + added + f"{comment} edit {round_no}\n" * (module.language != "java")


# -- L3 --------------------------------------------------------------------------------------------


def measure_l3(work: Path, files: int, commits: int, seed: int, log: Callable[[str], None]) -> dict[str, Any]:
    rng = random.Random(seed)
    started = time.perf_counter()
    modules = plan_modules(files - len(support_files()), rng)
    sources = {**support_files(), **{m.path: module_source(m) for m in modules}}
    source_mb = sum(len(t) for t in sources.values()) / 1e6
    repo_path = work / "l3" / "repo"
    repo, head = write_repository(repo_path, sources)
    generate_s = time.perf_counter() - started
    log(f"L3: generated {len(sources):,} files ({source_mb:.0f} MB) in {generate_s:.0f} s")
    db = work / "l3" / "store" / "index.sqlite"
    db.parent.mkdir(parents=True)
    cold = cli_with_rss(["index", "--repo", str(repo_path), "--full", "--quiet", "--json"], base_env(db))
    report = json.loads(cold["stdout"])
    size = store_bytes(db)
    counts = store_counts(db)
    log(f"L3: cold index {cold['wall_s']:.1f} s wall, {cold['cpu_s']:.1f} CPU s")
    git_repo = GitRepo.open(str(repo_path))
    settings = Settings()
    walls_ms: list[float] = []
    for round_no in range(1, commits + 1):
        module = rng.choice(modules)
        head = commit_changes(
            repo,
            head,
            ref="refs/heads/main",
            message=f"edit {module.path}",
            time_s=EPOCH_S + round_no * 60,
            write={module.path: edited_source(module, round_no)},
        )
        t0 = time.perf_counter()
        inc = index_commit(git_repo, settings, db_path=db)
        walls_ms.append((time.perf_counter() - t0) * 1000)
        if inc.mode != "incremental" or inc.commit != head:
            raise SystemExit(f"L3: commit {round_no} was indexed as {inc.mode} at {inc.commit}")
    log(f"L3: {commits} incremental commits, p95 {percentile(walls_ms, 0.95):.0f} ms")
    return {
        "files": len(sources),
        "source_mb": round(source_mb, 1),
        "generate_s": round(generate_s, 1),
        "files_parsed": report.get("files_parsed"),
        **counts,
        "cold_wall_s": round(cold["wall_s"], 1),
        "cold_cpu_s": round(cold["cpu_s"], 1),
        "files_per_s": round(len(sources) / cold["wall_s"], 0),
        "peak_rss_mb": round(cold["peak_rss_mb"], 0),
        "worker_peak_rss_mb": round(cold["worker_peak_rss_mb"], 0),
        "store_mb": round(size / 1e6, 1),
        "store_bytes_per_file": round(size / max(counts["indexed_files"], 1)),
        "phases_ms": report.get("timings_ms", {}),
        "incremental_ms": [round(w, 1) for w in walls_ms],
        "incremental_p50_ms": round(statistics.median(walls_ms), 1),
        "incremental_p95_ms": round(percentile(walls_ms, 0.95), 1),
    }


# -- L4 --------------------------------------------------------------------------------------------


def pr_head(
    repo: pygit2.Repository,
    base: str,
    modules: list[Module],
    rng: random.Random,
    counts: tuple[int, int, int],
) -> tuple[str, dict[str, int]]:
    """The head of a PR on ``refs/heads/pr``: ``counts`` = (modified, renamed with an edit, deleted)."""
    modified_n, renamed_n, deleted_n = counts
    chosen = rng.sample(modules, modified_n + renamed_n + deleted_n)
    modified = chosen[:modified_n]
    renamed = chosen[modified_n : modified_n + renamed_n]
    deleted = chosen[modified_n + renamed_n :]
    write = {m.path: edited_source(m, 1) for m in modified}
    for m in renamed:
        directory, _, name = m.path.rpartition("/")
        write[f"{directory}/moved/{name}"] = edited_source(m, 2)
    remove = tuple(m.path for m in renamed + deleted)
    head = commit_changes(
        repo,
        base,
        ref="refs/heads/pr",
        message="a large change",
        time_s=EPOCH_S + 3600,
        write=write,
        remove=remove,
    )
    return head, {"modified": len(modified), "renamed": len(renamed), "deleted": len(deleted)}


def rename_pairs(repo_path: Path, base: str, head: str) -> Counter[str]:
    """Delta statuses of the diff the ``pr`` pipeline reads (``GitRepo.diff_hunks``)."""
    return Counter(d.status for d in GitRepo.open(str(repo_path)).diff_hunks(base, head))


ACTION_WRAPPER = (
    "import io, json, os, resource, sys, time\n" + PEAK_RSS_KB + "from knowing_pr.action import run_action\n"
    "t0 = time.perf_counter()\n"
    "rc = run_action(os.environ, out=sys.stderr)\n"
    "print(json.dumps({'rc': rc, 'wall_s': time.perf_counter() - t0,"
    " 'self_kb': peak_rss_kb(),"
    " 'children_kb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))\n"
)


def run_action_against_fake(
    repo_path: Path, db: Path, runner: Path, base: str, head: str, pr_number: int
) -> dict[str, Any]:
    repository = "bench/mono"
    with FakeGitHub(token="bench-token", user_login=None) as gh:
        gh.add_pull(repository, pr_number, title="A large change", body="", head_sha=head, base_sha=base)
        event = runner / "event.json"
        runner.mkdir(parents=True, exist_ok=True)
        pull = {
            "number": pr_number,
            "title": "A large change",
            "body": "",
            "base": {"sha": base, "repo": {"full_name": repository}},
            "head": {"sha": head, "repo": {"full_name": repository}},
        }
        event.write_text(json.dumps({"pull_request": pull}), encoding="utf-8")
        env = {
            **base_env(db),
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REPOSITORY": repository,
            "GITHUB_API_URL": gh.base_url,
            "GITHUB_WORKSPACE": str(repo_path),
            "GITHUB_OUTPUT": str(runner / "output"),
            "GITHUB_STEP_SUMMARY": str(runner / "summary.md"),
            "RUNNER_TEMP": str(runner / "temp"),
            "GITHUB_TOKEN": "bench-token",
        }
        measured = run_measured([sys.executable, "-c", ACTION_WRAPPER], env, cwd=repo_path)
        result = json.loads(measured["stdout"].strip().splitlines()[-1])
        if result["rc"] != 0:
            raise SystemExit(f"L4: the action exited {result['rc']}:\n{measured['stderr'][-3000:]}")
        comments = gh.comments(repository, pr_number)
        calls = Counter(f"{r.method} {r.path}" for r in gh.log)
        return {
            "action_wall_s": round(measured["wall_s"], 1),
            "action_in_process_s": round(result["wall_s"], 1),
            "action_peak_rss_mb": round(result["self_kb"] / 1024, 0),
            "action_api_calls": len(gh.log),
            "action_api_calls_by_kind": dict(sorted(calls.items())),
            "action_writes": gh.writes(),
            "action_comments": len(comments),
            "comment_bytes": max((len(c.body.encode()) for c in comments), default=0),
            "summary_bytes": (runner / "summary.md").stat().st_size
            if (runner / "summary.md").exists()
            else 0,
            "action_warnings": [
                line for line in measured["stderr"].splitlines() if line.startswith("::warning")
            ][:5],
        }


def measure_l4(
    work: Path, repo_files: int, counts: tuple[int, int, int], seed: int, log: Callable[[str], None]
) -> dict[str, Any]:
    rng = random.Random(seed + 4)
    modules = plan_modules(repo_files - len(support_files()), rng)
    sources = {**support_files(), **{m.path: module_source(m) for m in modules}}
    repo_path = work / "l4" / "repo"
    repo, base = write_repository(repo_path, sources)
    head, made = pr_head(repo, base, modules, rng, counts)
    statuses = rename_pairs(repo_path, base, head)
    log(f"L4: {len(sources):,} files at base; the diff has {dict(statuses)}")
    base_db = work / "l4" / "base" / "index.sqlite"
    base_db.parent.mkdir(parents=True)
    cli_with_rss(["index", "--repo", str(repo_path), "--rev", base, "--full", "--quiet"], base_env(base_db))
    db = work / "l4" / "pr" / "index.sqlite"
    copy_store(base_db, db)
    out = work / "l4" / "pr.md"
    pr_args = ["pr", "--repo", str(repo_path), "--base", base, "--head", head, "--out", str(out)]
    first = cli_with_rss(pr_args, base_env(db))
    rendered = out.read_text(encoding="utf-8")
    second = cli_with_rss(pr_args, base_env(db))
    json_out = work / "l4" / "pr.json"
    cli_with_rss([*pr_args[:-1], str(json_out), "--format", "json"], base_env(db))
    pack = json.loads(json_out.read_text(encoding="utf-8"))
    log(f"L4: pr {first['wall_s']:.1f} s (store at base), {second['wall_s']:.1f} s (store at head)")
    action_db = work / "l4" / "action" / "index.sqlite"
    copy_store(base_db, action_db)
    action = run_action_against_fake(repo_path, action_db, work / "l4" / "runner", base, head, 4242)
    log(f"L4: action {action['action_wall_s']} s, {action['action_api_calls']} API calls")
    return {
        "repo_files": len(sources),
        "changed": made,
        "diff_statuses": dict(sorted(statuses.items())),
        "rename_pairs_found": statuses.get("R", 0),
        "pr_wall_s": round(first["wall_s"], 1),
        "pr_cpu_s": round(first["cpu_s"], 1),
        "pr_peak_rss_mb": round(first["peak_rss_mb"], 0),
        "pr_worker_peak_rss_mb": round(first["worker_peak_rss_mb"], 0),
        "pr_warm_wall_s": round(second["wall_s"], 1),
        "rendered_bytes": len(rendered.encode()),
        "rendered_chars": len(rendered),
        "rendered_headline": next((line for line in rendered.splitlines()[1:] if line.strip()), ""),
        "budget_tokens": pack["token_budget"],
        "json_tokens_used": pack["tokens_used"],
        "json_symbols": len(pack["symbols"]),
        "json_files_in_inputs": len(pack["inputs"]["files"]),
        **action,
    }


# -- report ----------------------------------------------------------------------------------------


def environment() -> str:
    git = subprocess.run(["git", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return (
        f"{platform.platform()}, {os.cpu_count()} CPUs; {git}; Python {platform.python_version()}; "
        f"SQLite {sqlite3.sqlite_version}; knowing-pr at {commit}"
    )


def table_rows(results: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    l3 = results.get("l3")
    if l3:
        yield (
            "L3",
            "files (source MB)",
            f"{l3['files']:,} ({l3['source_mb']} MB), generated in {l3['generate_s']} s",
        )
        yield ("L3", "nodes / edges", f"{l3['nodes']:,} / {l3['edges']:,}")
        yield (
            "L3",
            "cold index wall / CPU (children included)",
            f"{l3['cold_wall_s']} s / {l3['cold_cpu_s']} s",
        )
        yield ("L3", "files/s", f"{l3['files_per_s']:,.0f}")
        yield (
            "L3",
            "peak RSS indexer / parse workers",
            f"{l3['peak_rss_mb']:.0f} MB / {l3['worker_peak_rss_mb']:.0f} MB",
        )
        yield (
            "L3",
            "store size",
            f"{l3['store_mb']} MB, {l3['store_bytes_per_file']:,} bytes per indexed file",
        )
        yield (
            "L3",
            f"incremental 1-file commit ×{len(l3['incremental_ms'])} (in process) p50 / p95",
            f"{l3['incremental_p50_ms']:.0f} ms / {l3['incremental_p95_ms']:.0f} ms",
        )
    l4 = results.get("l4")
    if l4:
        c = l4["changed"]
        yield (
            "L4",
            "PR",
            f"{c['modified']:,} modified, {c['renamed']} renamed with an edit, {c['deleted']} deleted "
            f"in a {l4['repo_files']:,}-file repository",
        )
        yield (
            "L4",
            "rename pairs found",
            f"{l4['rename_pairs_found']} of {c['renamed']} (diff: {l4['diff_statuses']})",
        )
        yield (
            "L4",
            "`pr` wall (store at base) / CPU / peak RSS",
            f"{l4['pr_wall_s']} s / {l4['pr_cpu_s']} s / {l4['pr_peak_rss_mb']:.0f} MB "
            f"(workers {l4['pr_worker_peak_rss_mb']:.0f} MB)",
        )
        yield ("L4", "`pr` wall (store already at head)", f"{l4['pr_warm_wall_s']} s")
        yield (
            "L4",
            "rendered markdown vs budget",
            f"{l4['rendered_bytes']:,} bytes (≈{l4['rendered_chars'] // 4:,} tokens at 4 chars); JSON pack "
            f"{l4['json_tokens_used']:,} of {l4['budget_tokens']:,} tokens, {l4['json_symbols']} symbols",
        )
        yield ("L4", "markdown headline", l4["rendered_headline"])
        yield (
            "L4",
            "Action end to end (fresh process) / peak RSS",
            f"{l4['action_wall_s']} s / {l4['action_peak_rss_mb']:.0f} MB",
        )
        yield (
            "L4",
            "Action API calls",
            f"{l4['action_api_calls']} ({', '.join(f'{k} ×{v}' for k, v in l4['action_api_calls_by_kind'].items())})",
        )
        yield ("L4", "comment bytes vs 65,536", f"{l4['comment_bytes']:,} ({l4['action_comments']} comment)")
        yield ("L4", "job summary bytes vs 1 MiB", f"{l4['summary_bytes']:,} of 1,048,576")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=100_000, help="L3 repository size (default 100,000)")
    parser.add_argument("--commits", type=int, default=20, help="L3 incremental 1-file commits")
    parser.add_argument("--pr-repo-files", type=int, default=6000, help="L4 repository size")
    parser.add_argument("--pr-modified", type=int, default=1400)
    parser.add_argument("--pr-renamed", type=int, default=500)
    parser.add_argument("--pr-deleted", type=int, default=100)
    parser.add_argument("--only", choices=("l3", "l4"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="work in this directory and keep it")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    results: dict[str, Any] = {"environment": environment()}
    with tempfile.TemporaryDirectory(prefix="knowing-pr-load-") as tmp:
        work = args.keep or Path(tmp)
        if args.only in (None, "l3"):
            results["l3"] = measure_l3(work, args.files, args.commits, args.seed, log)
        if args.only in (None, "l4"):
            counts = (args.pr_modified, args.pr_renamed, args.pr_deleted)
            results["l4"] = measure_l4(work, args.pr_repo_files, counts, args.seed, log)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"machine: {results['environment']}\n")
    print("| id | figure | value |\n|---|---|---|")
    for row in table_rows(results):
        print("| " + " | ".join(row) + " |")
    if "l3" in results:
        print(f"\nL3 cold index phases (ms): {results['l3']['phases_ms']}")
        print(f"L3 incremental ms: {results['l3']['incremental_ms']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
