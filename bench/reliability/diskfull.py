"""F3 long run: SQLITE_FULL injected ``--rounds`` times at different points of an incremental
index (a real tmpfs left with 0 … N KiB free) → exit codes, messages, hook exit codes and the
oracle on the store before and after recovery, as a markdown table.

Usage (needs ``unshare -rm``, or root)::

    python bench/reliability/diskfull.py [--rounds 50] [--files 60] [--tmpfs-kb 2048]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve()
TESTS = HERE.parents[2] / "tests" / "reliability"
sys.path[:0] = [str(HERE.parents[2]), str(TESTS)]

from crash_support import build_history  # noqa: E402
from reliability_support import Oracle  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--tmpfs-kb", type=int, default=2048)
    args = parser.parse_args()
    leave = [i * 8 for i in range(args.rounds)]  # 0, 8, 16 … KiB free: the failure moves through the run
    with tempfile.TemporaryDirectory(prefix="knowing-pr-diskfull-") as tmp:
        root = Path(tmp)
        repo = root / "repo"
        c1, c2 = build_history(repo, args.files)
        out = root / "out"
        subprocess.run(
            [
                "unshare",
                "-rm",
                sys.executable,
                str(TESTS / "diskfull_driver.py"),
                str(repo),
                str(out),
                "--base",
                c1,
                "--tmpfs-kb",
                str(args.tmpfs_kb),
                "--leave-kb",
                *map(str, leave),
            ],
            check=True,
        )
        oracle = Oracle(repo, root / "clean")
        results = json.loads((out / "result.json").read_text())
        failed_cleanly = succeeded = corrupt = hook_nonzero = tracebacks = not_recovered = markers = 0
        for r in results:
            kb = r["leave_kb"]
            code = r["index"]["code"]
            failed_cleanly += code == 1 and r["index"]["stderr"].startswith("knowing-pr: error:")
            succeeded += code == 0
            tracebacks += "Traceback" in r["index"]["stderr"] + r["hook"]["stderr"] + r["recovered"]["stderr"]
            hook_nonzero += r["hook"]["code"] != 0
            markers += bool(r["markers"])
            allowed = (c1, c2) if code == 0 else (c1,)
            corrupt += bool(oracle.problems(out / f"full-{kb}.sqlite", allowed))
            not_recovered += r["recovered"]["code"] != 0 or bool(
                oracle.problems(out / f"recovered-{kb}.sqlite", (c2,))
            )
    print(f"{len(results)} rounds, {args.tmpfs_kb} KiB tmpfs, free space {leave[0]}…{leave[-1]} KiB\n")
    print(
        "| rounds | failed cleanly (exit 1, message) | completed (space sufficed) |"
        " corrupt or changed stores | hook exits ≠ 0 | tracebacks | markers left | not recovered |"
    )
    print("|---|---|---|---|---|---|---|---|")
    print(
        f"| {len(results)} | {failed_cleanly} | {succeeded} | {corrupt} | {hook_nonzero} | {tracebacks} |"
        f" {markers} | {not_recovered} |"
    )
    return 1 if corrupt + hook_nonzero + tracebacks + not_recovered + markers else 0


if __name__ == "__main__":
    raise SystemExit(main())
