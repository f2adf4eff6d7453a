"""The rows ``bench/cochange.py`` saved for several repositories → the file model's prior and
settings chosen by leave-one-repository-out, and the file list's scores that come from them.

Usage::

    python bench/cochange_loo.py DIR [--tag run] [--write-priors] [--ship]

For each repository R (the outer loop), with the other repositories only:

1. **Settings.** Every candidate setting ``h`` (regularization towards the prior, the
   objective) is scored on each other repository R' (the inner loop) with a prior fitted on the
   repositories other than R and R': R' is ranked task by task with the model its index would
   have fitted on its own history before the task (the training rows its store held then,
   refitted as the index refits: after ``refit_every`` new tasks). ``h*`` = the best mean
   Recall@10 over the R' (ties: MRR, then the order of the grid).
2. **Prior.** Fitted on the training rows of every repository but R (each repository weighing
   the same), with ``h*``'s objective.
3. **Score.** R ranked with that prior and ``h*``: its Recall@5/@10 and MRR.

So no number of R comes from anything fitted or chosen on R. ``--write-priors`` writes
``DIR/prior-<R>.json`` (the prior and ``h*``) for the live run (``bench/cochange.py --prior``);
``--ship`` also fits the prior on every repository, with the setting chosen on all of them,
and prints it as the ``FILE_MODEL_PRIOR`` table.

The rows: ``DIR/<R>.<tag>.npz`` (``task<i>_values``/``_held``: every candidate of bench task i;
``train_<sha>_values``/``_held``: the training rows the store held) and ``DIR/<R>.<tag>.json``
(which training rows each task saw).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from knowing_pr.config import FileRankParams
from knowing_pr.history.filemodel import FileModel, TrainingTask, fit_model

#: (regularization, objective) settings tried; regularization None would mean the prior alone
GRID: tuple[tuple[float | None, str], ...] = tuple(
    (lam, objective) for objective in ("pairwise", "pointwise") for lam in (0.3, 1.0, 3.0, 10.0, 30.0)
)
#: the regularization of the prior's own fit on the corpus (many tasks: the data decide)
PRIOR_REGULARIZATION = 1.0
#: training tasks taken from each repository for a prior
PRIOR_TASKS_PER_REPO = 150


@dataclass
class Repo:
    name: str
    language: str
    tasks: list[TrainingTask]
    held_counts: list[int]
    training: dict[str, TrainingTask]
    seen: list[list[str]]


def load(directory: Path, tag: str) -> list[Repo]:
    repos = []
    for file in sorted(directory.glob(f"*.{tag}.json")):
        results = json.loads(file.read_text(encoding="utf-8"))
        arrays = np.load(file.with_suffix(".npz"))
        details = results["details"]
        tasks = [
            TrainingTask(arrays[f"task{i}_values"].astype(np.float64), arrays[f"task{i}_held"].astype(bool))
            for i in range(len(details))
        ]
        training = {
            key[len("train_") : -len("_values")]: TrainingTask(
                arrays[key].astype(np.float64), arrays[key.replace("_values", "_held")].astype(bool)
            )
            for key in arrays.files
            if key.startswith("train_") and key.endswith("_values")
        }
        repos.append(
            Repo(
                name=results["repo"],
                language=results["language"],
                tasks=tasks,
                held_counts=[len(d["held"]) for d in details],
                training=training,
                seen=[list(d["training"]) for d in details],
            )
        )
    return repos


def corpus_prior(repos: Sequence[Repo], objective: str) -> dict[str, float]:
    """The prior fitted on these repositories' training rows, each repository weighing the same."""
    tasks: list[TrainingTask] = []
    shares: list[float] = []
    for repo in repos:
        chosen = sorted(repo.training)[:PRIOR_TASKS_PER_REPO]
        picked = [repo.training[sha] for sha in chosen]
        tasks.extend(picked)
        shares.extend([1.0 / max(len(picked), 1)] * len(picked))
    # every repository weighs the same, and a task weighs 1 on average (the pull stays small)
    weights = [share * len(tasks) / len(repos) for share in shares]
    zero = {"bias": -3.0}
    model = fit_model(
        tasks, zero, regularization=PRIOR_REGULARIZATION, objective=objective, task_weights=weights
    )
    return dict(model.weights)


def rank_scores(
    repo: Repo, prior: Mapping[str, float], lam: float | None, objective: str
) -> dict[str, list[float]]:
    """Recall@5, Recall@10 and MRR of each task of ``repo``, ranked by the model its index would
    hold: the prior refitted on the training rows it saw, after every ``refit_every`` new ones."""
    params = FileRankParams()
    out: dict[str, list[float]] = {"recall5": [], "recall10": [], "mrr": []}
    model = FileModel(prior)
    fitted_on: set[str] = set()
    for task, held_count, seen in zip(repo.tasks, repo.held_counts, repo.seen, strict=True):
        if lam is not None and seen:
            new = set(seen) - fitted_on
            if not fitted_on or len(new) >= params.refit_every:
                rows = [repo.training[sha] for sha in seen if sha in repo.training]
                if len(rows) >= params.fit_min_tasks:
                    model = fit_model(rows, prior, regularization=lam, objective=objective)
                else:
                    model = FileModel(prior)
                fitted_on = set(seen)
        scores = model.logits(task.values)
        order = np.lexsort((np.arange(scores.size), -scores))
        held_ranks = np.flatnonzero(task.held[order]) + 1
        out["recall5"].append(float((held_ranks <= 5).sum()) / held_count)
        out["recall10"].append(float((held_ranks <= 10).sum()) / held_count)
        out["mrr"].append(1.0 / float(held_ranks[0]) if held_ranks.size else 0.0)
    return out


def means(scores: Mapping[str, list[float]]) -> dict[str, float]:
    return {key: float(np.mean(values)) if values else 0.0 for key, values in scores.items()}


def choose_setting(repos: Sequence[Repo], excluded: str | None) -> tuple[float | None, str]:
    """The grid setting with the best mean Recall@10 over the repositories but ``excluded``, each
    ranked with a prior fitted without it (and without ``excluded``)."""
    inner = [r for r in repos if r.name != excluded]
    best: tuple[float, float, int] | None = None
    chosen = GRID[0]
    priors: dict[tuple[str, str], dict[str, float]] = {}
    for position, (lam, objective) in enumerate(GRID):
        recall, mrr = [], []
        for held_out in inner:
            key = (held_out.name, objective)
            if key not in priors:
                priors[key] = corpus_prior([r for r in inner if r.name != held_out.name], objective)
            scored = means(rank_scores(held_out, priors[key], lam, objective))
            recall.append(scored["recall10"])
            mrr.append(scored["mrr"])
        candidate = (float(np.mean(recall)), float(np.mean(mrr)), -position)
        print(f"  setting {lam} {objective}: R@10 {candidate[0]:.4f} MRR {candidate[1]:.4f}", file=sys.stderr)
        if best is None or candidate > best:
            best, chosen = candidate, (lam, objective)
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory")
    parser.add_argument("--tag", default="run")
    parser.add_argument("--write-priors", action="store_true")
    parser.add_argument(
        "--ship", action="store_true", help="also fit and print the prior on every repository"
    )
    parser.add_argument("--only", action="append", default=[], help="outer repositories to run (default all)")
    args = parser.parse_args(argv)
    directory = Path(args.directory)
    repos = load(directory, args.tag)
    rows: list[dict[str, Any]] = []
    for repo in repos:
        if args.only and repo.name not in args.only:
            continue
        print(f"{repo.name}: choosing the setting on the other {len(repos) - 1}", file=sys.stderr)
        lam, objective = choose_setting(repos, repo.name)
        prior = corpus_prior([r for r in repos if r.name != repo.name], objective)
        scored = means(rank_scores(repo, prior, lam, objective))
        row = {
            "repo": repo.name,
            "language": repo.language,
            "regularization": lam,
            "objective": objective,
            **scored,
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.write_priors:
            payload = {
                "prior": prior,
                "regularization": lam if lam is not None else 1e9,
                "objective": objective,
                "chosen_without": repo.name,
            }
            (directory / f"prior-{repo.name}.json").write_text(
                json.dumps(payload, indent=1) + "\n", encoding="utf-8"
            )
    if rows:
        print(
            "overall R@5 {:.3f} R@10 {:.3f} MRR {:.3f}".format(
                *(float(np.mean([r[k] for r in rows])) for k in ("recall5", "recall10", "mrr"))
            )
        )
    if args.ship:
        lam, objective = choose_setting(repos, None)
        prior = corpus_prior(repos, objective)
        print(json.dumps({"prior": prior, "regularization": lam, "objective": objective}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
