"""Build the development set of ``bench/localize.py`` from public repositories' history.

Usage::

    python bench/get_localize_data.py --clone jinja=<clone of pallets/jinja> \\
        --clone black=<clone of psf/black> ... --out <tasks.jsonl> \\
        [--window 600] [--per-repo 40]

No public data set of issue reports with their fixes' files could be fetched here (the
registries reachable ship none; the hub that hosts SWE-Gym, SWE-bench-extra and
Multi-SWE-bench is not reachable), so the set is made from each repository's own history:
the commits after an anchor (``--window`` first-parent commits before HEAD) whose message
references an issue or pull request (``#123``) and has a body or a long title, that modify 1–5
non-test source files which all exist at the anchor. The message (title and body, issue
numbers, URLs and trailers removed) is the report; the source files it modified are the
answer. One line a task: ``{"repo", "anchor", "sha", "text", "files"}``. Commit messages are
shorter and name the code more often than issue reports do: read the figures as that.

Never run on the held-out repositories (docs/task.md lists them).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from knowing_pr.graph import is_test_path
from knowing_pr.parse import language_for_path

HELD_OUT = frozenset(
    [
        "flask",
        "click",
        "requests",
        "httpx",
        "rich",
        "fastapi",
        "gin",
        "express",
        "ripgrep",
        "zod",
        "starlette",
        "ky",
        "typer",
        "viper",
        "fd",
        "caddy",
        "terraform",
        "spark",
        "pytest",
        "pylint",
        "sphinx",
        "seaborn",
        "xarray",
        "astropy",
        "sympy",
        "django",
        "matplotlib",
        "scikit-learn",
    ]
)
_ISSUE_REF = re.compile(r"#\d+|\b(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?)\b", re.I)
#: lines that say nothing of the change: merge titles, checklists, bots, separators
_NOISE = re.compile(
    r"^\s*(?:merge (?:pull request|branch|remote-tracking)\b|[-*]\s*\[[ xX]\]|\*?\s*\[pre-commit\.ci\]"
    r"|for more information, see|-{3,}\s*$|\*?\s*(?:add(?:ed)? )?(?:changelog|changes)(?: entry)?\.?\s*$)",
    re.I,
)
_TRAILER = re.compile(
    r"^\s*(signed-off-by|co-authored-by|reviewed-by|fixes|closes|resolves|see|refs?)\b:?", re.I
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, errors="replace"
    ).stdout


def report_text(message: str) -> str:
    """The message as a report: no trailers, issue or PR numbers, URLs, checklists."""
    lines = [line for line in message.strip().splitlines() if not _TRAILER.match(line)]
    lines = [line for line in lines if not _NOISE.match(line)]
    text = "\n".join(lines)
    text = re.sub(r"\(#\d+\)|#\d+|https?://\S+|gh-\d+", " ", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def repo_tasks(name: str, repo: Path, window: int, limit: int) -> list[dict[str, object]]:
    chain = git(repo, "rev-list", "--first-parent", f"--max-count={window + 1}", "HEAD").split()
    anchor = chain[-1]
    anchor_files = set(git(repo, "ls-tree", "-r", "--name-only", anchor).splitlines())
    found: list[dict[str, object]] = []
    for sha in reversed(chain[:-1]):
        parents = git(repo, "rev-list", "--parents", "-n", "1", sha).split()[1:]
        message = git(repo, "log", "-1", "--format=%B", sha)
        if not _ISSUE_REF.search(message):
            continue
        # a merge of a pull request: its changes against the first parent
        base = parents[0] if parents else None
        if base is None:
            continue
        status = git(repo, "diff", "--no-renames", "--name-status", base, sha)
        changed = [line.split("\t") for line in status.splitlines() if "\t" in line]
        sources = [p[-1] for p in changed if language_for_path(p[-1]) and not is_test_path(p[-1])]
        if not 1 <= len(sources) <= 5:
            continue
        if any(p[0] != "M" for p in changed if p[-1] in sources) or not all(
            s in anchor_files for s in sources
        ):
            continue
        if len(parents) > 1:  # a merge commit's own message says little: the branch's commits do
            message = git(repo, "log", "--format=%B", f"{base}..{sha}")
        text = report_text(message)
        if len(text) < 40 or ("\n" not in text and len(text) < 60):
            continue
        found.append({"repo": name, "anchor": anchor, "sha": sha, "text": text, "files": sorted(sources)})
    if len(found) > limit:  # spread over the window, not only its start
        step = len(found) / limit
        found = [found[int(i * step)] for i in range(limit)]
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--clone", action="append", default=[], metavar="NAME=PATH", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--window", type=int, default=600)
    parser.add_argument("--per-repo", type=int, default=40)
    args = parser.parse_args(argv)
    rows: list[dict[str, object]] = []
    for item in args.clone:
        name, _, path = item.partition("=")
        if name.lower() in HELD_OUT:
            print(f"{name} is held out: not used", file=sys.stderr)
            return 2
        tasks = repo_tasks(name, Path(path), args.window, args.per_repo)
        print(f"{name}: {len(tasks)} tasks", file=sys.stderr)
        rows.extend(tasks)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
