"""A repository → a Model Context Protocol server over stdio (the official ``mcp`` SDK, 2.x):
eight tools, each a thin adapter from the SDK's call to ``tools.Toolbox``.

The tools and what each answer carries (``structuredContent``; the text is what an agent reads):

- ``pack_pr``: a change (base/head, or files) → the pack, within the budget; PackRoot;
- ``pack_files``: paths → their symbols and direct callers; PackRoot;
- ``pack_task``: a task description → the code it needs; PackRoot;
- ``explain_symbol``: a symbol + a task → where and why it ranks; the task pack's PackRoot;
- ``replay_pack``: a PackRoot → the recorded pack, or with ``verify`` whether it still holds;
- ``pack_diff``: two PackRoots → what moved between the two packs, both rebuilt from their requests;
- ``repo_map``: a profile (+ a query) → CONTEXT.md within the budget; the graph root;
- ``index_stats``: what the index holds and whether it is at HEAD; the graph root.

Arguments the SDK cannot read (a budget that is not a number) and arguments we refuse (a budget
out of range, an unknown format) both come back as ``isError`` results with a message; the
server keeps running.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from knowing_pr import __version__
from knowing_pr.mcp.tools import MAX_BUDGET, MIN_BUDGET, Answer, Toolbox

__all__ = ["build_server", "serve"]

Budget = Annotated[
    int | None,
    Field(
        description=f"token budget of the answer ({MIN_BUDGET:,}–{MAX_BUDGET:,}; default: the repository's, 8,000)"
    ),
]
Format = Annotated[Literal["markdown", "json", "xml"], Field(description="how the pack is rendered")]

_INSTRUCTIONS = (
    "knowing-pr packs the code a change or a task touches into a token budget. Every pack has a "
    "PackRoot (a sha256 of its inputs, settings and selected symbols): the same PackRoot means the "
    "same context. The index is brought up to HEAD before each answer."
)


def _result(answer: Answer) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=answer.text)],
        structured_content=answer.data,
        is_error=answer.is_error,
    )


def build_server(toolbox: Toolbox) -> MCPServer[Any]:
    """The MCP server with the eight tools registered over ``toolbox``."""
    server: MCPServer[Any] = MCPServer(
        name="knowing-pr", version=__version__, instructions=_INSTRUCTIONS, log_level="WARNING"
    )

    @server.tool()
    def pack_pr(
        base: Annotated[
            str | None, Field(description="base revision (default: the merge base with the default branch)")
        ] = None,
        head: Annotated[str | None, Field(description="head revision (default: HEAD)")] = None,
        files: Annotated[
            list[str] | None, Field(description="changed repository-relative paths instead of a diff")
        ] = None,
        budget: Budget = None,
        task: Annotated[
            str | None, Field(description="extra task text, e.g. the pull request's title and body")
        ] = None,
        format: Format = "markdown",  # noqa: A002 - the name agents see
    ) -> CallToolResult:
        """The code a change touches (a pull request or a branch: base/head, or the changed files), ranked and
        packed into the token budget: changed symbols, their callers, what they rely on, tests to run."""
        return _result(toolbox.pack_pr(base, head, files, budget, task, format))

    @server.tool()
    def pack_files(
        paths: Annotated[list[str], Field(description="repository-relative paths")],
        budget: Budget = None,
        format: Format = "markdown",  # noqa: A002
    ) -> CallToolResult:
        """The symbols of these files plus their direct callers, packed into the token budget."""
        return _result(toolbox.pack_files(paths, budget, format))

    @server.tool()
    def pack_task(
        description: Annotated[
            str, Field(description="what needs doing: an issue, a bug report, a stack trace")
        ],
        budget: Budget = None,
        format: Format = "markdown",  # noqa: A002
    ) -> CallToolResult:
        """The code a task needs, ranked from the task's words, names and stack frames and packed into the budget."""
        return _result(toolbox.pack_task(description, budget, format))

    @server.tool()
    def explain_symbol(
        symbol: Annotated[str, Field(description="a qualified name, a plain name or path:line")],
        task: Annotated[str, Field(description="the task the symbol is ranked for")],
        budget: Budget = None,
    ) -> CallToolResult:
        """Where a symbol ranks for a task and why: its seeds, walk score, HITS, score components, or where it dropped out; an error when the index holds no such symbol."""
        return _result(toolbox.explain_symbol(symbol, task, budget))

    @server.tool()
    def replay_pack(
        pack_root: Annotated[str, Field(description="the PackRoot: 64 lowercase hex characters")],
        verify: Annotated[bool, Field(description="rebuild at the recorded commit and compare")] = False,
        pr: Annotated[
            str | None, Field(description="a pull request number or URL whose comments may carry the request")
        ] = None,
        format: Format = "markdown",  # noqa: A002
    ) -> CallToolResult:
        """A recorded pack by its PackRoot (from the store, git notes, or a pull request's comments); with verify,
        whether the code still yields it."""
        return _result(toolbox.replay_pack(pack_root, verify, pr, format))

    @server.tool()
    def pack_diff(
        before: Annotated[str, Field(description="the earlier pack's PackRoot")],
        after: Annotated[str, Field(description="the later pack's PackRoot")],
        pr: Annotated[
            str | None,
            Field(description="a pull request number or URL whose comments may carry the requests"),
        ] = None,
        format: Annotated[
            Literal["markdown", "json"], Field(description="how the comparison is written")
        ] = "markdown",  # noqa: A002
    ) -> CallToolResult:
        """What moved between two packs (both rebuilt from their recorded requests): symbols newly changed or no longer
        changed, call sites newly not updated or now updated, tests added to or dropped from the tests to run, files
        newly co-changed or no longer."""
        return _result(toolbox.pack_diff(before, after, pr, format))

    @server.tool()
    def repo_map(
        profile: Annotated[
            Literal["default", "debug", "feature", "architecture", "refactor"],
            Field(description="what the map favours"),
        ] = "default",
        query: Annotated[str | None, Field(description="words to favour")] = None,
        budget: Budget = None,
    ) -> CallToolResult:
        """A ranked map of the repository (CONTEXT.md): the files that matter most, summarised, within the budget."""
        return _result(toolbox.repo_map(profile, query, budget))

    @server.tool()
    def index_stats() -> CallToolResult:
        """What the index holds: its commit and whether that is HEAD, the graph root, counts by language, kind and edge type."""
        return _result(toolbox.index_stats())

    return server


def serve(
    repo: str = ".",
    *,
    db: str | None = None,
    config: str | None = None,
    warn: Callable[[list[str]], None] | None = None,
) -> int:
    """``knowing-pr mcp``: serve the tools over stdio until the client closes the connection. A bad
    ``--repo``, ``--db`` or ``--config`` is refused before serving (an input error, exit 2);
    ``warn`` is given the settings file's warnings (a removed setting it still sets)."""
    from knowing_pr.config import removed_setting_warnings
    from knowing_pr.pipeline import open_workspace

    ws = open_workspace(repo, db=db, config=config)
    if warn is not None:
        warn(removed_setting_warnings(ws.settings))
    toolbox = Toolbox(repo, db=db, config=config)
    try:
        build_server(toolbox).run("stdio")
    finally:
        toolbox.close()
    return 0
