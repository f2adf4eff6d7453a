"""``knowing-pr export``: the graph as JSON Lines (the contract), GraphML read back by networkx, DOT."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest

from knowing_pr.cli import main
from knowing_pr.config import IndexParams

NODE_FIELDS = {"type", "id", "kind", "name", "qualified_name", "file", "start_line", "end_line", "language"}
EDGE_FIELDS = {"type", "source", "target", "kind", "confidence", "rule"}


def _repo(make_repo):  # type: ignore[no-untyped-def]
    b = make_repo()
    b.write(
        "pkg/a.py",
        "def helper(x):\n    return x + 1\n\n\nclass Box:\n    def open(self):\n        return helper(2)\n",
    )
    b.write("pkg/b.py", "from pkg.a import helper\n\n\ndef use():\n    return helper(3)\n")
    b.commit("two modules")
    return b


def _records(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


def test_jsonl_has_every_node_and_edge_with_the_contract_fields(
    make_repo, capsys: pytest.CaptureFixture[str]
) -> None:
    b = _repo(make_repo)
    assert main(["export", "--repo", str(b.path)]) == 0
    records = _records(capsys.readouterr().out)
    nodes = [r for r in records if r["type"] == "node"]
    edges = [r for r in records if r["type"] == "edge"]
    assert all(set(r) == NODE_FIELDS for r in nodes)
    assert all(set(r) == EDGE_FIELDS for r in edges)
    assert records == nodes + edges, "nodes come first"
    by_name = {r["qualified_name"]: r for r in nodes}
    helper, use, box_open = by_name["pkg.a.helper"], by_name["pkg.b.use"], by_name["pkg.a.Box.open"]
    assert (helper["file"], helper["start_line"], helper["end_line"], helper["kind"]) == (
        "pkg/a.py",
        1,
        2,
        "function",
    )
    calls = {(e["source"], e["target"]): e for e in edges if e["kind"] == "calls"}
    assert calls[(use["id"], helper["id"])]["rule"] == "import"
    assert calls[(box_open["id"], helper["id"])]["rule"] == "same_file"
    assert all(0.0 <= float(e["confidence"]) <= 1.0 for e in edges)  # type: ignore[arg-type]
    ids = {r["id"] for r in nodes}
    assert all(e["source"] in ids and e["target"] in ids for e in edges)


def test_export_is_deterministic_and_matches_pack_ids(make_repo, capsys: pytest.CaptureFixture[str]) -> None:
    b = _repo(make_repo)
    assert main(["export", "--repo", str(b.path)]) == 0
    first = capsys.readouterr().out
    assert main(["export", "--repo", str(b.path)]) == 0
    assert capsys.readouterr().out == first
    assert main(["files", "pkg/b.py", "--repo", str(b.path), "--format", "json"]) == 0
    pack_ids = {s["id"] for s in json.loads(capsys.readouterr().out)["symbols"]}
    assert pack_ids and pack_ids <= {r["id"] for r in _records(first) if r["type"] == "node"}


def test_graphml_reads_back_with_networkx(
    make_repo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b = _repo(make_repo)
    out = tmp_path / "graph.graphml"
    assert main(["export", "--repo", str(b.path), "--format", "graphml", "--out", str(out)]) == 0
    assert main(["export", "--repo", str(b.path)]) == 0
    records = _records(capsys.readouterr().out)
    graph = nx.read_graphml(out)
    assert graph.number_of_nodes() == sum(r["type"] == "node" for r in records)
    assert graph.number_of_edges() == sum(r["type"] == "edge" for r in records)
    node = next(r for r in records if r["qualified_name"] == "pkg.a.helper")
    assert graph.nodes[node["id"]]["file"] == "pkg/a.py"
    assert graph.nodes[node["id"]]["start_line"] == 1
    use = next(r for r in records if r["qualified_name"] == "pkg.b.use")
    call = graph.edges[use["id"], node["id"]]
    assert (call["kind"], call["rule"], call["confidence"]) == (
        "calls",
        "import",
        IndexParams().confidence_import,
    )
    assert all(set(data) == {"kind", "confidence", "rule"} for _, _, data in graph.edges(data=True))


def test_dot_names_every_edge(make_repo, capsys: pytest.CaptureFixture[str]) -> None:
    b = _repo(make_repo)
    assert main(["export", "--repo", str(b.path), "--format", "dot"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("digraph knowing_pr {") and text.rstrip().endswith("}")
    assert main(["export", "--repo", str(b.path)]) == 0
    edges = sum(r["type"] == "edge" for r in _records(capsys.readouterr().out))
    assert text.count(" -> ") == edges
    assert text.count(" rule=") == edges and 'rule="import"' in text


@pytest.mark.parametrize("target", ["missing-dir/graph.jsonl", "."])
def test_bad_out_is_one_line_exit_2_and_writes_nothing(
    make_repo, tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    b = _repo(make_repo)
    out = tmp_path / target
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(["export", "--repo", str(b.path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("knowing-pr: error: --out") and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
