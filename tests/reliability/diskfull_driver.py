"""F3 driver: a store on a tiny tmpfs that fills up during an index run → what the CLI and the
hook do, and the store copied out at each step for the oracle.

Run inside a private mount namespace (``unshare -rm python diskfull_driver.py …``; root can
run it directly), so the tmpfs disappears with the process:

    python diskfull_driver.py REPO OUT_DIR --base C1 [--tmpfs-kb 4096] [--leave-kb 0 8 64 …]

For each ``--leave-kb`` value: a store at C1 on a fresh tmpfs, then a filler file leaves
that many KiB free, then ``knowing-pr index`` (to HEAD) and ``knowing-pr hook run
post-commit`` run on the full disk; their exit codes and stderr go to ``OUT_DIR/result.json``
and the store is copied out (SQLite backup API) to ``OUT_DIR/full-<kb>.sqlite``; then the
filler is removed, the index is run again and copied to ``OUT_DIR/recovered-<kb>.sqlite``.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reliability_support import cli_command, cli_env  # noqa: E402


def backup(db: Path, target: Path) -> None:
    src = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


def fill(directory: Path, leave_kb: int) -> Path:
    """Write a filler file until the file system is full, then give back ``leave_kb`` KiB."""
    filler = directory / "filler"
    chunk = b"\0" * 4096
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        while True:
            try:
                if os.write(fd, chunk) < len(chunk):
                    break
            except OSError:
                break
    finally:
        os.close(fd)
    size = filler.stat().st_size
    os.truncate(filler, max(0, size - leave_kb * 1024))
    return filler


def run(args: list[str], cwd: Path, env: dict[str, str]) -> dict[str, object]:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)
    return {"code": proc.returncode, "stderr": proc.stderr[-2000:], "stdout": proc.stdout[-500:]}


def one_round(repo: Path, out: Path, base: str, tmpfs_kb: int, leave_kb: int) -> dict[str, object]:
    mnt = out / f"mnt-{leave_kb}"
    mnt.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={tmpfs_kb}k", "tmpfs", str(mnt)], check=True)
    try:
        db = mnt / "index.sqlite"
        env = cli_env(KNOWING_PR_DB=str(db), KNOWING_PR_HOOK_SYNC="1")
        setup = run(cli_command("index", "--quiet", "--rev", base), repo, env)
        if setup["code"] != 0:
            return {"leave_kb": leave_kb, "setup": setup}
        backup(db, out / f"before-{leave_kb}.sqlite")
        filler = fill(mnt, leave_kb)
        index = run(cli_command("index", "--quiet"), repo, env)
        hook = run(cli_command("hook", "run", "post-commit"), repo, env)
        filler.unlink()
        backup(db, out / f"full-{leave_kb}.sqlite")
        recovered = run(cli_command("index", "--quiet"), repo, env)
        backup(db, out / f"recovered-{leave_kb}.sqlite")
        leftovers = sorted(p.name for p in mnt.iterdir() if p.name.endswith(".writing"))
        return {
            "leave_kb": leave_kb,
            "setup": setup,
            "index": index,
            "hook": hook,
            "recovered": recovered,
            "markers": leftovers,
        }
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("repo", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--base", required=True)
    parser.add_argument("--tmpfs-kb", type=int, default=4096)
    parser.add_argument("--leave-kb", type=int, nargs="+", default=[0])
    args = parser.parse_args()
    args.repo, args.out = args.repo.resolve(), args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    results = [one_round(args.repo, args.out, args.base, args.tmpfs_kb, kb) for kb in args.leave_kb]
    (args.out / "result.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
