"""``why --change``'s explanation (the dict ``pipeline/whyfile.py`` builds) → its human text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["describe_file_explanation"]


def describe_file_explanation(data: Mapping[str, Any]) -> str:
    lines = [
        f"change    {', '.join(data['change'])}",
        f"file      {data['file']}",
        f"verdict   {data['verdict']}",
    ]
    if data.get("rank") is not None:
        lines.append(f"score     {data['score']:.6g} = sigmoid(bias {data['bias']:+.4g} + Σ weight × value)")
        if data.get("reasons"):
            lines.append(f"reasons   {', '.join(data['reasons'])}: {data['evidence']}")
        lines.append("signals   value × weight = adds")
        ranked = sorted(data["signals"].items(), key=lambda item: -abs(item[1]["adds"]))
        for name, entry in ranked:
            lines.append(
                f"  {name:<18}{entry['value']:>9.4g} × {entry['weight']:>+8.4g} = {entry['adds']:>+8.4g}"
            )
    lines.append(
        f"weights   {data['weights_from']}"
        + (f" (at {str(data['fitted_at'])[:12]})" if data.get("fitted_at") else "")
    )
    return "\n".join(lines)
