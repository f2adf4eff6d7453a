"""A repository → how much cyclic garbage a warm ``knowing-pr mcp`` answer leaves, per format:
what the server, which runs without the cycle collector (``cli``) and collects after every
``mcp.tools.COLLECT_EVERY`` answers, accumulates between its collections.

Usage::

    python bench/mcp_garbage.py --repo PATH [--answers 20] [--base HEAD~1] [--head HEAD]

Run it with the interpreter knowing-pr is installed in (``knowing-pr index`` the repository first).
In one process, the MCP toolbox answers ``pack_pr`` once per format to warm up; then, with the
collector off, ``--answers`` more times; ``gc.collect()`` then counts the unreachable objects they
left, divided by the number of answers. The same count is made for the JSON text of one entry
written 1,000 times by ``json.dumps(..., indent=2)`` and by ``render.jsontext.indented_json``
(the writer the JSON format uses), which shows where a JSON answer's cycles came from before.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
from collections.abc import Callable
from pathlib import Path


def cycles_left(work: Callable[[], object], times: int) -> float:
    """Unreachable objects per call of ``work``, counted with the collector off meanwhile."""
    gc.collect()
    gc.disable()
    try:
        for _ in range(times):
            work()
        return gc.collect() / times
    finally:
        gc.enable()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--answers", type=int, default=20)
    parser.add_argument("--base", default="HEAD~1")
    parser.add_argument("--head", default="HEAD")
    options = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from knowing_pr.mcp.tools import Toolbox
    from knowing_pr.render.jsontext import indented_json

    toolbox = Toolbox(options.repo)
    print(f"`pack_pr --base {options.base} --head {options.head}` on {options.repo.name}, warm\n")
    print("| format | unreachable objects per answer | peak RSS after, MB |")
    print("|---|---|---|")
    for fmt in ("markdown", "json", "xml"):

        def answer(fmt: str = fmt) -> object:
            return toolbox.pack_pr(base=options.base, head=options.head, format=fmt)

        first = answer()
        if getattr(first, "is_error", False):
            raise SystemExit(f"pack_pr failed: {getattr(first, 'text', first)}")
        per_answer = cycles_left(answer, options.answers)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"| {fmt} | {per_answer:.0f} | {peak_mb:.0f} |")
    entry = {"id": "a" * 32, "name": "parse", "score": 0.5, "lines": [1, 2], "flags": {"test": False}}
    standard = cycles_left(lambda: json.dumps(entry, ensure_ascii=False, indent=2), 1000)
    ours = cycles_left(lambda: indented_json(entry), 1000)
    print("\n| one entry's JSON text | unreachable objects per call |")
    print("|---|---|")
    print(f"| `json.dumps(indent=2)` | {standard:.0f} |")
    print(f"| `render.jsontext.indented_json` | {ours:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
