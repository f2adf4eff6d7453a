"""A ``why`` explanation (the JSON-able dict ``pipeline/why.py`` builds) → its human text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["describe_explanation"]


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "-" if value is None else str(value)


def describe_explanation(data: Mapping[str, Any]) -> str:
    """``why``'s human text."""
    lines = [f"task      {data['task'].strip()[:200]}"]
    symbol = data.get("symbol")
    if symbol:
        lines.append(
            f"symbol    {symbol['qualified_name']} ({symbol['kind']}) "
            f"{symbol['file']}:{symbol['start_line']}-{symbol['end_line']}"
        )
    else:
        lines.append(f"symbol    {data['query']}")
    lines.append(f"verdict   {data['verdict']}")
    if data.get("rank") is not None:
        lines.append(
            f"rank      {data['rank']} of {data['total_ranked']} ranked ({data['packed_count']} packed)"
        )
        lines.append(f"score     {_fmt(data['score'])}")
        for name, value in data.get("components", {}).items():
            lines.append(f"  {name:<14}{_fmt(value)}")
    if symbol:
        seed = "yes" if data.get("is_seed") else "no"
        lines.append(f"seed      {seed} (restart weight {_fmt(data.get('restart_weight'))})")
        if data.get("seed_summary"):
            lines.append(f"  found by {data['seed_summary']} (fused rank {_fmt(data.get('seed_rank'))})")
        lines.append(
            f"walk      RWR {_fmt(data.get('rwr'))} (normalised {_fmt(data.get('rwr_normalised'))}, "
            f"cutoff {_fmt(data.get('cutoff'))}), hops {_fmt(data.get('hops'))}"
        )
        lines.append(
            f"HITS      authority {_fmt(data.get('authority'))}, hub {_fmt(data.get('hub'))}"
            + ("" if data.get("in_hits") else " (outside the HITS subgraph)")
        )
        if data.get("equivalence_classes_of_symbol"):
            lines.append("classes   " + ", ".join(data["equivalence_classes_of_symbol"]))
        if data.get("is_test") and data.get("penalise_tests"):
            lines.append("note      a test symbol: its score is multiplied by the test penalty")
    keywords = data.get("keywords", {})
    lines.append(
        "keywords  "
        + "; ".join(
            f"{tier}: {', '.join(keywords.get(tier, [])) or '-'}"
            for tier in ("exact", "compounds", "components")
        )
    )
    if data.get("equivalence_classes"):
        lines.append("matched   " + ", ".join(m["name"] for m in data["equivalence_classes"]))
    if data.get("alternatives"):
        lines.append("also      " + ", ".join(a["qualified_name"] for a in data["alternatives"]))
    lines.append(f"pack      {data['pack_root']}")
    return "\n".join(lines)
