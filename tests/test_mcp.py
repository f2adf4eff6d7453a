"""``knowing-pr mcp`` through the official SDK's own client over stdio: initialize, list the tools,
call each one, bad calls answered as structured errors (the server keeps serving), and the
index caught up with HEAD before an answer."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from knowing_pr.mcp import Toolbox

T = TypeVar("T")
TOOLS = {
    "pack_pr",
    "pack_files",
    "pack_task",
    "explain_symbol",
    "replay_pack",
    "pack_diff",
    "repo_map",
    "index_stats",
}
APP = """\
def handler(request):
    return render(parse(request))


def parse(request):
    return request.strip()


def render(text):
    return f"<p>{text}</p>"
"""
TEST = """\
from src.app import handler


def test_handler():
    assert handler(" x ") == "<p>x</p>"
"""


def run_session(repo: Path, errlog: Path, work: Callable[[ClientSession], Awaitable[T]]) -> T:
    """Start ``python -m knowing_pr mcp --repo REPO``, initialize, run ``work``, close."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "knowing_pr", "mcp", "--repo", str(repo)],
        env={"PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "KNOWING_PR_DB": ""},
        cwd=str(repo),
    )

    async def main() -> T:
        with errlog.open("w", encoding="utf-8") as err:
            async with (
                stdio_client(params, errlog=err) as (read, write),
                ClientSession(read, write) as session,
            ):
                init = await session.initialize()
                assert init.server_info.name == "knowing-pr"
                assert init.capabilities.tools is not None
                return await work(session)

    return anyio.run(main)


@pytest.fixture
def project(repo: Any) -> dict[str, str]:
    repo.write("src/app.py", APP)
    repo.write("tests/test_app.py", TEST)
    base = repo.commit("base")
    repo.write("src/app.py", APP.replace("request.strip()", "request.strip().lower()"))
    head = repo.commit("head")
    return {"base": base, "head": head, "path": str(repo.path)}


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def test_initialize_list_and_call_every_tool_over_stdio(project: dict[str, str], tmp_path: Path) -> None:
    async def work(session: ClientSession) -> dict[str, Any]:
        listed = await session.list_tools()
        seen: dict[str, Any] = {"tools": {t.name: t for t in listed.tools}}
        calls = {
            "pack_pr": {"base": project["base"], "head": project["head"], "budget": 1500},
            "pack_pr_files": {"files": ["src/app.py"], "format": "json"},
            "pack_files": {"paths": ["src/app.py"], "budget": 1000},
            "pack_task": {"description": "parse the request text before rendering it", "format": "xml"},
            "explain_symbol": {"symbol": "parse", "task": "parse the request text"},
            "repo_map": {"profile": "feature", "budget": 800},
            "index_stats": {},
        }
        for key, arguments in calls.items():
            seen[key] = await session.call_tool("pack_pr" if key == "pack_pr_files" else key, arguments)
        root = seen["pack_pr"].structured_content["pack_root"]
        seen["replay_pack"] = await session.call_tool("replay_pack", {"pack_root": root, "verify": True})
        return seen

    seen = run_session(Path(project["path"]), tmp_path / "server.err", work)

    tools = seen["tools"]
    assert set(tools) == TOOLS
    assert all(tool.description and tool.input_schema["type"] == "object" for tool in tools.values())
    assert "budget" in tools["pack_pr"].input_schema["properties"]
    for key in ("pack_pr", "pack_pr_files", "pack_files", "pack_task"):
        result = seen[key]
        assert not result.is_error, text_of(result)
        data = result.structured_content
        assert re.fullmatch(r"[0-9a-f]{64}", data["pack_root"]) and data["pack_root"] in text_of(result)
        assert data["tokens_used"] <= data["token_budget"]
        assert len(text_of(result)) <= data["token_budget"] * 4
    assert seen["pack_pr"].structured_content["token_budget"] == 1500
    assert seen["pack_pr"].structured_content["commit"] == project["head"]
    assert "parse" in text_of(seen["pack_pr"])
    assert text_of(seen["pack_pr_files"]).lstrip().startswith("{")
    assert text_of(seen["pack_task"]).lstrip().startswith("<")
    why = seen["explain_symbol"]
    assert not why.is_error and re.fullmatch(r"[0-9a-f]{64}", why.structured_content["pack_root"])
    assert len(text_of(why)) <= 8000 * 4
    the_map = seen["repo_map"]
    assert not the_map.is_error and the_map.structured_content["tokens"] <= 800
    assert re.fullmatch(r"[0-9a-f]{64}", the_map.structured_content["graph_root"])
    stats = seen["index_stats"].structured_content
    assert stats["fresh"] is True and stats["commit"] == project["head"] and "store_path" not in stats
    replayed = seen["replay_pack"]
    assert not replayed.is_error and replayed.structured_content["verified"] is True
    assert text_of(replayed).startswith("verified: ")
    assert "Traceback" not in (tmp_path / "server.err").read_text(encoding="utf-8")


BAD_CALLS = [
    ("pack_pr", {"budget": "lots"}, "budget"),  # the SDK refuses the type
    ("pack_pr", {"budget": 10}, "budget must be a whole number of tokens"),
    ("pack_pr", {"files": ["../etc/passwd"]}, "not a repository-relative path"),
    ("pack_pr", {"head": "--upload-pack=evil"}, "not a commit or ref name"),
    ("pack_pr", {"format": "html"}, "format"),
    ("pack_files", {"paths": []}, "at least one path"),
    ("pack_task", {"description": "   "}, "description is required"),
    ("replay_pack", {"pack_root": "abc"}, "not a PackRoot"),
    ("replay_pack", {"pack_root": "0" * 64}, "no record of pack"),
    ("pack_diff", {"before": "abc", "after": "0" * 64}, "not a PackRoot"),
    ("pack_diff", {"before": "0" * 64, "after": "1" * 64}, "no record of pack"),
    ("explain_symbol", {"symbol": "parse"}, "task"),
    ("explain_symbol", {"symbol": "no_such_symbol_xyz", "task": "parse the request"}, "symbol not found"),
    ("no_such_tool", {}, "no_such_tool"),
]


def test_bad_calls_are_structured_errors_and_the_server_keeps_serving(
    project: dict[str, str], tmp_path: Path
) -> None:
    async def work(session: ClientSession) -> list[tuple[Any, Any]]:
        answers = []
        for tool, arguments, _ in BAD_CALLS:
            bad = await session.call_tool(tool, arguments)
            good = await session.call_tool("index_stats", {})
            answers.append((bad, good))
        return answers

    answers = run_session(Path(project["path"]), tmp_path / "server.err", work)

    for (tool, arguments, said), (bad, good) in zip(BAD_CALLS, answers, strict=True):
        assert bad.is_error and said in text_of(bad), (tool, arguments, text_of(bad))
        assert "Traceback" not in text_of(bad)
        if bad.structured_content:  # ours; the SDK's own refusals carry only the text
            assert set(bad.structured_content["error"]) == {"kind", "message", "hint"}
        assert not good.is_error
    assert "Traceback" not in (tmp_path / "server.err").read_text(encoding="utf-8")


def test_the_index_is_brought_up_to_head_before_answering(
    project: dict[str, str], repo: Any, tmp_path: Path
) -> None:
    async def work(session: ClientSession) -> tuple[Any, Any]:
        first = await session.call_tool("index_stats", {})
        repo.write("src/extra.py", "def extra():\n    return 1\n")
        later = repo.commit("more")
        second = await session.call_tool("pack_files", {"paths": ["src/extra.py"]})
        return first.structured_content, (later, second.structured_content)

    first, (later, second) = run_session(Path(project["path"]), tmp_path / "server.err", work)

    assert first["commit"] == project["head"]
    assert second["commit"] == later


def test_toolbox_errors_never_raise(tmp_path: Path) -> None:
    box = Toolbox(tmp_path / "not-a-repository")
    answer = box.index_stats()
    assert answer.is_error and answer.data["error"]["kind"] == "RepoError"
    assert box.pack_pr(budget=True).data["error"]["kind"] == "UsageError"  # type: ignore[arg-type]


def test_answers_are_worked_out_with_the_collector_paused_and_collected_after_every_few(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import gc

    from knowing_pr.mcp import tools

    monkeypatch.setattr(tools, "COLLECT_EVERY", 2)
    toolbox = tools.Toolbox(tmp_path)
    seen: list[bool] = []
    full: list[int] = []

    def fails() -> Any:
        seen.append(gc.isenabled())
        raise RuntimeError("boom")

    def collected(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            full.append(len(seen))

    gc.callbacks.append(collected)
    try:
        first = toolbox._answer(fails)
        assert first.is_error and "boom" in first.text and gc.isenabled()  # given back
        gc.disable()  # as in the server: no collector of its own between answers
        full.clear()
        try:
            toolbox._answer(fails)
            assert full == [2]  # the second answer is followed by a full collection
            assert not gc.isenabled()  # and the server's collector stays off
        finally:
            gc.enable()
    finally:
        gc.callbacks.remove(collected)
    assert seen == [False, False]


def test_a_session_that_packed_ends_the_server_cleanly(project: dict[str, str]) -> None:
    """The server's exit, which the SDK's client does not show: after a call that opened the
    store in a tool thread, closing the input ends the server with 0 and nothing on stderr."""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    call = {"name": "pack_pr", "arguments": {"base": project["base"], "head": project["head"]}}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "KNOWING_PR_DB": ""}
    index = [sys.executable, "-m", "knowing_pr", "index", "--repo", project["path"], "--quiet"]
    subprocess.run(index, env=env, capture_output=True, check=True)  # a store for the call to hold
    with subprocess.Popen(
        [sys.executable, "-m", "knowing_pr", "mcp", "--repo", project["path"]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=project["path"],
    ) as server:
        assert server.stdin is not None and server.stdout is not None and server.stderr is not None
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
        ):
            server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1
        answer = json.loads(server.stdout.readline())
        assert answer["id"] == 2 and not answer["result"].get("isError")
        server.stdin.close()
        assert server.wait(timeout=60) == 0
        assert server.stderr.read() == b""


def test_pack_diff_compares_two_recorded_pushes_over_stdio(repo: Any, tmp_path: Path) -> None:
    from pushes import build_base, push_1, push_2

    base = build_base(repo)
    first, second = push_1(repo), push_2(repo)

    async def work(session: ClientSession) -> tuple[Any, Any]:
        roots = []
        for head in (first, second):
            packed = await session.call_tool("pack_pr", {"base": base, "head": head})
            assert not packed.is_error, text_of(packed)
            roots.append(packed.structured_content["pack_root"])
        moved = await session.call_tool("pack_diff", {"before": roots[0], "after": roots[1]})
        same = await session.call_tool("pack_diff", {"before": roots[1], "after": roots[1], "format": "json"})
        return moved, same

    moved, same = run_session(repo.path, tmp_path / "server.err", work)

    assert not moved.is_error, text_of(moved)
    data = moved.structured_content
    assert data["symbols_newly_changed"] == [
        {"path": "src/view.py", "name": "render"},
        {"path": "tests/test_view.py", "name": "test_render_with_a_tag"},
    ]
    assert data["call_sites_newly_not_updated"] == [
        {"path": "src/page.py", "caller": "page", "callee": "render"}
    ]
    assert data["tests_added"] == [{"path": "tests/test_view.py", "name": "test_render_with_a_tag"}]
    assert data["files_newly_coupled"] == ["docs/view.md"]
    assert "Call sites newly not updated (1):\n  - `src/page.py` (`page` → `render`)" in text_of(moved)
    assert not same.is_error and same.structured_content["nothing_moved"] is True
    assert json.loads(text_of(same))["nothing_moved"] is True
