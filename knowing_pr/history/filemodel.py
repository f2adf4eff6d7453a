"""Signal rows → a file's score (a logistic model over ``filesignals.SIGNALS``), and training
tasks (past commits: half given, the rest held out) → the model's weights, fitted by maximum a
posteriori logistic regression pulled towards a prior.

Score of a candidate with signal values ``x``: ``sigmoid(bias + w · x)``. The fit minimises

    Σ over the tasks of the task's loss  +  regularization / 2 · |w - prior|²

so a repository with little history keeps the prior (fitted on the development corpus) and one
with a long history moves as far as its own commits say. Two task losses:

- ``pairwise`` (RankNet; Burges et al. 2005): the mean over (held-out, other) candidate pairs of
  ``log(1 + exp(-(s_held - s_other)))``; the bias is then set by a one-dimensional fit so the
  score reads as a probability;
- ``pointwise``: the held-out files' and the others' mean log-losses, each half of the task.

L-BFGS from the prior (the loss is convex), no randomness: the same tasks give the same weights.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from knowing_pr.history.filesignals import SIGNALS

__all__ = ["BIAS", "FileModel", "TrainingTask", "fit_model"]

BIAS = "bias"
_DECIMALS = 4
_MEMORY = 10
_GRADIENT_TOLERANCE = 1e-6


@dataclass(frozen=True)
class TrainingTask:
    """One past commit as a ranking problem: its candidates' signal values and which of them it
    changed (the held-out files)."""

    values: npt.NDArray[np.float64]
    held: npt.NDArray[np.bool_]


@dataclass(frozen=True)
class FileModel:
    """Weights per signal name (``SIGNALS``) and a ``bias``; a missing name weighs 0."""

    weights: Mapping[str, float]

    def vector(self) -> npt.NDArray[np.float64]:
        return np.array([float(self.weights.get(name, 0.0)) for name in SIGNALS])

    @property
    def bias(self) -> float:
        return float(self.weights.get(BIAS, 0.0))

    def logits(self, values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        if values.size == 0:
            return np.zeros(values.shape[0])
        return _times(values, self.vector()) + self.bias

    def scores(self, values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Each row's score in (0, 1)."""
        return np.asarray(_sigmoid(self.logits(values)), dtype=np.float64)

    def contributions(self, values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """``w_j · x_j`` per row and signal: what each signal added to the logit."""
        return np.asarray(values * self.vector(), dtype=np.float64)

    def as_dict(self) -> dict[str, float]:
        """Rounded, names in ``SIGNALS`` order with the bias first, zeros left out."""
        out = {BIAS: round(self.bias, _DECIMALS)}
        for name, value in zip(SIGNALS, self.vector().tolist(), strict=True):
            if round(value, _DECIMALS) != 0.0:
                out[name] = round(value, _DECIMALS)
        return out


def fit_model(
    tasks: Sequence[TrainingTask],
    prior: Mapping[str, float],
    *,
    regularization: float,
    objective: str = "pairwise",
    start: Mapping[str, float] | None = None,
    max_iterations: int = 300,
    task_weights: Sequence[float] | None = None,
) -> FileModel:
    """The MAP weights for ``tasks`` (module docstring); the prior itself without a usable task.
    ``task_weights`` scales each task's loss (default 1 each)."""
    scales = list(task_weights) if task_weights is not None else [1.0] * len(tasks)
    kept = [
        (t, w)
        for t, w in zip(tasks, scales, strict=True)
        if t.held.any() and (~t.held).any() and t.values.shape[1] == len(SIGNALS)
    ]
    usable = [t for t, _ in kept]
    usable_weights = [w for _, w in kept]
    prior_model = FileModel(prior)
    if not usable:
        return FileModel(prior_model.as_dict())
    prior_vector = prior_model.vector()
    initial = FileModel(start).vector() if start else prior_vector
    lam = max(regularization, 1e-9)
    if objective == "pointwise":
        design, labels, weights = _pointwise_design(usable, usable_weights)
        center = np.append(prior_vector, prior_model.bias)
        x0 = np.append(initial, FileModel(start).bias if start else prior_model.bias)
        penalised = np.append(np.ones(len(SIGNALS)), 0.0)  # the bias is not pulled
    else:
        design, labels, weights = _pairwise_design(usable, usable_weights)
        center, x0, penalised = prior_vector, initial, np.ones(len(SIGNALS))

    beta = _minimise(design, labels, weights, center, penalised * lam, x0, max_iterations)
    if objective == "pointwise":
        vector, bias = beta[:-1], float(beta[-1])
    else:
        vector, bias = beta, _fitted_bias(usable, beta, prior_model.bias)
    fitted = {name: float(value) for name, value in zip(SIGNALS, vector.tolist(), strict=True)}
    fitted[BIAS] = bias
    return FileModel(FileModel(fitted).as_dict())


def _loss_and_gradient(
    design: npt.NDArray[np.float64],
    labels: npt.NDArray[np.float64],
    weights: npt.NDArray[np.float64],
    center: npt.NDArray[np.float64],
    pull: npt.NDArray[np.float64],
    beta: npt.NDArray[np.float64],
) -> tuple[float, npt.NDArray[np.float64]]:
    """Σ weights · log(1 + exp(-labels · design β)) + Σ pull/2 · (β - center)², and its gradient."""
    margin = labels * _times(design, beta)
    delta = beta - center
    value = float(np.sum(weights * np.logaddexp(0.0, -margin))) + 0.5 * float(np.sum(pull * delta * delta))
    gradient = np.einsum("ij,i->j", design, weights * -labels * _sigmoid(-margin)) + pull * delta
    return value, np.asarray(gradient, dtype=np.float64)


def _minimise(
    design: npt.NDArray[np.float64],
    labels: npt.NDArray[np.float64],
    weights: npt.NDArray[np.float64],
    center: npt.NDArray[np.float64],
    pull: npt.NDArray[np.float64],
    start: npt.NDArray[np.float64],
    max_iterations: int,
) -> npt.NDArray[np.float64]:
    """L-BFGS (Nocedal 1980; the last ``_MEMORY`` steps) with Armijo backtracking: matrix-vector
    products only, so no threaded matrix product competes for a small machine's cores."""
    beta = start.astype(np.float64).copy()
    value, gradient = _loss_and_gradient(design, labels, weights, center, pull, beta)
    steps: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], float]] = []
    for _ in range(max_iterations):
        if float(np.max(np.abs(gradient))) < _GRADIENT_TOLERANCE:
            break
        direction = -_two_loop(gradient, steps)
        slope = float(gradient @ direction)
        if slope >= 0:  # not a descent direction: start over along the gradient
            steps.clear()
            direction, slope = -gradient, -float(gradient @ gradient)
        size = 1.0
        while True:
            trial = beta + size * direction
            trial_value, trial_gradient = _loss_and_gradient(design, labels, weights, center, pull, trial)
            if trial_value <= value + 1e-4 * size * slope or size < 1e-8:
                break
            size /= 2
        if trial_value > value:
            break
        s, y = trial - beta, trial_gradient - gradient
        curvature = float(s @ y)
        if curvature > 1e-12:
            steps.append((s, y, 1.0 / curvature))
            del steps[:-_MEMORY]
        improvement = value - trial_value
        beta, value, gradient = trial, trial_value, trial_gradient
        if improvement <= 1e-10 * max(1.0, abs(value)):
            break
    return np.asarray(beta, dtype=np.float64)


def _two_loop(
    gradient: npt.NDArray[np.float64],
    steps: Sequence[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], float]],
) -> npt.NDArray[np.float64]:
    """The L-BFGS approximation of the inverse Hessian times ``gradient``."""
    q = gradient.copy()
    alphas = []
    for s, y, rho in reversed(steps):
        alpha = rho * float(s @ q)
        alphas.append(alpha)
        q -= alpha * y
    if steps:
        s, y, _ = steps[-1]
        q *= float(s @ y) / float(y @ y)
    for (s, y, rho), alpha in zip(steps, reversed(alphas), strict=True):
        q += (alpha - rho * float(y @ q)) * s
    return np.asarray(q, dtype=np.float64)


def _times(matrix: npt.NDArray[np.float64], vector: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``matrix @ vector`` without BLAS: on a small shared machine a threaded BLAS product of
    this size is ten times slower than a plain loop."""
    return np.asarray(np.einsum("ij,j->i", matrix, vector), dtype=np.float64)


def _sigmoid(z: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return np.asarray(np.exp(-np.logaddexp(0.0, -z)), dtype=np.float64)


def _pointwise_design(
    tasks: Sequence[TrainingTask], scales: Sequence[float]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Rows with a bias column, labels ±1, weights: each task's held-out files share 1/2 and
    its other candidates the other 1/2 (times the task's scale)."""
    rows, labels, weights = [], [], []
    for task, scale in zip(tasks, scales, strict=True):
        held = task.held
        rows.append(np.hstack([task.values, np.ones((held.size, 1))]))
        labels.append(np.where(held, 1.0, -1.0))
        weights.append(scale * np.where(held, 0.5 / held.sum(), 0.5 / (~held).sum()))
    return np.vstack(rows), np.concatenate(labels), np.concatenate(weights)


def _pairwise_design(
    tasks: Sequence[TrainingTask], scales: Sequence[float]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """One row per (held-out, other) pair of a task: the difference of their signal values,
    label +1, weight (the task's scale) / (pairs of the task)."""
    values = np.vstack([task.values for task in tasks])
    first, second, weights = [], [], []
    offset = 0
    for task, scale in zip(tasks, scales, strict=True):
        positive = offset + np.flatnonzero(task.held)
        negative = offset + np.flatnonzero(~task.held)
        first.append(np.repeat(positive, negative.size))
        second.append(np.tile(negative, positive.size))
        weights.append(np.full(positive.size * negative.size, scale / (positive.size * negative.size)))
        offset += task.held.size
    design = values[np.concatenate(first)] - values[np.concatenate(second)]
    return design, np.ones(design.shape[0]), np.concatenate(weights)


def _fitted_bias(tasks: Sequence[TrainingTask], beta: npt.NDArray[np.float64], start: float) -> float:
    """The bias that makes ``sigmoid(bias + w · x)`` a calibrated probability of being changed
    (Newton's method on the weighted pointwise log-loss, ``w`` fixed)."""
    z = np.concatenate([_times(t.values, beta) for t in tasks])
    y = np.concatenate([t.held.astype(np.float64) for t in tasks])
    bias = start
    for _ in range(25):
        p = _sigmoid(z + bias)
        gradient = float(np.sum(p - y))
        curvature = float(np.sum(p * (1.0 - p))) + 1e-9
        step = gradient / curvature
        bias -= step
        if abs(step) < 1e-6:
            break
    return float(bias)
