"""A git repository → what fitting the file model costs: its share of a full index, and its time
in each incremental update that follows (the hook path), commit by commit.

Usage::

    python bench/filefit_perf.py --repo PATH [--commits 40] [--inline-refit] [--json OUT.json]

1. A full index (in process, parser isolation off as in the other benchmarks) of the
   first-parent commit ``--commits`` before HEAD: its ``fit`` phase (the training rows of the
   newest ``files.fit_tasks`` tasks with the history before each, and the fit) against the
   run's total.
2. Then every following first-parent commit, one incremental index run each, as the
   post-commit hook runs it (``defer_refit``): the ``fit`` phase of each run (the recent
   commits kept) and then, as the hook's worker does once the store reflects HEAD, the deferred
   fit at the new head (``refit_if_due``, timed on its own: every head is fitted anew).
   ``--inline-refit``: the refit inside the index run instead (what ``knowing-pr index`` and a
   reader catching up do), the runs that refitted told apart.

Timings are the index run's own (``IndexReport.timings_ms``), wall clock on a shared machine;
each run's ``fit`` phase is also split (``FitReport``): extracting the new rows, and the refit
(reading the stored rows and fitting), and whether the cached training inputs (the file graph)
were rebuilt in that run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import knowing_pr.index.filefit as filefit
import knowing_pr.index.run as index_run
from knowing_pr.config import Settings
from knowing_pr.git import GitRepo
from knowing_pr.index import index_commit
from knowing_pr.index.filefit import MODEL_META, FitReport, refit_if_due
from knowing_pr.store import Store


def first_parents(repo: GitRepo, count: int) -> list[str]:
    """The newest ``count + 1`` first-parent commits, oldest first."""
    chain: list[str] = []
    current = repo.head_commit()
    while current is not None and len(chain) <= count:
        chain.append(current)
        parents = repo.parents(current)
        current = parents[0] if parents else None
    return chain[::-1]


def fitted_at(db: Path) -> str | None:
    with Store.open(db) as store:
        raw = store.get_meta(MODEL_META)
    return json.loads(raw).get("fitted_at") if raw else None


class FitProbe:
    """Records each index run's ``FitReport`` and whether it rebuilt the cached training inputs."""

    def __init__(self) -> None:
        self.reports: list[FitReport] = []
        self.rebuilt: list[bool] = []
        self._update = index_run.update_file_model
        self._inputs = filefit.training_inputs

    def install(self) -> None:
        def update(*args: object, **kwargs: object) -> FitReport:
            self.rebuilt.append(False)
            report = self._update(*args, **kwargs)  # type: ignore[arg-type]
            self.reports.append(report)
            return report

        def inputs(store: Store) -> object:
            if self.rebuilt:  # every fit reads the inputs from the rows (the head's file graph)
                self.rebuilt[-1] = True
            return self._inputs(store)

        index_run.update_file_model = update  # type: ignore[assignment]
        filefit.training_inputs = inputs  # type: ignore[assignment]


def deferred_refit(db: Path, settings: Settings) -> FitReport:
    """What the hook's worker does once the store reflects HEAD (``pipeline.refit_file_model``)."""
    with Store.open(db) as store, store.transaction():
        return refit_if_due(store, settings)


def measure(path: str, commits: int, inline_refit: bool) -> dict[str, object]:
    repo = GitRepo.open(path)
    settings = Settings()
    settings = dataclasses.replace(settings, index=dataclasses.replace(settings.index, isolate_parser=False))
    chain = first_parents(repo, commits)
    probe = FitProbe()
    probe.install()
    with tempfile.TemporaryDirectory(prefix="kpr-fitperf-") as tmp:
        db = Path(tmp) / "index.sqlite"
        full = index_commit(repo, settings, rev=chain[0], db_path=db, full=True)
        runs: list[dict[str, float | bool]] = []
        for sha in chain[1:]:
            report = index_commit(repo, settings, rev=sha, db_path=db, defer_refit=not inline_refit)
            fit = probe.reports[-1]
            idle = deferred_refit(db, settings) if not inline_refit else None
            runs.append(
                {
                    "fit_ms": report.timings_ms.get("fit", 0.0),
                    "total_ms": report.timings_ms.get("total", 0.0),
                    "refit": fit.refitted,
                    "extract_ms": fit.extract_ms,
                    "refit_ms": fit.fit_ms,
                    "inputs_rebuilt": probe.rebuilt[-1],
                    "deferred_refit_ms": idle.fit_ms if idle is not None and idle.refitted else 0.0,
                }
            )
        with Store.open(db) as store:
            model = json.loads(store.get_meta(MODEL_META) or "{}")
    fit_full = full.timings_ms.get("fit", 0.0)
    total_full = full.timings_ms.get("total", 0.0)
    fits = [float(r["fit_ms"]) for r in runs]
    refits = [float(r["fit_ms"]) for r in runs if r["refit"]]
    deferred = [float(r["deferred_refit_ms"]) for r in runs if r["deferred_refit_ms"]]
    return {
        "repository": Path(path).name,
        "full_total_ms": round(total_full, 1),
        "full_fit_ms": round(fit_full, 1),
        "full_fit_share": round(fit_full / total_full, 4) if total_full else 0.0,
        "full_phases_ms": {k: round(v, 1) for k, v in full.timings_ms.items()},
        "tasks": model.get("tasks"),
        "incremental_runs": len(runs),
        "incremental_fit_ms_p50": round(statistics.median(fits), 1) if fits else 0.0,
        "incremental_fit_ms_max": round(max(fits), 1) if fits else 0.0,
        "refit_runs": len(refits),
        "refit_fit_ms_max": round(max(refits), 1) if refits else 0.0,
        "deferred_refits": len(deferred),
        "deferred_refit_ms_max": round(max(deferred), 1) if deferred else 0.0,
        "runs": [{k: round(v, 1) if isinstance(v, float) else v for k, v in r.items()} for r in runs],
        "incremental_total_ms_p50": round(statistics.median(float(r["total_ms"]) for r in runs), 1)
        if runs
        else 0.0,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--commits", type=int, default=40)
    parser.add_argument("--inline-refit", action="store_true", help="refit inside the index run")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    result = measure(args.repo, args.commits, args.inline_refit)
    text = json.dumps(result, indent=2)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
