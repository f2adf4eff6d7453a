"""The real issue reports behind ``bench/get_localize_data.py``'s tasks, for ``bench/localize.py
--reports``: each task's fix commit → the pull request or issue its message references → the
issue that pull request says it fixes → that issue's title and its author's description (never
the comments, which often name the fix).

Usage (needs the network and, for more than a few dozen requests an hour, a token)::

    GITHUB_TOKEN=... python bench/get_issue_reports.py --tasks <tasks.jsonl> \\
        --clone jinja=<clone> ... --github jinja=pallets/jinja ... --out <reports.jsonl>

One JSON line a report (a fix that closed two issues has two): ``{"repo", "sha", "pr", "issue", "url", "title", "body", "cut"}`` (``cut``:
the body was shortened by its source; always false from the API). A task whose references lead
to no issue (a pull request that names none, a reference that is itself a pull request with no
"fixes #N") gets no report: ``localize.py --reports`` scores only the tasks that have one.

The GitHub API is read with the standard library (``--api`` for another endpoint); nothing of
the repository is run. The held-out repositories (docs/task.md) are refused.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from get_localize_data import HELD_OUT

#: "fixes #12", "closes #12", "resolves #12" in a pull request's text (the number is the
#: repository's own unless an ``owner/name`` stands before the ``#``)
_FIXES = re.compile(r"\b(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?)\b:?\s+([\w.-]+/[\w.-]+)?#(\d+)", re.I)
#: a link to an issue: ``github.com/owner/name/issues/12``
_ISSUE_URL = re.compile(r"github\.com/([\w.-]+/[\w.-]+)/issues/(\d+)\b", re.I)


def get(api: str, path: str, token: str | None) -> dict[str, Any] | None:
    """One API object, or ``None`` when it does not exist."""
    request = urllib.request.Request(
        api.rstrip("/") + path, headers={"Accept": "application/vnd.github+json"}
    )
    if token and _may_carry_token(api):
        # not copied onto a redirect: a 3xx to another host (or to http) never sees the token
        request.add_unredirected_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 (https or the --api given)
            data = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        if exc.code in (404, 410):
            return None
        raise SystemExit(f"GitHub API: {exc.code} {exc.reason} for {path}") from None
    return data if isinstance(data, dict) else None


def _may_carry_token(api: str) -> bool:
    """Whether ``api`` may be sent the token: GitHub's API over https, or this machine (a local
    stub); any other ``--api`` host is asked without it."""
    parts = urllib.parse.urlsplit(api)
    if parts.hostname in ("127.0.0.1", "localhost", "::1"):
        return True
    return parts.scheme == "https" and parts.hostname == "api.github.com"


def linked_issues(item: dict[str, Any], github: str) -> list[int]:
    """The issue numbers of ``github`` that a pull request's title and description say it fixes
    or link, in order (another repository's issues are left out)."""
    text = f"{item.get('title') or ''}\n{item.get('body') or ''}"
    found: list[tuple[int, int]] = []
    for match in _FIXES.finditer(text):
        if match.group(1) is None or match.group(1).lower() == github.lower():
            found.append((match.start(), int(match.group(2))))
    for match in _ISSUE_URL.finditer(text):
        if match.group(1).lower() == github.lower():
            found.append((match.start(), int(match.group(2))))
    return list(dict.fromkeys(number for _, number in sorted(found)))


def reports_for(api: str, github: str, refs: Sequence[int], token: str | None) -> list[dict[str, Any]]:
    """Every issue reached from ``refs``: a reference that is an issue, and each one a referenced
    pull request says it fixes (a fix that closed two issues has two reports)."""
    found: dict[int, dict[str, Any]] = {}
    for ref in refs:
        item = get(api, f"/repos/{github}/issues/{ref}", token)
        if item is None:
            continue
        if "pull_request" not in item:
            found.setdefault(ref, {"pr": None, "issue": ref, "item": item})
            continue
        for number in linked_issues(item, github):
            linked = get(api, f"/repos/{github}/issues/{number}", token) if number not in found else None
            if linked is not None and "pull_request" not in linked:
                found[number] = {"pr": ref, "issue": number, "item": linked}
    return list(found.values())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tasks", type=Path, required=True)
    parser.add_argument("--clone", action="append", default=[], metavar="NAME=PATH", required=True)
    parser.add_argument("--github", action="append", default=[], metavar="NAME=OWNER/REPO", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--api", default="https://api.github.com")
    args = parser.parse_args(argv)
    clones = {n: Path(p) for n, _, p in (c.partition("=") for c in args.clone)}
    names = {n: g for n, _, g in (c.partition("=") for c in args.github)}
    held = sorted(n for n, g in names.items() if {n.lower(), g.lower().rpartition("/")[2]} & HELD_OUT)
    if held:
        print(f"{', '.join(held)}: held out, not used", file=sys.stderr)
        return 2
    token = os.environ.get("GITHUB_TOKEN")
    tasks = [json.loads(line) for line in args.tasks.read_text().splitlines() if line.strip()]
    found = 0
    with args.out.open("w") as out:
        for task in tasks:
            name = task["repo"]
            if name not in clones or name not in names:
                continue
            message = subprocess.run(
                ["git", "-C", str(clones[name]), "log", "-1", "--format=%B", task["sha"]],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            # the message's own references (``#12``, not ``owner/name#12``)
            refs = sorted({int(n) for n in re.findall(r"(?<![\w./-])#(\d+)", message)})
            reports = reports_for(args.api, names[name], refs, token)
            for report in reports:
                item = report["item"]
                row = {
                    "repo": name,
                    "sha": task["sha"],
                    "pr": report["pr"],
                    "issue": report["issue"],
                    "url": item.get("html_url", ""),
                    "title": item.get("title") or "",
                    "body": item.get("body") or "",
                    "cut": False,
                }
                out.write(json.dumps(row) + "\n")
            found += bool(reports)
    print(f"{found} of {len(tasks)} tasks have an issue report", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
