"""Byte spans from one syntax tree → how they nest: innermost containers, dotted qualified names.

Pure integer work, one sorted sweep each and no recursion, so a deeply nested file costs no
Python stack; ``knowing_pr.parse.syntax`` uses it to nest definitions and scope references.
"""

from __future__ import annotations

__all__ = ["innermost_spans", "nest_spans", "qualify_spans"]


def nest_spans(spans: list[tuple[int, int]]) -> list[int]:
    """Index of the innermost other span containing each half-open byte span, or -1.

    Spans must come from one syntax tree (nested or disjoint, never crossing); works in
    one sweep without recursion, so deeply nested files cost no Python stack.
    """
    order = sorted(range(len(spans)), key=lambda i: (spans[i][0], -spans[i][1]))
    parents = [-1] * len(spans)
    stack: list[int] = []
    for index in order:
        start, end = spans[index]
        while stack and spans[stack[-1]][1] <= start:
            stack.pop()
        while stack and spans[stack[-1]][1] < end:
            stack.pop()  # a crossing span (broken tree): it cannot contain this one
        if stack:
            parents[index] = stack[-1]
        stack.append(index)
    return parents


def innermost_spans(spans: list[tuple[int, int]], positions: list[int]) -> list[int]:
    """Index of the innermost span containing each byte position, or -1 (one sweep)."""
    order = sorted(range(len(spans)), key=lambda i: (spans[i][0], -spans[i][1]))
    result = [-1] * len(positions)
    stack: list[int] = []
    next_span = 0
    for position_index in sorted(range(len(positions)), key=positions.__getitem__):
        position = positions[position_index]
        while next_span < len(order) and spans[order[next_span]][0] <= position:
            index = order[next_span]
            while stack and spans[stack[-1]][1] <= spans[index][0]:
                stack.pop()
            stack.append(index)
            next_span += 1
        while stack and spans[stack[-1]][1] <= position:
            stack.pop()
        if stack:
            result[position_index] = stack[-1]
    return result


def qualify_spans(
    spans: list[tuple[int, int]], names: list[str], leaves: list[bool]
) -> list[tuple[str, str | None]]:
    """Named byte spans → (dotted qualified name, parent's qualified name or ``None``) each.

    Only non-leaf spans can enclose others; leaves (e.g. several constants declared by one
    statement, which share its span) are placed inside the innermost non-leaf span around
    their start. One sweep each, no recursion.
    """
    containers = [index for index, leaf in enumerate(leaves) if not leaf]
    container_parents = nest_spans([spans[index] for index in containers])
    parent_of = [-1] * len(spans)
    for position, index in enumerate(containers):
        parent = container_parents[position]
        parent_of[index] = containers[parent] if parent >= 0 else -1
    leaf_indexes = [index for index, leaf in enumerate(leaves) if leaf]
    leaf_parents = innermost_spans(
        [spans[index] for index in containers], [spans[index][0] for index in leaf_indexes]
    )
    for index, parent in zip(leaf_indexes, leaf_parents, strict=True):
        parent_of[index] = containers[parent] if parent >= 0 else -1
    qualified: list[str | None] = [None] * len(spans)
    for index in sorted(range(len(spans)), key=lambda i: (spans[i][0], -spans[i][1], leaves[i])):
        parent = parent_of[index]
        prefix = qualified[parent] if parent >= 0 else None
        qualified[index] = f"{prefix}.{names[index]}" if prefix else names[index]
    return [
        (str(qualified[index]), qualified[parent_of[index]] if parent_of[index] >= 0 else None)
        for index in range(len(spans))
    ]
