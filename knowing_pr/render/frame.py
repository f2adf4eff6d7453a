"""Pack → frame: the limits and the non-entry values every format renders, plus their worst case.

The frame is everything of a pack that is not a symbol entry. ``frame_cost`` renders it with
the worst-case values defined here (counts 19 digits long, 64-character hashes) before the
selection is known. Also shared by every format: the symbols in rendering order and the
packed edges in rank order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from knowing_pr.errors import UsageError
from knowing_pr.model import ChangeSummary, Pack, RankedFile, ScoredSymbol
from knowing_pr.render.safety import LINE_CAP_BYTES

#: stands in for any count not known before the selection (tokens used, dropped, edges)
WORST_COUNT = 10**19 - 1
WORST_HASH = "f" * 64


@dataclass(frozen=True)
class RenderLimits:
    """Sizes of rendered fields (UTF-8 bytes unless named otherwise) and of the edge reserve.

    The defaults keep every markdown line under ``safety.LINE_CAP_BYTES``.
    """

    name_bytes: int = 300
    path_bytes: int = 300
    signature_bytes: int = 400
    doc_bytes: int = 400
    text_bytes: int = 500
    revision_bytes: int = 100
    label_chars: int = 32
    diagram_max_edges: int = 40
    diagram_share: float = 0.1
    chars_per_token: float = 4.0
    cochange_max: int = 10
    comment_open_entries: int = 5
    #: call sites and tests the markdown summary lists (the rest are counted); a comment, fewer
    summary_shown: int = 8
    comment_shown: int = 5
    #: changed symbols a comment lists before folding the rest
    comment_changed_shown: int = 8
    #: characters of a call site's line shown in markdown
    call_text_chars: int = 72
    #: related symbols a PR comment lists (the markdown pack lists them all)
    related_shown: int = 10
    diagram_max_nodes: int = 12

    def __post_init__(self) -> None:
        header_bytes = self.name_bytes + self.path_bytes + 120
        longest = max(header_bytes, self.signature_bytes + 20, self.doc_bytes + 10, self.text_bytes + 20)
        if longest > LINE_CAP_BYTES:
            raise UsageError(
                f"render limits allow {longest}-byte lines, over the {LINE_CAP_BYTES}-byte cap",
                hint="lower name_bytes/path_bytes/signature_bytes/doc_bytes/text_bytes",
            )

    def edge_reserve_chars(self, token_budget: int) -> int:
        return max(int(token_budget * self.diagram_share * self.chars_per_token), 0)


@dataclass(frozen=True)
class Frame:
    """Everything of a pack that is not a symbol entry."""

    mode: str
    token_budget: int
    tokens_used: int
    pack_root: str
    graph_root: str
    commit: str | None
    inputs: Mapping[str, object]
    params: Mapping[str, object]
    cochange: Sequence[tuple[str, int, int]]
    dropped_count: int
    replay_command: str
    limits: RenderLimits = field(default_factory=RenderLimits)
    summary: ChangeSummary | None = None
    #: a PR comment (hidden lines, shorter lists) rather than the markdown pack
    comment: bool = False
    #: a PR pack's ranked file list (JSON and XML show it; known before the selection)
    files: Sequence[RankedFile] = ()


def limits_or_default(limits: RenderLimits | None) -> RenderLimits:
    return limits if limits is not None else RenderLimits()


def frame_of(pack: Pack, replay_command: str | None, limits: RenderLimits) -> Frame:
    return Frame(
        mode=pack.mode,
        token_budget=pack.token_budget,
        tokens_used=pack.tokens_used,
        pack_root=pack.pack_root,
        graph_root=pack.graph_root,
        commit=pack.commit,
        inputs=pack.inputs,
        params=pack.params,
        cochange=pack.cochange,
        dropped_count=len(pack.dropped),
        replay_command=replay_command or f"knowing-pr replay {pack.pack_root}",
        limits=limits,
        summary=pack.summary,
        files=pack.files,
    )


def worst_frame(
    *,
    mode: str,
    token_budget: int,
    inputs: Mapping[str, object],
    graph_root: str | None,
    commit: str | None,
    params: Mapping[str, object] | None,
    cochange: Sequence[tuple[str, int, int]],
    replay_command: str | None,
    limits: RenderLimits,
    summary: ChangeSummary | None = None,
    files: Sequence[RankedFile] = (),
) -> Frame:
    """The frame with the given values and the worst case for every value not known yet."""
    return Frame(
        mode=mode,
        token_budget=token_budget,
        tokens_used=WORST_COUNT,
        pack_root=WORST_HASH,
        graph_root=graph_root if graph_root is not None else WORST_HASH,
        commit=commit if commit is not None else WORST_HASH,
        inputs=inputs,
        params=params or {},
        cochange=cochange,
        dropped_count=WORST_COUNT,
        replay_command=replay_command or f"knowing-pr replay {WORST_HASH}",
        limits=limits,
        summary=summary,
        files=files,
    )


def ordered_symbols(symbols: Sequence[ScoredSymbol]) -> list[ScoredSymbol]:
    """Score descending; a stable sort keeps the packer's tie order; NaN sorts last."""
    return sorted(symbols, key=lambda sym: -sym.score if not math.isnan(sym.score) else math.inf)


def ranked_edges(
    symbols: Sequence[ScoredSymbol], edges: Sequence[tuple[str, str, str]]
) -> list[tuple[str, str, str]]:
    """Edges between packed symbols, deduplicated, the best-ranked endpoints first."""
    rank = {sym.node.id: index for index, sym in enumerate(symbols)}
    unique = {edge for edge in edges if edge[0] in rank and edge[1] in rank}
    return sorted(
        unique,
        key=lambda e: (min(rank[e[0]], rank[e[1]]), max(rank[e[0]], rank[e[1]]), e[2], e[0], e[1]),
    )
