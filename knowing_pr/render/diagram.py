"""Packed symbols + the edges among them → a small mermaid flowchart of how the change connects.

- At most ``max_nodes`` (12) nodes, centred on the change: the changed symbols, then their
  callers and tests (linked to a changed node or a caller already chosen), then what the change
  uses (linked to a changed node); a symbol with no drawable edge is left out.
- No containment (``contains``, ``member_of``) or history (``co_changed_with``) edges: they
  say where code sits, not how it runs.
- One edge per pair of nodes (the strongest kind: calls, inheritance, uses, tests, imports),
  labelled in plain words.
- The centre highlighted (a change's own symbols; a task's finds in another colour); labels are the reader's names, made unique with their file name.
- No diagram when no edge is left.
The fenced text never exceeds the character ``reserve`` it is given.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from knowing_pr.model import ScoredSymbol
from knowing_pr.render.display import display_name
from knowing_pr.render.safety import code_block, mermaid_label

__all__ = ["EDGE_WORDS", "mermaid_diagram"]

#: edge kind → its words in the diagram, strongest first
EDGE_WORDS = {
    "calls": "calls",
    "extends": "extends",
    "implements": "implements",
    "inherits": "inherits",
    "references": "uses",
    "tests": "tests",
    "imports": "imports",
}
_STRENGTH = {kind: rank for rank, kind in enumerate(EDGE_WORDS)}
_ROLE_ORDER = {"changed": 0, "match": 0, "caller": 1, "test": 2, "callee": 3}
#: how the centre is highlighted: a change's own symbols, or what a task or named files found
_CENTRE_STYLES = {
    "changed": "classDef changed fill:#fff5b1,stroke:#9a6700,stroke-width:2px",
    "match": "classDef found fill:#ddf4ff,stroke:#0969da,stroke-width:2px",
}
_CENTRE_CLASSES = {"changed": "changed", "match": "found"}


def _pair_edges(
    ids: set[str], edges: Sequence[tuple[str, str, str]]
) -> dict[frozenset[str], tuple[str, str, str]]:
    """The strongest drawable edge of each unordered pair among ``ids``."""
    best: dict[frozenset[str], tuple[str, str, str]] = {}
    for source, target, kind in sorted(set(edges)):
        if kind not in EDGE_WORDS or source == target or source not in ids or target not in ids:
            continue
        pair = frozenset((source, target))
        if pair not in best or _STRENGTH[kind] < _STRENGTH[best[pair][2]]:
            best[pair] = (source, target, kind)
    return best


def _choose(
    symbols: Sequence[ScoredSymbol], pairs: dict[frozenset[str], tuple[str, str, str]], max_nodes: int
) -> list[ScoredSymbol]:
    """Up to ``max_nodes`` symbols, by role then rank: the changed symbols, then callers and tests
    linked to a changed symbol or a chosen caller, then other symbols linked to a changed one."""
    linked: dict[str, set[str]] = {}
    for pair in pairs:
        a, b = tuple(pair)
        linked.setdefault(a, set()).add(b)
        linked.setdefault(b, set()).add(a)
    order = sorted(
        (s for s in symbols if s.node.id in linked),
        key=lambda s: _ROLE_ORDER.get(s.reason, 4),
    )
    chosen: list[ScoredSymbol] = []
    chosen_ids: set[str] = set()
    centre_ids = {s.node.id for s in order if _ROLE_ORDER.get(s.reason, 4) == 0}
    callers: set[str] = set()
    progress = True
    while progress and len(chosen) < max_nodes:
        progress = False
        for sym in order:
            if sym.node.id in chosen_ids or len(chosen) >= max_nodes:
                continue
            role = _ROLE_ORDER.get(sym.reason, 4)
            anchors = centre_ids if role > 2 else centre_ids | callers
            near = linked[sym.node.id] & anchors
            if role == 0 or near:
                chosen.append(sym)
                chosen_ids.add(sym.node.id)
                if role == 1:
                    callers.add(sym.node.id)
                progress = True
                break
    return chosen


def _labels(chosen: Sequence[ScoredSymbol], label_chars: int) -> dict[str, str]:
    names = {sym.node.id: display_name(sym.node) for sym in chosen}
    counts: dict[str, int] = {}
    for name in names.values():
        counts[name] = counts.get(name, 0) + 1
    labels: dict[str, str] = {}
    used: set[str] = set()
    for sym in chosen:
        name = names[sym.node.id]
        if counts[name] > 1:
            name = f"{name} in {posixpath.basename(sym.node.path)}"
        label = mermaid_label(name, label_chars)
        suffix = 2
        while label in used:  # the number survives the cut to ``label_chars``
            label = mermaid_label(name, max(label_chars - len(str(suffix)) - 1, 1)) + f" {suffix}"
            suffix += 1
        used.add(label)
        labels[sym.node.id] = label
    return labels


def mermaid_diagram(
    symbols: Sequence[ScoredSymbol],
    edges: Sequence[tuple[str, str, str]],
    reserve: int,
    *,
    max_nodes: int = 12,
    label_chars: int = 40,
) -> str:
    """The fenced ``flowchart LR`` (module docstring), or ``""``."""
    pairs = _pair_edges({s.node.id for s in symbols}, edges)
    chosen = _choose(symbols, pairs, max_nodes)
    ids = {sym.node.id: f"n{index + 1}" for index, sym in enumerate(chosen)}
    drawn = [
        edge for pair, edge in sorted(pairs.items(), key=lambda item: sorted(item[0])) if pair <= ids.keys()
    ]
    if not drawn:
        return ""
    labels = _labels(chosen, label_chars)
    used_ids = {end for source, target, _ in drawn for end in (source, target)}
    centre = [s for s in chosen if s.reason in _CENTRE_STYLES and s.node.id in used_ids]
    for keep in range(len(drawn), 0, -1):
        kept = drawn[:keep]
        ends = [sym for sym in chosen if any(sym.node.id in (s, t) for s, t, _ in kept)]
        lines = ["flowchart LR"]
        lines += [f'  {ids[sym.node.id]}["{labels[sym.node.id]}"]' for sym in ends]
        lines += [f"  {ids[s]} -->|{EDGE_WORDS[k]}| {ids[t]}" for s, t, k in kept]
        end_ids = {sym.node.id for sym in ends}
        for reason, style in _CENTRE_STYLES.items():
            marked = [ids[sym.node.id] for sym in centre if sym.reason == reason and sym.node.id in end_ids]
            if marked:
                lines += [f"  {style}", f"  class {','.join(marked)} {_CENTRE_CLASSES[reason]}"]
        text = code_block("\n".join(lines), "mermaid")
        if len(text) <= reserve:
            return text
    return ""
