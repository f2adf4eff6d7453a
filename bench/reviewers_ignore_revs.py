"""What libgit2's blame loses by not skipping ``.git-blame-ignore-revs`` (docs/reviewers.md):
``bench/reviewers.py``'s tasks of one repository, first with the code's blame (libgit2: the lines
of an ignored commit count for nobody), then with ``git blame --ignore-rev`` (the base's list;
the lines go to the commit before) swapped in, in the same run; hits and time per task.

Usage (from the repository root): ``PYTHONPATH=. python bench/reviewers_ignore_revs.py CLONE``.
Not a switch: the second pass runs on caches the first warmed.
"""

import subprocess
import sys

import knowing_pr.pipeline.reviewers as pr
from bench.reviewers import run_repository
from knowing_pr.config import Settings

path = sys.argv[1]
libgit2_blamed = pr._blamed
lost = {"lines": 0, "ignored": 0}


def cli_blamed(repo, base, targets, oldest):
    ignored = pr.base_files(repo, base).ignored
    out = []
    by_path = {}
    for t in targets:
        by_path.setdefault(t.path, []).append(t)
    for p, found in sorted(by_path.items()):
        args = ["git", "-C", path, "blame", "--porcelain"]
        for t in found:
            args += ["-L", f"{t.lines[0]},{t.lines[1]}"]
        for sha in sorted(ignored):
            args += ["--ignore-rev", sha]
        args += [f"{oldest}..{base}" if oldest else base, "--", p]
        run = subprocess.run(args, capture_output=True, text=True)
        if run.returncode:
            continue
        line_sha, boundary, sha = {}, set(), None
        for line in run.stdout.splitlines():
            if line.startswith("\t"):
                continue
            words = line.split()
            if len(words) >= 3 and len(words[0]) == 40 and words[1].isdigit():
                sha = words[0]
                line_sha[int(words[2])] = sha
            elif words and words[0] == "boundary":
                boundary.add(sha)
        for t in found:
            start, end = t.lines
            shas = sorted(
                {s for n, s in line_sha.items() if start <= n <= end and s not in boundary and s != oldest}
            )
            out.extend((s, "lines", t.subject, p) for s in shas)
    return out


def counting_libgit2(repo, base, targets, oldest):
    found = libgit2_blamed(repo, base, targets, oldest)
    ignored = pr.base_files(repo, base).ignored
    lost["lines"] += len(found)
    lost["ignored"] += sum(sha in ignored for sha, *_ in found)
    return found


for name, blamed in (("libgit2", counting_libgit2), ("git CLI --ignore-rev", cli_blamed)):
    pr._blamed = blamed
    result = run_repository(path, 150, max_commits=50_000, settings=Settings())
    rows = result["tasks"]
    ms = sorted(r["ms"] for r in rows)
    print(
        f"{name}: hits {sum(r['knowing-pr'] for r in rows)}/{len(rows)}, frequent {sum(r['frequent'] for r in rows)}, "
        f"ms p50 {ms[len(ms) // 2]:.0f} p90 {ms[int(len(ms) * 0.9)]:.0f} max {ms[-1]:.0f}, {result['seconds']} s"
    )
    if name == "libgit2":
        print(f"  (sha, subject) pairs blamed: {lost['lines']}, of ignored commits: {lost['ignored']}")
