"""The results ``bench/cochange.py`` saved for several repositories (and, optionally, the
leave-one-repository-out replay of ``bench/cochange_loo.py``) → one Markdown table per
repository, language and overall, with the issue's targets checked.

Usage::

    python bench/cochange_table.py DIR [--tag run]                 # the live runs
    python bench/cochange_loo.py DIR > LOO.jsonl                   # one JSON line per repository
    python bench/cochange_table.py DIR --loo LOO.jsonl [--tag run] # files scored by the replay

Columns (Recall@10 / MRR) from ``DIR/<repo>.<tag>.json``: ``files`` (the ranked file list),
``symbols`` (the PR pack's order), ``symbols-before`` (the previous release's pack order),
``cochange`` and ``cochange+dir`` (the baselines). With ``--loo``, ``files`` is the replay's
score instead (the model its index would have fitted, pulled towards a prior fitted and a
setting chosen without the repository). For a live run to be leave-one-repository-out too, run
``bench/cochange.py`` with ``--prior DIR/prior-<repo>.json`` (``cochange_loo.py
--write-priors``). Rows per language and overall are means over repositories. Checked: files
R@10 ≥ cochange+dir on every repository; files R@10 ≥ 1.15 × cochange overall; files MRR ≥
0.50 overall.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from statistics import mean
from typing import Any

BASELINES = ("symbols", "symbols-before", "cochange", "cochange+dir")


def load_rows(directory: Path, loo: Path | None, tag: str) -> list[dict[str, Any]]:
    """One row per repository: the scores of ``files`` (live, or the replay's) and the others'."""
    replayed: dict[str, dict[str, Any]] = {}
    if loo is not None:
        for line in loo.read_text(encoding="utf-8").splitlines():
            if line.startswith("{"):
                scored = json.loads(line)
                replayed[scored["repo"]] = scored
    rows = []
    for file in sorted(directory.glob(f"*.{tag}.json")):
        run = json.loads(file.read_text(encoding="utf-8"))
        if loo is not None and run["repo"] not in replayed:
            continue
        methods = run["methods"]
        files = replayed.get(run["repo"], methods["files"])
        row: dict[str, Any] = {
            "repo": run["repo"],
            "language": run["language"],
            "tasks": len(run["details"]),
            "files": (files["recall10"], files["mrr"]),
        }
        for name in BASELINES:
            row[name] = (methods[name]["recall10"], methods[name]["mrr"])
        rows.append(row)
    return rows


def _mean_of(rows: Sequence[Mapping[str, Any]], key: str) -> tuple[float, float]:
    return mean(r[key][0] for r in rows), mean(r[key][1] for r in rows)


def _cells(values: Mapping[str, tuple[float, float]]) -> str:
    return " | ".join(f"{values[k][0]:.3f} / {values[k][1]:.3f}" for k in ("files", *BASELINES))


def table(rows: Sequence[Mapping[str, Any]]) -> str:
    header = (
        "| R@10 / MRR | files | symbols | symbols-before | cochange | cochange+dir | files ≥ cochange+dir |"
    )
    lines = [header, "|---|---|---|---|---|---|---|"]
    for row in sorted(rows, key=lambda r: (r["language"], r["repo"])):
        ok = row["files"][0] >= row["cochange+dir"][0]
        label = f"{row['repo']} ({row['language']}, {row['tasks']} tasks)"
        lines.append(f"| {label} | {_cells(row)} | {'yes' if ok else '**no**'} |")
    for language in sorted({r["language"] for r in rows}):
        members = [r for r in rows if r["language"] == language]
        means = {k: _mean_of(members, k) for k in ("files", *BASELINES)}
        lines.append(f"| **{language}** ({len(members)}) | {_cells(means)} | |")
    overall = {k: _mean_of(rows, k) for k in ("files", *BASELINES)}
    lines.append(f"| **overall** (mean of {len(rows)} repositories) | {_cells(overall)} | |")
    return "\n".join(lines)


def targets(rows: Sequence[Mapping[str, Any]]) -> str:
    below = [r["repo"] for r in rows if r["files"][0] < r["cochange+dir"][0]]
    files_r10, files_mrr = _mean_of(rows, "files")
    cochange_r10 = _mean_of(rows, "cochange")[0]
    ratio = files_r10 / cochange_r10 if cochange_r10 else float("inf")
    return "\n".join(
        [
            f"- R@10 ≥ cochange+dir on every repository: {'met' if not below else 'unmet: ' + ', '.join(below)}",
            f"- R@10 ≥ 1.15 × cochange overall: {ratio:.3f} × ({files_r10:.3f} vs {cochange_r10:.3f}): "
            + ("met" if ratio >= 1.15 else "unmet"),
            f"- MRR ≥ 0.50 overall: {files_mrr:.3f}: " + ("met" if files_mrr >= 0.5 else "unmet"),
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory")
    parser.add_argument("--loo", default=None, help="bench/cochange_loo.py's output: files scored by it")
    parser.add_argument("--tag", default="run")
    args = parser.parse_args(argv)
    rows = load_rows(Path(args.directory), Path(args.loo) if args.loo else None, args.tag)
    print(table(rows))
    print()
    print(targets(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
