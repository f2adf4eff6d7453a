"""``knowing-pr why``: the score breakdown of a packed symbol, and the exact place where an
excluded one dropped out — on a real repository indexed for real."""

from __future__ import annotations

import dataclasses
import json

import pytest

from knowing_pr.cli import main
from knowing_pr.errors import SymbolNotFound
from knowing_pr.pipeline import (
    TaskRequest,
    Workspace,
    build_task_pack,
    explain_symbol,
    open_workspace,
    update_index,
)
from knowing_pr.render.why import describe_explanation

SESSION_PY = '''class SessionStore:
    """Stores sessions by id."""

    def load_session(self, sid):
        return self.fetch(sid)

    def fetch(self, sid):
        return self.decode(self.raw(sid))

    def raw(self, sid):
        return sid

    def decode(self, data):
        return data


def parse_token(text):
    """Parse a bearer token."""
    return text.split()
'''

VIEWS_PY = """from src.auth.session import SessionStore, parse_token


def login_view(request):
    token = parse_token(request)
    return SessionStore().load_session(token)


def logout_view(request):
    return SessionStore().fetch(request)
"""

INVOICE_PY = '''def total_invoice(lines):
    """Sum invoice lines."""
    return sum(lines)
'''

TASK = "fix `load_session` when the session store raises"


@pytest.fixture
def workspace(make_repo) -> Workspace:
    builder = make_repo()
    builder.write("src/auth/session.py", SESSION_PY)
    builder.write("src/auth/views.py", VIEWS_PY)
    builder.write("src/billing/invoice.py", INVOICE_PY)
    builder.commit("initial")
    update_index(builder.path)
    return open_workspace(builder.path)


def test_why_explains_an_included_symbol(workspace):
    _run = build_task_pack(workspace, TaskRequest(TASK))
    pack, _ = _run.pack, _run.analysis
    data = explain_symbol(workspace, TaskRequest(TASK), "load_session")
    assert data["status"] == "packed" and data["in_pack"]
    assert data["rank"] == 1
    packed = next(s for s in pack.symbols if s.node.name == "load_session")
    assert data["score"] == pytest.approx(packed.score)
    assert set(data["components"]) == {
        "blast",
        "confidence",
        "recency",
        "distance",
        "authority_adj",
        "hub_adj",
        "test_penalty",
        "walk_score",
        "seed_rank",
    }
    assert (
        data["components"]["seed_rank"] == 1.0
        and data["score"] == 1.0
        and data["components"]["walk_score"] > 0
    )
    assert data["is_seed"] and data["restart_weight"] == 1.0
    assert {"channel": "tiered", "tier": "exact", "via": "load_session"}.items() <= data["seed_channels"][
        0
    ].items()
    assert data["rwr"] > 0 and data["authority"] is not None and data["hub"] is not None
    assert data["keywords"]["exact"] == ["load_session"]
    text = describe_explanation(data)
    assert "in the pack, ranked 1" in text and "authority" in text and "tiered exact" in text


def test_why_says_a_disconnected_symbol_was_never_seeded_nor_reached(workspace):
    data = explain_symbol(workspace, TaskRequest(TASK), "total_invoice")
    assert data["status"] == "not_reached"
    assert data["verdict"] == "never seeded and not reached by the walk"
    assert not data["is_seed"] and data["rank"] is None and data["rwr"] == 0


def test_why_says_when_a_symbol_is_below_the_score_cutoff(workspace):
    strict = dataclasses.replace(
        workspace.settings, rank=dataclasses.replace(workspace.settings.rank, score_cutoff=0.99)
    )
    ws = dataclasses.replace(workspace, settings=strict)
    data = explain_symbol(ws, TaskRequest(TASK), "src.auth.session.SessionStore.decode")
    assert data["reached"] and not data["above_cutoff"]
    assert data["status"] == "below_cutoff"
    assert data["verdict"] == "reached but below the score cutoff"


def test_why_says_when_the_budget_cut_a_ranked_symbol(workspace):
    # the whole ranked file list first, then room for a few symbols only
    ws = dataclasses.replace(workspace, settings=workspace.settings.with_budget(380))
    _run = build_task_pack(ws, TaskRequest(TASK))
    pack, _ = _run.pack, _run.analysis
    assert pack.symbols and pack.dropped, "the budget must keep some and cut some"
    cut_id = pack.dropped[0][0]
    name = next(
        n
        for n in ("SessionStore", "fetch", "raw", "decode", "parse_token", "login_view", "logout_view")
        if explain_symbol(ws, TaskRequest(TASK), n)["symbol"]["id"] == cut_id
    )
    data = explain_symbol(ws, TaskRequest(TASK), name)
    assert data["status"] == "cut" and not data["in_pack"]
    assert data["verdict"] == f"ranked {data['rank']} but cut by the budget"
    assert data["rank"] > 1


def test_why_resolves_path_line_and_qualified_names_and_reports_unknown_symbols(workspace):
    by_line = explain_symbol(workspace, TaskRequest(TASK), "src/auth/session.py:8")
    assert by_line["symbol"]["qualified_name"] == "src.auth.session.SessionStore.fetch"
    by_qualified = explain_symbol(workspace, TaskRequest(TASK), "SessionStore.fetch")
    assert by_qualified["symbol"]["id"] == by_line["symbol"]["id"]
    with pytest.raises(
        SymbolNotFound, match="symbol not found: no symbol in the index matches 'no_such_symbol'"
    ):
        explain_symbol(workspace, TaskRequest(TASK), "no_such_symbol")


def test_why_cli_prints_text_or_json(workspace, capsys):
    repo = str(workspace.repo.workdir)
    assert main(["why", "fetch", "--task", TASK, "--repo", repo]) == 0
    out = capsys.readouterr().out
    assert "verdict" in out and "SessionStore.fetch" in out
    assert main(["why", "fetch", "--task", TASK, "--repo", repo, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["symbol"]["name"] == "fetch" and data["status"] in {"packed", "cut"}
