"""A change (paths) + a file → why the file stands where it does in the change's ranked file
list: its rank, score, reasons and evidence, every signal value with what its weight made of it,
and where the weights come from (pinned, fitted on this repository's history, or the prior)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from knowing_pr.history.filesignals import SIGNALS
from knowing_pr.pipeline.pr import files_at
from knowing_pr.pipeline.workspace import Workspace, ensure_fresh, normalize_paths
from knowing_pr.rank import load_adjacency
from knowing_pr.rank.files import MODEL_META, rank_files, with_file_weights
from knowing_pr.store.opening import open_store

__all__ = ["explain_file"]


def explain_file(ws: Workspace, changed: Sequence[str], path: str) -> dict[str, Any]:
    """The explanation of ``path``'s place in the file list of a change of ``changed``."""
    report = ensure_fresh(ws)
    paths = files_at(ws, report.commit or ws.repo.head_commit() or "", changed, option="--change")
    target = normalize_paths([path])[0]
    store, _ = open_store(ws.db_path)
    try:
        settings = with_file_weights(store, ws.settings)
        ranking = rank_files(store, load_adjacency(store), settings, paths)
        raw = store.get_meta(MODEL_META)
        model_meta = json.loads(raw) if raw else {}
    finally:
        store.close()
    weights = dict(ranking.model.weights)
    source = (
        "pinned in the settings"
        if ws.settings.files.weights
        else f"fitted on {model_meta.get('tasks', 0)} past commits of this repository"
        if model_meta.get("tasks")
        else "the prior (too little history of this repository to fit)"
    )
    data: dict[str, Any] = {
        "change": paths,
        "file": target,
        "weights": weights,
        "weights_from": source,
        "fitted_at": model_meta.get("fitted_at"),
        "candidates": len(ranking.order),
    }
    rank = next((i for i, (p, _) in enumerate(ranking.order, 1) if p == target), None)
    if rank is None:
        data.update(rank=None, verdict=_absent(target, paths))
        return data
    row = ranking.rows.paths.index(target)
    values = ranking.rows.values[row]
    contributions = ranking.model.contributions(ranking.rows.values[row : row + 1])[0]
    listed = next((f for f in ranking.files if f.path == target), None)
    data.update(
        rank=rank,
        score=ranking.order[rank - 1][1],
        listed=listed is not None,
        reasons=list(listed.reasons) if listed else [],
        evidence=listed.evidence if listed else "",
        signals={
            name: {"value": round(float(v), 6), "weight": weights.get(name, 0.0), "adds": round(float(c), 6)}
            for name, v, c in zip(SIGNALS, values.tolist(), contributions.tolist(), strict=True)
            if v != 0.0
        },
        bias=weights.get("bias", 0.0),
        verdict=(
            f"rank {rank} of {len(ranking.order)} candidates"
            + ("" if listed else f" (the list shows the first {settings.files.list_size})")
        ),
    )
    return data


def _absent(target: str, changed: Sequence[str]) -> str:
    if target in changed:
        return "part of the change itself: the list names the other files"
    return "not a candidate: no history, link, directory, name or content ties it to the change"
