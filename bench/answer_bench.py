"""Real commits of public repositories → the figures of the reviewer's answer: changed symbols kept
under a budget, the budget on every format, tests to run (and whether they are real test cases),
callers against an independent oracle, what the first screen of the comment shows, the diagrams,
and ``pr``'s fresh-process time against a baseline checkout, in one run.

Usage::

    python bench/answer_bench.py --clones DIR --out DIR [--tools-dir DIR] [--baseline-src SRC]
        [--only REPO ...] [--timing-runs 3] [--skip-oracle] [--skip-render] [--skip-timing]

``--clones DIR`` holds one clone per repository of ``COMMITS``, named after it (``DIR/jinja`` is a
clone of pallets/jinja, ``DIR/commons-lang`` of apache/commons-lang …). Stores, checkouts, the
rendered comments and ``answer_bench.json`` go to ``--out``. ``--baseline-src`` is another
checkout of knowing-pr (for example ``git worktree add ../baseline <commit>``): ``pr`` is timed
with it and with this checkout, alternating, on the same commits. ``--tools-dir`` is where
``bench/edge_oracle.py`` installs its oracles (jedi, the TypeScript compiler) and
``bench/render_comment.py`` its renderer (see their docstrings; nothing of it is needed by the
test suite).

Per commit (its parent is the base):

1. **The change's own symbols** are those of the JSON pack at a 200,000-token budget (reason
   ``changed``). At budgets 8,000 and 2,000 a symbol is *present* in a JSON or XML pack when it
   is one of its symbols (full or one-line) or is named in ``changed_left_out``.
2. **Budget**: ``pr --format F --budget B`` for every format F: ``tokens_used`` (JSON, XML; the
   markdown has none) and ceil(characters / 4) of the text must both be at most B.
3. **Tests to run** (JSON, 8,000): present when the list is not empty. A test case *reaches* the
   change, for this bench, when the commit edits a test file of the language or a test file at
   the head names one of the changed symbols (``git grep -w``). Each entry is judged a real test
   case or not by ``bench/testcase_judge.py`` (the frameworks' own collection rules, written
   without knowing-pr's parser).
4. **Callers** (Python, TypeScript, JavaScript): the oracle of ``bench/edge_oracle.py`` (jedi; the
   TypeScript type checker) runs on a checkout of the head over the files that contain a changed
   symbol's name; its call sites whose target is a changed symbol (same file and name, the
   target's line inside the symbol; a call inside the symbol itself left out) are the expected
   ones; recall = the share of them (file, line) the JSON pack lists at 8,000 tokens (in
   ``call_sites`` or ``call_site_lines``), and at 200,000 tokens (what the budget cut, apart).
5. **First screen** (``bench/render_comment.py``, 1000 x 900 px): the comment of the markdown pack
   at 8,000 tokens (as the Action posts it); its first screen shows the summary when the title
   line and the headings "What changed", "Callers outside this PR" and "Tests to run" are in its
   text; mermaid errors and the nodes of each diagram.
6. **Time**: ``python -m knowing_pr pr --format json --budget 8000`` as a fresh process, with this
   checkout and with ``--baseline-src``, each on its own warm store, alternating, ``--timing-runs``
   times each; the ratio of the medians per commit and the ratio of their sums.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
CHECKOUT = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

from testcase_judge import is_test_case  # noqa: E402

BUDGETS = (8000, 2000)
UNLIMITED = 200_000
FORMATS = ("markdown", "json", "xml")
ORACLE_LANGUAGES = {"python": "python", "typescript": "typescript", "javascript": "javascript"}
SUMMARY_HEADINGS = ("What changed", "Callers outside this PR", "Tests to run")
EXTENSIONS = {
    "python": (".py",),
    "javascript": (".js", ".mjs", ".cjs"),
    "typescript": (".ts", ".tsx"),
    "go": (".go",),
    "rust": (".rs",),
    "java": (".java",),
    "ruby": (".rb",),
    "csharp": (".cs",),
}


@dataclass(frozen=True)
class Commit:
    repo: str  # the clone's directory name under --clones
    github: str
    sha: str
    language: str


COMMITS = (
    Commit("jinja", "pallets/jinja", "065334d1ee5b7210e1a0a93c37238c86858f2af7", "python"),
    Commit("jinja", "pallets/jinja", "ee832194cd9f55f75e5a51359b709d535efe957f", "python"),
    Commit("attrs", "python-attrs/attrs", "48b8611c27779811d161200e17de8da24aae7feb", "python"),
    Commit("marshmallow", "marshmallow-code/marshmallow", "853b144e128e9150a30a78169b2a68e82e54b47d", "python"),
    Commit("axios", "axios/axios", "32c7bcc0f233285ba27dec73a4b1e81fb7a219b3", "javascript"),
    Commit("axios", "axios/axios", "eac4619fe2e0926e876cd260ee21e3690381dbb5", "javascript"),
    Commit("trpc", "trpc/trpc", "2c5b6a8c6366c005508c0f481ad3ae344653a6f8", "typescript"),
    Commit("trpc", "trpc/trpc", "2b8a4f826d3b22829343cebd9b23e163dfeecd09", "typescript"),
    Commit("date-fns", "date-fns/date-fns", "0121164052a65667ef31c0285a48afb8064dfe8b", "typescript"),
    Commit("date-fns", "date-fns/date-fns", "d6f69a8e92ad801017902092c616787f0e23c943", "typescript"),
    Commit("chi", "go-chi/chi", "15767233591fd4267ae99d05299fa3807c375cdd", "go"),
    Commit("cobra", "spf13/cobra", "1995054b003053cc1e404bccfbf6d168e8731509", "go"),
    Commit("clap", "clap-rs/clap", "1ca55413c8e79c3b437054c0d9dc7e4691bd3e71", "rust"),
    Commit("commons-lang", "apache/commons-lang", "1d6ef29ce004309e50bd91e27f0f5e80e1a57a76", "java"),
    Commit("commons-lang", "apache/commons-lang", "c747711133c3e13d8d2bdab27a2eb7b11f1c6d7f", "java"),
    Commit("rack", "rack/rack", "9e69dde8d6550857229e97e69a90e904da104745", "ruby"),
    Commit("polly", "App-vNext/Polly", "016dd909db880b9d8d07954ff5f4ea3cc1e11c67", "csharp"),
)  # fmt: skip


# ---------------------------------------------------------------- running knowing-pr


def run_pr(src: Path, clone: Path, db: Path, commit: Commit, fmt: str, budget: int) -> tuple[str, float]:
    """``knowing-pr pr`` of one commit as a fresh process with the code of ``src``: (text, seconds)."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    command = [sys.executable, "-m", "knowing_pr", "pr", "--repo", str(clone), "--db", str(db)]
    command += ["--base", f"{commit.sha}~1", "--head", commit.sha, "--format", fmt, "--budget", str(budget)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"pr failed on {commit.repo} {commit.sha[:10]}: {done.stderr[-2000:]}")
    return done.stdout, elapsed


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def used_tokens(fmt: str, text: str) -> int | None:
    """The pack's own ``tokens_used`` (markdown shows none)."""
    if fmt == "json":
        return int(json.loads(text)["tokens_used"])
    if fmt == "xml":
        return int(ET.fromstring(text.encode("utf-8")).get("tokens_used", "0"))
    return None


def present_in(fmt: str, text: str, changed: Sequence[dict[str, Any]]) -> int:
    """How many of the change's own symbols a JSON or XML pack holds or names."""
    if fmt == "json":
        data = json.loads(text)
        held = {(s["file"], s["qualified_name"]) for s in data["symbols"]}
        named = {item.split(" ", 1)[0] for item in data.get("changed_left_out", [])}
    else:
        root = ET.fromstring(text.encode("utf-8"))
        held = {(s.get("file"), s.get("qualified_name")) for s in root.findall("symbol")}
        named = {e.get("symbol", "").split(" ", 1)[0] for e in root.findall("changed_left_out")}
    return sum(
        (s["file"], s["qualified_name"]) in held or f"{s['file']}:{s['start_line']}" in named for s in changed
    )


# ---------------------------------------------------------------- tests to run


def git(clone: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(clone), *args], capture_output=True, text=True, check=False
    ).stdout


def is_test_path(path: str) -> bool:
    lowered = "/" + path.lower()
    name = lowered.rsplit("/", 1)[-1]
    return (
        any(part in lowered for part in ("/test/", "/tests/", "/__tests__/", "/spec/"))
        or name.split(".", 1)[0] in ("test", "tests", "spec")
        or name.startswith("test_")
        or any(tag in name for tag in ("_test.", ".test.", ".spec.", "_spec.", "test.java", "tests.cs"))
    )


def a_test_reaches(clone: Path, commit: Commit, changed: Sequence[dict[str, Any]]) -> bool:
    """This bench's own notion (module docstring, 3.): an edited test file, or one naming a changed symbol."""
    suffixes = EXTENSIONS[commit.language]
    edited = git(clone, "diff", "--name-only", f"{commit.sha}~1", commit.sha).split()
    if any(is_test_path(p) and p.endswith(suffixes) for p in edited):
        return True
    names = sorted({s["name"] for s in changed if s["kind"] != "module" and len(s["name"]) > 2})
    for name in names:
        found = git(clone, "grep", "-l", "-w", "-F", name, commit.sha).split()
        if any(is_test_path(p.split(":", 1)[-1]) and p.endswith(suffixes) for p in found):
            return True
    return False


def judge_tests(clone: Path, commit: Commit, entries: Sequence[dict[str, Any]]) -> list[bool]:
    verdicts = []
    for entry in entries:
        source = git(clone, "show", f"{commit.sha}:{entry['file']}")
        language = "typescript" if entry["file"].endswith((".ts", ".tsx")) else commit.language
        if entry["file"].endswith((".js", ".mjs", ".cjs")):
            language = "javascript"
        verdicts.append(is_test_case(entry["file"], language, source, entry["line"], entry["name"]))
    return verdicts


# ---------------------------------------------------------------- callers against the oracle


def checkout_at(clone: Path, sha: str, where: Path) -> Path:
    if not (where / ".git").exists():
        subprocess.run(["git", "clone", "-q", "--shared", str(clone), str(where)], check=True)
    subprocess.run(["git", "-C", str(where), "checkout", "-q", "--force", sha], check=True)
    return where


def expected_sites(
    commit: Commit, checkout: Path, changed: Sequence[dict[str, Any]], tools_dir: Path
) -> set[tuple[str, int]]:
    """The oracle's call sites of the changed symbols (module docstring, 4.)."""
    from edge_oracle import oracle_sites

    symbols = [s for s in changed if s["kind"] != "module"]
    if not symbols:
        return set()
    suffixes = EXTENSIONS[commit.language]
    files: set[str] = set()
    for name in {s["name"] for s in symbols}:
        found = git(checkout, "grep", "-l", "-w", "-F", name, "HEAD").split()
        files.update(p.split(":", 1)[-1] for p in found if p.endswith(suffixes) and not p.endswith(".d.ts"))
    if not files:
        return set()
    records = oracle_sites(ORACLE_LANGUAGES[commit.language], checkout, sorted(files), tools_dir)
    expected: set[tuple[str, int]] = set()
    for record in records:
        for target in record["targets"]:
            if target.get("external"):
                continue
            for sym in symbols:
                same = target.get("file") == sym["file"] and target.get("name") == sym["name"]
                inside_target = same and sym["start_line"] <= target.get("line", 0) <= sym["end_line"]
                recursive = (
                    record["file"] == sym["file"] and sym["start_line"] <= record["line"] <= sym["end_line"]
                )
                if inside_target and not recursive:
                    expected.add((record["file"], record["line"]))
    return expected


def listed_sites(pack: dict[str, Any]) -> set[tuple[str, int]]:
    """The call sites a JSON pack lists: in detail (``call_sites``) or by place (``call_site_lines``)."""
    found = {(s["file"], s["line"]) for s in pack["call_sites"]}
    for item in pack.get("call_site_lines", []):
        path, _, numbers = item.rpartition(":")
        found.update((path, int(n)) for n in numbers.split(",") if n)
    return found


# ---------------------------------------------------------------- the comment as GitHub shows it


def write_comment(src: Path, clone: Path, db: Path, commit: Commit, out: Path) -> Path:
    """The Action's comment for the commit (markdown pack at 8,000 tokens), written with ``src``."""
    code = (
        "import sys\n"
        "from knowing_pr.pipeline import PrRequest, build_pr_pack, open_workspace\n"
        "from knowing_pr.render import render_comment\n"
        "ws = open_workspace(sys.argv[1], db=sys.argv[2], budget=8000)\n"
        "pack = build_pr_pack(ws, PrRequest(base=sys.argv[3] + '~1', head=sys.argv[3], fmt='markdown'))\n"
        "open(sys.argv[4], 'w', encoding='utf-8').write(render_comment(pack))\n"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(src)}
    command = [sys.executable, "-c", code, str(clone), str(db), commit.sha, str(out)]
    subprocess.run(command, check=True, env=env)
    return out


def render_comments(paths: Sequence[Path], out: Path, tools_dir: Path | None) -> dict[str, Any]:
    command = [sys.executable, str(BENCH_DIR / "render_comment.py"), "--out", str(out)]
    for path in paths:
        command += ["--comment", str(path)]
    if tools_dir is not None:
        command += ["--tools-dir", str(tools_dir / "render")]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"render_comment.py failed: {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout))


def first_screen_shows_summary(text: str) -> bool:
    lines = text.splitlines()
    title = any(line.startswith("knowing-pr · ") for line in lines)
    return title and all(any(line.startswith(h) for line in lines) for h in SUMMARY_HEADINGS)


# ---------------------------------------------------------------- one commit


def measure(commit: Commit, args: argparse.Namespace) -> dict[str, Any]:
    clone = Path(args.clones) / commit.repo
    out = Path(args.out)
    db = out / "stores" / f"{commit.repo}.sqlite"
    db.parent.mkdir(parents=True, exist_ok=True)
    name = f"{commit.repo}-{commit.sha[:10]}"
    text, _ = run_pr(CHECKOUT, clone, db, commit, "json", UNLIMITED)
    unlimited = json.loads(text)
    changed = [s for s in unlimited["symbols"] if s["reason"] == "changed"]
    record: dict[str, Any] = {
        "repo": commit.github,
        "commit": commit.sha[:10],
        "language": commit.language,
        "changed": len(changed),
        "budgets": {},
    }
    packs: dict[tuple[int, str], str] = {}
    for budget in BUDGETS:
        row: dict[str, Any] = {}
        for fmt in FORMATS:
            text, _ = run_pr(CHECKOUT, clone, db, commit, fmt, budget)
            packs[(budget, fmt)] = text
            row[fmt] = {"tokens_used": used_tokens(fmt, text), "text_tokens": tokens(text)}
            if fmt != "markdown":
                row[fmt]["changed_present"] = present_in(fmt, text, changed)
        record["budgets"][str(budget)] = row
    data = json.loads(packs[(8000, "json")])
    entries = data["tests_to_run"]
    verdicts = judge_tests(clone, commit, entries)
    record["tests"] = {
        "reachable": a_test_reaches(clone, commit, changed),
        "listed": len(entries),
        "total": data["tests_to_run_total"],
        "real": sum(verdicts),
        "not_real": [
            e["file"] + ":" + str(e["line"]) + " " + e["name"]
            for e, ok in zip(entries, verdicts, strict=True)
            if not ok
        ][:10],
    }
    if commit.language in ORACLE_LANGUAGES and not args.skip_oracle:
        checkout = checkout_at(clone, commit.sha, out / "checkouts" / commit.repo)
        expected = expected_sites(commit, checkout, changed, Path(args.tools_dir))
        found, found_all = listed_sites(data), listed_sites(unlimited)
        record["callers"] = {
            "expected": len(expected),
            "found": len(expected & found),
            "found_unlimited": len(expected & found_all),
            "missed": sorted(f"{f}:{line}" for f, line in expected - found_all)[:10],
        }
    if not args.skip_render:
        record["comment"] = str(write_comment(CHECKOUT, clone, db, commit, out / "comments" / f"{name}.md"))
    return record


def time_commits(commits: Sequence[Commit], args: argparse.Namespace) -> list[dict[str, Any]]:
    """Fresh-process ``pr`` with this checkout and the baseline, alternating (module docstring, 6.)."""
    baseline = Path(args.baseline_src)
    rows = []
    for commit in commits:
        clone = Path(args.clones) / commit.repo
        stores = Path(args.out) / "stores"
        new_db, old_db = stores / f"{commit.repo}.sqlite", stores / f"{commit.repo}.baseline.sqlite"
        run_pr(CHECKOUT, clone, new_db, commit, "json", 8000)  # warm: index and caches in place
        run_pr(baseline, clone, old_db, commit, "json", 8000)
        new_times, old_times = [], []
        for _ in range(args.timing_runs):
            new_times.append(run_pr(CHECKOUT, clone, new_db, commit, "json", 8000)[1])
            old_times.append(run_pr(baseline, clone, old_db, commit, "json", 8000)[1])
        new, old = statistics.median(new_times), statistics.median(old_times)
        rows.append(
            {
                "repo": commit.github,
                "commit": commit.sha[:10],
                "new_s": round(new, 3),
                "baseline_s": round(old, 3),
                "ratio": round(new / old, 3),
            }
        )
    return rows


# ---------------------------------------------------------------- report


def pct(good: int, total: int) -> str:
    return f"{100 * good / total:.1f}%" if total else "n/a"


def summarize(
    records: Sequence[dict[str, Any]], timing: Sequence[dict[str, Any]], render: dict[str, Any] | None
) -> dict[str, Any]:
    out: dict[str, Any] = {"commits": len(records), "languages": sorted({r["language"] for r in records})}
    for budget in map(str, BUDGETS):
        expected = sum(r["changed"] for r in records) * 2  # JSON and XML
        present = sum(r["budgets"][budget][f]["changed_present"] for r in records for f in ("json", "xml"))
        over = [
            f"{r['repo']}@{r['commit']} {f}"
            for r in records
            for f in FORMATS
            if (r["budgets"][budget][f]["tokens_used"] or 0) > int(budget)
            or r["budgets"][budget][f]["text_tokens"] > int(budget)
        ]
        out[f"budget_{budget}"] = {
            "changed_present": f"{present}/{expected} ({pct(present, expected)})",
            "over_budget": over,
        }
    reachable = [r for r in records if r["tests"]["reachable"]]
    listed = sum(r["tests"]["listed"] for r in records)
    real = sum(r["tests"]["real"] for r in records)
    out["tests"] = {
        "reachable_commits": len(reachable),
        "present_when_reachable": sum(r["tests"]["listed"] > 0 for r in reachable),
        "entries": listed,
        "real": f"{real}/{listed} ({pct(real, listed)})",
    }
    callers = [r for r in records if "callers" in r]
    for language in sorted({r["language"] for r in callers}):
        rows = [r for r in callers if r["language"] == language]
        expected = sum(r["callers"]["expected"] for r in rows)
        found = sum(r["callers"]["found"] for r in rows)
        found_all = sum(r["callers"]["found_unlimited"] for r in rows)
        out[f"callers_{language}"] = {
            "recall_8000": f"{found}/{expected} ({pct(found, expected)})",
            "recall_unlimited": f"{found_all}/{expected} ({pct(found_all, expected)})",
        }
    if render is not None:
        pages = render["pages"]
        out["render"] = {
            "comments": len(pages),
            "first_screen_shows_summary": sum(
                first_screen_shows_summary(p["first_screen_text"]) for p in pages
            ),
            "mermaid_errors": render["mermaid_error_count"],
            "diagram_nodes": sorted(d["nodes"] for p in pages for d in p["diagrams"]),
            "screens": sorted(p["screens"] for p in pages),
        }
    if timing:
        new = sum(r["new_s"] for r in timing)
        old = sum(r["baseline_s"] for r in timing)
        out["timing"] = {
            "sum_new_s": round(new, 2),
            "sum_baseline_s": round(old, 2),
            "ratio_of_sums": round(new / old, 3),
        }
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clones", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--tools-dir", default=str(Path(tempfile.gettempdir()) / "knowing-pr-bench-tools"))
    parser.add_argument("--baseline-src", default=None)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--timing-runs", type=int, default=3)
    parser.add_argument("--skip-oracle", action="store_true")
    parser.add_argument("--skip-render", action="store_true")
    parser.add_argument("--skip-timing", action="store_true")
    args = parser.parse_args(argv)
    commits = [c for c in COMMITS if not args.only or c.repo in args.only]
    records = []
    for commit in commits:
        print(f"{commit.repo} {commit.sha[:10]} …", file=sys.stderr, flush=True)
        records.append(measure(commit, args))
    render = None
    if not args.skip_render:
        render = render_comments(
            [Path(r["comment"]) for r in records], Path(args.out) / "shots", Path(args.tools_dir)
        )
        for record, page in zip(records, render["pages"], strict=True):
            record["render"] = {
                "first_screen_shows_summary": first_screen_shows_summary(page["first_screen_text"]),
                "mermaid_errors": len(page["mermaid_errors"]),
                "diagram_nodes": [d["nodes"] for d in page["diagrams"]],
                "screens": page["screens"],
                "first_screen_png": page["first_screen_png"],
            }
    timing = time_commits(commits, args) if args.baseline_src and not args.skip_timing else []
    report = {"summary": summarize(records, timing, render), "commits": records, "timing": timing}
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "answer_bench.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report["summary"], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
