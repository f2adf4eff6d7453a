"""``knowing-pr mcp``: the pack operations as Model Context Protocol tools over stdio.

Modules: ``tools`` (arguments → one bounded answer or a structured error; no MCP), ``server``
(the official ``mcp`` SDK's server with the eight tools registered; imported only when serving).
"""

from __future__ import annotations

from knowing_pr.mcp.tools import Answer, Toolbox

__all__ = ["Answer", "Toolbox"]
