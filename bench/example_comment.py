"""A clone of axios/axios → ``docs/example-comment.md`` (the comment knowing-pr posts for one of its
public commits, verbatim) and ``docs/example-comment.png`` (its first screen as GitHub shows it),
so that the example in the docs is always what the tool produces.

Usage::

    python bench/example_comment.py --clone AXIOS_CLONE [--docs docs] [--tools-dir DIR]

The commit is pinned (``COMMIT``, "feat: Add config for ignoring absolute URLs", which adds a
parameter to ``buildFullPath`` and leaves two of its callers as they were). The pack is built as
the GitHub Action builds it (``pr`` between the commit's parent and the commit, markdown, 8,000
tokens) in a scratch store; the screenshot comes from ``bench/render_comment.py`` (see its
docstring for the tools it installs on its first run).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))

REPOSITORY = "axios/axios"
COMMIT = "32c7bcc0f233285ba27dec73a4b1e81fb7a219b3"
TITLE = "feat: Add config for ignoring absolute URLs (#5902) (#6192)"
BUDGET = 8000

INTRO = f"""# Example: the comment knowing-pr posts on a pull request

This is the exact comment body knowing-pr produces for a real change of a public repository,
[{REPOSITORY}](https://github.com/{REPOSITORY}) commit `{COMMIT[:8]}` ("{TITLE}"), which adds an
`allowAbsoluteUrls` parameter to `buildFullPath` and leaves two of its callers as they were. It is made,
with its screenshot [example-comment.png](example-comment.png) (the first screen, 1000 x 900 px,
rendered like GitHub by `bench/render_comment.py`), by:

```sh
python bench/example_comment.py --clone AXIOS_CLONE --docs docs
```

which builds the pack as the GitHub Action does (`pr` from the commit's parent to the commit,
markdown, {BUDGET:,} tokens) and writes this file and the screenshot, so neither can drift from
what the tool does. The Action then creates or edits one comment carrying the hidden
`<!-- knowing-pr -->` marker.

---

"""


def comment_of(clone: Path) -> str:
    from knowing_pr.pipeline import PrRequest, build_pr_pack, open_workspace
    from knowing_pr.render import render_comment

    with tempfile.TemporaryDirectory() as tmp:
        ws = open_workspace(str(clone), db=str(Path(tmp) / "index.sqlite"), budget=BUDGET)
        pack = build_pr_pack(ws, PrRequest(base=f"{COMMIT}~1", head=COMMIT, fmt="markdown"))
        return render_comment(pack)


def screenshot(body: str, target: Path, tools_dir: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "example-comment.md"
        source.write_text(body, encoding="utf-8")
        command = [sys.executable, str(BENCH_DIR / "render_comment.py"), "--comment", str(source)]
        command += ["--out", tmp]
        if tools_dir:
            command += ["--tools-dir", tools_dir]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        shutil.copyfile(Path(tmp) / "example-comment-first-screen.png", target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clone", required=True, help=f"a clone of {REPOSITORY}")
    parser.add_argument("--docs", default=str(BENCH_DIR.parent / "docs"))
    parser.add_argument("--tools-dir", default=None)
    args = parser.parse_args(argv)
    body = comment_of(Path(args.clone))
    docs = Path(args.docs)
    (docs / "example-comment.md").write_text(INTRO + body, encoding="utf-8")
    screenshot(body, docs / "example-comment.png", args.tools_dir)
    print(f"wrote {docs / 'example-comment.md'} and {docs / 'example-comment.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
