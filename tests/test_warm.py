"""A long-lived process (the MCP server) keeps a graph root's adjacency, walk matrix, recency,
diffs and parsed base blobs between rankings: a warm answer equals a cold one, and a new commit
(a new graph root) is never answered from the old one's values."""

from __future__ import annotations

from typing import Any

from knowing_pr import pipeline
from knowing_pr.git import repo as git_repo
from knowing_pr.graph import nodes
from knowing_pr.pipeline import answer, basedefs
from knowing_pr.rank import candidates, files, runnable, signals
from knowing_pr.rank.memo import Memo

APP = """\
def handler(request):
    return render(parse(request))


def parse(request):
    return request.strip()


def render(text):
    return f"<p>{text}</p>"


def unused(text):
    return text
"""


def forget_everything() -> None:
    for memo in (candidates._ADJACENCY, candidates._WALK_MATRICES, signals._RECENCY):
        memo.clear()
    git_repo._DIFFS.clear()
    basedefs._DEFINITIONS.clear()
    runnable._CASES.clear()
    answer._BLOBS.clear()
    files._INPUTS.clear()
    nodes._kept_refs.cache_clear()


def pack_json(ws: Any, request: Any) -> str:
    from knowing_pr.render import render_pack

    return render_pack(pipeline.build_pr_pack(ws, request), "json")


def test_a_warm_pack_equals_a_cold_one_and_a_new_commit_is_never_served_stale(repo: Any) -> None:
    repo.write("src/app.py", APP)
    repo.write("src/other.py", "from src.app import handler\n\n\ndef main():\n    return handler(' x ')\n")
    repo.commit("base")
    repo.write("src/app.py", APP.replace("def unused(text):\n    return text\n", ""))
    repo.commit("remove unused")
    ws = pipeline.open_workspace(repo.path)
    request = pipeline.PrRequest(base="HEAD~1", head="HEAD")

    forget_everything()
    cold = pack_json(ws, request)
    warm = pack_json(ws, request)

    assert warm == cold
    assert git_repo._DIFFS and basedefs._DEFINITIONS  # the diff and the base blob's definitions were kept
    repo.write("src/app.py", APP.replace("request.strip()", "request.strip().lower()"))
    repo.commit("lower")
    later = pack_json(ws, request)
    forget_everything()
    assert later == pack_json(ws, request) != warm


def test_memo_keeps_the_most_recently_used() -> None:
    memo = Memo(capacity=2)
    built: list[str] = []

    def build(key: str) -> str:
        built.append(key)
        return key.upper()

    assert [memo.get(k, lambda k=k: build(k)) for k in ("a", "b", "a", "c", "b", "a")] == list("ABACBA")
    assert built == ["a", "b", "c", "b", "a"]  # "b" was the least recent when "c" came
