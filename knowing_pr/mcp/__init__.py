"""``knowing-pr mcp``: the pack operations as Model Context Protocol tools over stdio.

Modules: ``tools`` (arguments → one bounded answer or a structured error; no MCP), ``server``
(the official ``mcp`` SDK's server with the eight tools registered; imported only when serving).
"""

from __future__ import annotations

from collections.abc import Callable

from knowing_pr.mcp.tools import Answer, Toolbox

__all__ = ["Answer", "Toolbox", "serve"]


def serve(
    repo: str = ".",
    *,
    db: str | None = None,
    config: str | None = None,
    warn: Callable[[list[str]], None] | None = None,
) -> int:
    """Serve the tools over stdio (the SDK is imported here, not when this package is)."""
    from knowing_pr.mcp.server import serve as serve_stdio

    return serve_stdio(repo, db=db, config=config, warn=warn)
