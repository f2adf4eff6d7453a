"""Pack → text: markdown (people and the PR comment), JSON (the DESIGN.md contract), XML.

Also the token costs the packer needs, so that the budget holds for the text actually shown:

- ``entry_text(sym, fmt)`` is the exact text of one symbol's entry in that format (for JSON,
  plus its ``",\\n"`` list separator, which the last entry does not carry);
  ``entry_cost`` = ceil(len(entry_text) / chars_per_token).
- ``frame_cost(fmt, mode=…, token_budget=…, inputs=…)`` bounds everything else: headings,
  summary, inputs, PackRoot and replay lines, the co-change list, and the edges. It is computed
  before the selection is known by rendering the frame with worst-case values (every section
  present, symbol counts as large as the budget, other counts 19 digits long, 64-character
  hashes, a full edge reserve).
- Edges (the mermaid diagram in markdown, the ``edges`` list in JSON and XML) get a reserve of
  ``diagram_share`` of the budget (at most ``diagram_max_edges`` edges); edges are taken in
  rank order while they fit, so the reserve is never exceeded.

Invariant (tested with hypothesis): whenever ``sum(entry_cost) + frame_cost <= budget``,
``ceil(len(render_pack(...)) / chars_per_token) <= budget``.

Every untrusted string goes through ``knowing_pr.render.safety`` before it reaches markdown.
Rendering is deterministic: packed order, sorted tie-breaks, fixed float formats, no clock.

Modules: ``frame`` (limits, the non-entry values and their worst case, edge ranking),
``markdown`` (entries, sections, mermaid diagram), ``structured`` (JSON and XML),
``formats`` (dispatch by format name, costs), ``comment`` (the PR comment and its cutting),
``safety`` (sanitising untrusted text). This module is only the public surface.
"""

from __future__ import annotations

from knowing_pr.render.comment import COMMENT_MARKER, hidden_lines, render_comment
from knowing_pr.render.formats import FORMATS, entry_cost, entry_text, fit_pack, frame_cost, render_pack
from knowing_pr.render.frame import RenderLimits
from knowing_pr.render.summary import fit_summary, left_out_chars, left_out_item

__all__ = [
    "COMMENT_MARKER",
    "FORMATS",
    "RenderLimits",
    "entry_cost",
    "entry_text",
    "fit_pack",
    "fit_summary",
    "frame_cost",
    "hidden_lines",
    "left_out_chars",
    "left_out_item",
    "render_comment",
    "render_pack",
]
