"""Repository clones → what libgit2's strict hash verification costs the reads an index makes: the
history walk (every commit of HEAD's history, parsed, as the mine walks it) and blob reads (the
text blobs of HEAD's tree, as the parse and the rename measure read them), each with the
verification on (libgit2's default) and off (``git.repo.configure_object_reads``), in fresh
processes taking turns, medians of ``--runs``.

Usage::

    nice -n 10 python bench/object_reads.py /path/to/clone [/path/to/clone ...] [--runs 5] [--blobs 3000]

Nothing is written to the clones.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

#: one measurement in a fresh process: argv clone, "on"/"off", blob count → JSON seconds
_SNIPPET = """
import gc, json, sys, time
gc.disable()
import pygit2
pygit2.settings.enable_strict_hash_verification(sys.argv[2] == "on")
repo = pygit2.Repository(sys.argv[1])
head = repo.head.target
sort = pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME
start = time.perf_counter()
commits = sum(1 for _ in repo.walk(head, sort))
walk = time.perf_counter() - start
blobs = []
stack = [repo[head].tree]
while stack and len(blobs) < int(sys.argv[3]):
    for entry in stack.pop():
        if entry.type_str == "tree":
            stack.append(repo[entry.id])
        elif entry.type_str == "blob" and entry.filemode != pygit2.enums.FileMode.LINK:
            blobs.append(entry.id)
odb = repo.odb
blobs = [blob for blob in sorted(blobs) if blob in odb][: int(sys.argv[3])]  # a clone may lack some
start = time.perf_counter()
size = sum(len(odb.read(blob)[1]) for blob in blobs)
read = time.perf_counter() - start
print(json.dumps({"commits": commits, "walk": walk, "blobs": len(blobs), "bytes": size, "read": read}))
"""


def measure(clone: Path, verify: str, blobs: int) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", _SNIPPET, str(clone), verify, str(blobs)],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clones", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--blobs", type=int, default=3000, help="at most this many blobs of HEAD's tree")
    args = parser.parse_args(argv)
    print("| repository | commits | walk on / off | ratio | blobs (MB) | read on / off | ratio |")
    print("|---|---|---|---|---|---|---|")
    for clone in args.clones:
        runs: dict[str, list[dict[str, float]]] = {"on": [], "off": []}
        for run in range(args.runs):
            for verify in ("on", "off") if run % 2 == 0 else ("off", "on"):  # who goes first alternates
                runs[verify].append(measure(clone, verify, args.blobs))
        walk = {v: statistics.median(r["walk"] for r in runs[v]) for v in runs}
        read = {v: statistics.median(r["read"] for r in runs[v]) for v in runs}
        first = runs["on"][0]
        print(
            f"| {clone.name} | {int(first['commits']):,} | {walk['on']:.3f} / {walk['off']:.3f} s"
            f" | {walk['off'] / walk['on']:.2f} | {int(first['blobs']):,} ({first['bytes'] / 1e6:.1f})"
            f" | {read['on']:.3f} / {read['off']:.3f} s | {read['off'] / read['on']:.2f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
