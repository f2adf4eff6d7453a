"""Ranked files (``rank/tiers.py``) + their symbols and sources → CONTEXT.md, the repository map,
under a token budget: tier-1 files summarised (purpose, dependencies, types, function
signatures), tier 2 listed, tier 3 counted.

Every string from the repository goes through ``render/safety.py``: paths, names and
signatures as code spans that any backtick run cannot close, a file's purpose as inert prose
in a block quote. No line of the map starts with repository text: each starts with a marker
this module writes (``#``, ``-``, ``>``, or a fixed word), so a map that lands in a ``.pth``
file cannot run a docstring such as ``import os; os.system(…)``."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from knowing_pr.model import TYPE_KINDS, Node, SymbolKind
from knowing_pr.rank.tiers import FileRank
from knowing_pr.render.safety import inline_code, plain

__all__ = ["FileSummary", "purpose_from_source", "render_context", "summarise_file"]

_DOC_LINE = re.compile(r"^\s*(?:#!|#|//+|/\*+|\*+/?|--|;+)?\s?(.*?)\s*(?:\*/)?\s*$")


def purpose_from_source(text: str) -> str:
    """The first sentence of the file's leading docstring or comment block ('' when none)."""
    body = text.lstrip("\ufeff")
    stripped = body.lstrip()
    unprefixed = stripped[1:] if stripped[:1] in ("r", "R", "u", "U") else stripped
    for quote in ('"""', "'''"):
        if unprefixed.startswith(quote):
            end = unprefixed.find(quote, 3)
            return _first_sentence(unprefixed[3 : end if end > 0 else None])
    collected: list[str] = []
    for line in body.splitlines():
        if not line.strip():
            if collected:
                break
            continue
        if not re.match(r"^\s*(#|//|/\*|\*|--)", line) or line.startswith("#!"):
            if line.startswith("#!") or line.strip().startswith("# -*-"):
                continue
            break
        collected.append(_DOC_LINE.match(line).group(1) if _DOC_LINE.match(line) else line)  # type: ignore[union-attr]
    text = " ".join(c for c in collected if c)
    if re.search(r"copyright|licen[cs]e|spdx", text, re.IGNORECASE):
        return ""
    return _first_sentence(text)


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    match = re.search(r"(.+?[.!?])(\s|$)", flat)
    sentence = match.group(1) if match else flat
    return sentence[:200]


@dataclass(frozen=True)
class FileSummary:
    rank: FileRank
    purpose: str
    dependencies: tuple[str, ...]
    types: tuple[str, ...]
    functions: tuple[str, ...]


def _section(summary: FileSummary, *, limit: int) -> str:
    lines = [f"### {inline_code(summary.rank.path)} (score {summary.rank.score:.3f})", ""]
    if summary.purpose:
        lines.append(f"> {plain(summary.purpose)}")
        lines.append("")
    if summary.dependencies:
        lines.append("- Depends on: " + ", ".join(inline_code(d) for d in summary.dependencies[:limit]))
    if summary.types:
        lines.append("- Types: " + ", ".join(inline_code(t) for t in summary.types[:limit]))
    for signature in summary.functions[:limit]:
        lines.append(f"- {inline_code(signature)}")
    hidden = max(len(summary.functions) - limit, 0)
    if hidden:
        lines.append(f"- … and {hidden} more functions")
    return "\n".join(lines) + "\n"


def summarise_file(
    rank: FileRank, nodes: Sequence[Node], dependencies: Collection[str], source_text: str
) -> FileSummary:
    # the module's own words only: a function's docstring describes the function, not the file
    purpose = purpose_from_source(source_text)
    ordered = sorted(nodes, key=lambda n: (n.start_line, n.id))
    types = tuple(n.signature or n.name for n in ordered if n.kind in TYPE_KINDS)
    functions = tuple(n.signature or n.name for n in ordered if n.kind == SymbolKind.FUNCTION)
    return FileSummary(rank, purpose, tuple(sorted(dependencies)), types, functions)


def render_context(
    title: str,
    ranks: Sequence[FileRank],
    summaries: Mapping[str, FileSummary],
    *,
    profile: str,
    query: str | None,
    budget_tokens: int,
    chars_per_token: float,
    commit: str | None,
) -> str:
    """CONTEXT.md: tier-1 summaries, then the tier-2 list, then the tier-3 count, within budget."""
    budget_chars = int(budget_tokens * chars_per_token)
    tier1 = [r for r in ranks if r.tier == 1]
    tier2 = [r for r in ranks if r.tier == 2]
    tier3 = [r for r in ranks if r.tier == 3]
    shown_query = f", query {inline_code(query)}" if query else ""
    head = (
        f"# {plain(title)}\n\nRanked map of {len(ranks)} files at {(commit or 'the working tree')[:12]} "
        f"(profile {profile}{shown_query}): "
        f"tier 1 {len(tier1)}, tier 2 {len(tier2)}, tier 3 {len(tier3)}.\n\n"
    )
    forced = sum(1 for r in tier3 if r.forced)
    tail = f"## Tier 3\n\n{len(tier3)} files ({forced} tests, docs, examples, benchmarks or scripts).\n"
    parts = [head, "## Tier 1\n\n"]
    used = len(head) + len(parts[1]) + len(tail) + len("## Tier 2\n\n") + 80
    shown1 = 0
    for rank in tier1:
        summary = summaries.get(rank.path)
        if summary is None:
            continue
        for limit in (12, 6, 3, 0):
            text = _section(summary, limit=limit) + "\n"
            if used + len(text) <= budget_chars:
                parts.append(text)
                used += len(text)
                shown1 += 1
                break
        else:
            break
    if shown1 < len(tier1):
        note = f"… {len(tier1) - shown1} more tier-1 files did not fit the budget.\n\n"
        parts.append(note)
        used += len(note)
    parts.append("## Tier 2\n\n")
    shown2 = 0
    for rank in tier2:
        purpose = summaries[rank.path].purpose if rank.path in summaries else ""
        line = f"- {inline_code(rank.path)}" + (f" — {plain(purpose)}" if purpose else "") + "\n"
        if used + len(line) > budget_chars:
            break
        parts.append(line)
        used += len(line)
        shown2 += 1
    if shown2 < len(tier2):
        parts.append(f"- … and {len(tier2) - shown2} more\n")
    parts.append("\n" + tail)
    return "".join(parts)
